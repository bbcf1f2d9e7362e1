// Package journal is the way of one event from EmulationStation to the broker, and the one
// place where events become persisted outcomes. Its queues are types side by side here:
//
//   - ES (or Batocera's launcher, configgen) runs the wrapper script for an event
//     (packaging/esscripts.go). While the daemon runs, the wrapper writes the event's argv into
//     the inbox, one file in a tmpfs folder (InboxDir, EncodeInbox), and exits: a shell's cost.
//   - Else it runs `cabinet hook` (hook/argv parses the argv into a tracker event), which hands
//     the event to the daemon over its socket (hook/socket) and waits for the ack, or, with no
//     daemon, records it alone (package hook's Runner).
//   - The daemon appends every event it takes, from the inbox or the socket, to its intake log
//     (IntakeLog): one fdatasync, then the ack, which means "persisted".
//   - Apply then runs events through the tracker (hook/tracker) against the state kept in the
//     store (hook/store) and records, in the same fsynced transaction, the new state, the logged
//     sessions, play time today (hook/playday) and every message to publish, keyed so that an
//     event applied twice counts once (Keyed).
//   - Owner is whoever holds the store: the daemon for its life, a hook running alone for a
//     moment. Before anything new it applies what waits, in order: the intake log a dead daemon
//     left, the spool (Spool: where a hook leaves an event while the store is busy) and the
//     inbox's leftovers. Deliver hands what the store queued to the MQTT link
//     (haentities/mqttlink) and marks what the broker acknowledged.
//
// So every way an event can take ends in Apply, and nothing acked or spooled is lost to a crash,
// a full disk or a busy store.
package journal

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/playday"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Rules are what Apply needs to know besides the events.
type Rules struct {
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
	// BatoceraConf is the file an achievement's hardcore setting is read
	// from when it is first applied (the configuration file: batocera.conf,
	// or CABINET_CONFIG's); "" reads none (hardcore off).
	BatoceraConf string
}

// Result is what one Apply did.
type Result struct {
	tracker.Output
	// Applied are the events applied for the first time (a duplicate key
	// is skipped), in the order given.
	Applied []Keyed
	// Reset is set when the stored tracker state could not be decoded and
	// tracking restarted from a blank state.
	Reset error
}

// Apply applies evs (none: a flush) to store at now, in one transaction.
// With publish false (the configgen hook, which never touches the network)
// time-sensitive events are left in the state for the next publisher.
func Apply(st *store.Store, r Rules, now tracker.Stamp, publish bool, evs []Keyed) (Result, error) {
	var res Result
	err := st.Update(func(tx *store.Tx) error {
		res = Result{}
		st, err := tracker.Decode(tx.TrackerState())
		if err != nil {
			res.Reset, st = err, tracker.New()
		}
		var all []tracker.Event
		for _, k := range evs {
			first, err := tx.Once(k.storeKey(), now.At)
			if err != nil {
				return err
			}
			if first {
				all = append(all, enrich(tx, k.Event))
				res.Applied = append(res.Applied, k)
			}
		}
		all = withHardcore(st, r, all)
		var out tracker.Output
		if publish {
			st, out = tracker.Apply(st, r.Tracker, now, all...)
		} else {
			st, out = tracker.Record(st, r.Tracker, now, all...)
		}
		out = withDetails(tx, out)
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
		if len(out.Logged) > 0 {
			if err := countToday(tx, now, out.Logged); err != nil {
				return err
			}
		}
		if err := logUnlocks(tx, out.Unlocked); err != nil {
			return err
		}
		if !r.Publishing {
			return nil
		}
		// A hook keeps the daemon's diagnostics and controls configs
		// (KeptTopics). The daemon records discovery once per settings.
		if !r.DiscoveryRecorded {
			if err := tx.RecordDiscovery(haentities.Discovery(r.Settings, now.At), now.At, haentities.KeptTopics(r.Settings)...); err != nil {
				return err
			}
		}
		msgs := out.Messages(r.Settings, now.At)
		if err := tx.Record(msgs...); err != nil {
			return err
		}
		if !r.Settings.Daemon && out.Snapshot.Online && len(all) > 0 {
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
func enrich(tx *store.Tx, ev tracker.Event) tracker.Event {
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

// countToday adds logged sessions to the play-time-today figure, in the
// transaction that logs them, whoever logs them (a hook alone, the
// daemon). Whether the clock is set is the daemon's to observe.
func countToday(tx *store.Tx, now tracker.Stamp, logged []haentities.Session) error {
	st, _ := playday.Decode(tx.PlayDay()) // unreadable: the day starts again, the sessions are kept
	m := playday.Moment{Wall: now.At, Boot: now.Boot, BootID: now.BootID}
	for _, sess := range logged {
		st = playday.Add(st, sess, m, time.Local)
	}
	return tx.SetPlayDay(playday.Encode(st))
}

// withDetails gives every session the output publishes ES's metadata of
// its game from the store's cache, so a hook (which may not call ES) and
// the daemon publish the same attributes. The tracker state keeps none of
// it: a game the cache learns later gets them at the next publication.
func withDetails(tx *store.Tx, out tracker.Output) tracker.Output {
	fill := func(s *haentities.Session) {
		if s.Rom == "" || s.Details != (haentities.GameDetails{}) {
			return
		}
		if n, ok := tx.Name(s.Rom); ok {
			s.Details = n.Details
		}
	}
	fill(&out.Snapshot.Current)
	fill(&out.Snapshot.Last)
	if len(out.Logged) > 0 {
		out.Logged = slices.Clone(out.Logged)
		for i := range out.Logged {
			fill(&out.Logged[i])
		}
	}
	if len(out.Events) > 0 {
		out.Events = slices.Clone(out.Events)
		for i := range out.Events {
			fill(&out.Events[i].Session)
		}
	}
	return out
}

// IsBusy reports whether err means another process owns the store.
func IsBusy(err error) bool { return errors.Is(err, store.ErrLocked) }
