// Package journal is the one place where events become persisted outcomes:
// it runs events through the tracker against the state kept in the outbox
// store, and records — in the same fsynced transaction — the new state, the
// logged sessions and every message to publish. The hook (when no daemon
// runs) and the daemon both use it, so tracking is written once. It also owns
// the spool, where events wait while the store is busy.
package journal

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/outbox"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Journal applies events to a store.
type Journal struct {
	Store    *outbox.Store
	Settings haentities.Settings
	Tracker  tracker.Config
	// Publishing says whether MQTT is configured. Without it, states and
	// sessions are still kept (the history serves play_history), but no
	// message is queued for a broker nobody will ever drain.
	Publishing bool
	// DiscoveryRecorded skips recording the discovery configs: the daemon
	// records them once per settings, a hook (a new process each time)
	// every time.
	DiscoveryRecorded bool
}

// Result is what one Apply did.
type Result struct {
	tracker.Output
	// Ingested are the spooled events that were applied (remove their files).
	Ingested []Spooled
	// Reset is set when the stored tracker state could not be decoded and
	// tracking restarted from a blank state.
	Reset error
}

// Apply applies the spooled events and evs (none: a flush) at now, in one
// transaction. With publish false (the configgen hook, which never touches
// the network) time-sensitive events are left in the state for the next
// publisher.
func (j *Journal) Apply(now tracker.Stamp, publish bool, spooled []Spooled, evs ...tracker.Event) (Result, error) {
	var res Result
	err := j.Store.Update(func(tx *outbox.Tx) error {
		res = Result{}
		st, err := tracker.Decode(tx.TrackerState())
		if err != nil {
			res.Reset, st = err, tracker.New()
		}
		var all []tracker.Event
		for _, sp := range spooled {
			first, err := tx.Once(sp.key(), now.At)
			if err != nil {
				return err
			}
			if first {
				all = append(all, sp.Event)
			}
			res.Ingested = append(res.Ingested, sp)
		}
		all = append(all, evs...)
		for i := range all {
			all[i] = enrich(tx, all[i])
		}
		var out tracker.Output
		if publish {
			st, out = tracker.Apply(st, j.Tracker, now, all...)
		} else {
			st, out = tracker.Record(st, j.Tracker, now, all...)
		}
		res.Output = out
		b, err := tracker.Encode(st)
		if err != nil {
			return err
		}
		if err := tx.SetTrackerState(b); err != nil {
			return err
		}
		for _, sess := range out.Logged {
			if err := tx.AppendSession(sess); err != nil {
				return err
			}
		}
		if !j.Publishing {
			return nil
		}
		// A hook keeps the daemon's diagnostics and controls configs
		// (KeptTopics). The daemon records discovery once per settings.
		if !j.DiscoveryRecorded {
			if err := tx.RecordDiscovery(haentities.Discovery(j.Settings, now.At), now.At, haentities.KeptTopics(j.Settings)...); err != nil {
				return err
			}
		}
		msgs := out.Messages(j.Settings, now.At)
		if err := tx.Record(msgs...); err != nil {
			return err
		}
		if !j.Settings.Daemon && out.Snapshot.Online && len(all) > 0 {
			// Without the daemon nobody else says "online": after a power
			// cut the broker holds the daemon's last will ("offline") while
			// the store believes "online" was delivered long ago. Each hook
			// event says it again (one small retained message); a flush
			// with no event does not.
			for _, m := range msgs {
				if m.Kind == haentities.KindAvailability {
					return tx.Refresh(m)
				}
			}
		}
		return nil
	})
	if err != nil {
		return Result{}, fmt.Errorf("record event: %w", err)
	}
	return res, nil
}

// enrich prefers the names ES itself has for a game (cached in the store by
// whoever read ES's game lists) over the argv ES mangles.
func enrich(tx *outbox.Tx, ev tracker.Event) tracker.Event {
	if ev.Path != "" {
		if n, ok := tx.Name(ev.Path); ok {
			if n.Name != "" {
				ev.Name = n.Name
			}
			if ev.System == "" {
				ev.System = n.System
			}
			if ev.SystemName == "" {
				ev.SystemName = n.SystemName
			}
		}
	}
	if ev.System != "" && ev.SystemName == "" {
		if full, ok := tx.SystemName(ev.System); ok {
			ev.SystemName = full
		}
	}
	return ev
}

// TrackerConfig maps the cabinet.tracker.* keys.
func TrackerConfig(cfg *config.Config) tracker.Config {
	tc := tracker.DefaultConfig()
	tc.MinSession = time.Duration(cfg.Tracker.MinSessionSeconds) * time.Second
	tc.IgnoreScreensaverLaunches = cfg.Tracker.IgnoreScreensaverLaunches
	return tc
}

// Settings builds the Home Assistant settings: the persisted cabinet id
// (generated the first time), the names, and the versions read from the
// (possibly rooted) Batocera tree.
func Settings(cfg *config.Config, version string) (haentities.Settings, error) {
	id, err := cfg.EnsureCabinetID()
	if err != nil {
		return haentities.Settings{}, err
	}
	s := haentities.Settings{
		ID:              id,
		Name:            cfg.Name,
		DiscoveryPrefix: cfg.MQTT.DiscoveryPrefix,
		BaseTopic:       cfg.MQTT.BaseTopic,
		Version:         version,
		BatoceraVersion: BatoceraVersion(cfg),
		Model:           firstLine(cfg.Path("/usr/share/batocera/batocera.arch")),
	}
	return s, s.Validate()
}

// BatoceraVersion reads /usr/share/batocera/batocera.version ("41
// 2024/11/28 19:07") and returns its first word, "" when absent. The file,
// not the batocera-version command: the command inserts flag letters that
// change when Cabinet itself is installed.
func BatoceraVersion(cfg *config.Config) string {
	if f := strings.Fields(firstLine(cfg.Path("/usr/share/batocera/batocera.version"))); len(f) > 0 {
		return f[0]
	}
	return ""
}

func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}

// StorePath is the store file in the state dir.
func StorePath(cfg *config.Config) string { return cfg.StatePath() + "/cabinet.db" }

// SpoolDir is the spool folder in the state dir.
func SpoolDir(cfg *config.Config) string { return cfg.StatePath() + "/spool" }

// IsBusy reports whether err means another process owns the store.
func IsBusy(err error) bool { return errors.Is(err, outbox.ErrLocked) }
