package rommreport

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Config is where the cabinet's play sessions are reported: set once the cabinet is paired with
// RomM (cabinet romm pair) and cabinet.romm.report_play is on.
type Config struct {
	URL, Token, CAFile string
	DeviceID           string
	// Since is when the cabinet was paired: earlier sessions go only with
	// `cabinet romm backfill`.
	Since time.Time
	// Root is cabinet.paths.root: session ROM paths are read under it.
	Root        string
	PlatformMap map[string]string
	// PairingDir is where the pairing is kept (<state_dir>/romm): the
	// device id RomM gives when the cabinet registers again is recorded
	// there (and read back as a configuration change).
	PairingDir string
	// Device is how the cabinet describes itself when it registers again.
	Device romm.DeviceInfo
}

// Enabled reports whether reporting is configured.
func (r Config) Enabled() bool { return r.URL != "" && r.Token != "" && r.DeviceID != "" }

// Interval is how often the loop looks for sessions RomM
// lacks and heartbeats the running game: a session reaches RomM's history
// within a minute of being logged (at once, when RomM is up: a logged
// session wakes the loop), and RomM's 90 s "now playing" never lapses.
const Interval = 30 * time.Second

// Link is the reporting to one RomM (server, token, device): its client, the lookups it has
// made, its backoff, and the game it shows as playing.
type Link struct {
	Config   Config
	Client   *romm.Client
	Resolver *FileResolver
	Reporter *Reporter

	act   activity
	again *registration
}

// registration remembers, for one token, that the cabinet registered its
// device again: once per pairing, so RomM forgetting the new id too does
// not start a registration every round.
type registration struct {
	token string
	done  bool // registered again, or tried to
	said  bool // the second 404 was said
}

// Loop reports to RomM: it drains the sessions RomM lacks at start, whenever a session is logged
// or a game starts or ends, and every Interval, while reporting is configured (a failing RomM is
// retried after its backoff, Reporter), and keeps RomM's "now playing" for the running game.
type Loop struct {
	Clock clock.Clock
	Log   zerolog.Logger
	// Config is the reporting configuration in force.
	Config func() Config
	// Snapshot is what the tracker says now (the running game).
	Snapshot func() haentities.Snapshot
	// Logged delivers when a session is logged or a game starts or ends; Wake when the
	// configuration changed (paired again, unpaired).
	Logged, Wake <-chan struct{}
	// Link builds the reporting to one RomM.
	Link func(Config) (*Link, error)
	// Note tells the status what is known of the cabinet's device and of RomM's last failure.
	Note func(func(*Note))
}

// Note is what the status says of the cabinet's RomM device and of RomM's last failure.
type Note struct {
	Text    string
	Problem bool
	LastErr string
}

// Run reports until ctx ends; the game's "now playing" ends with it.
func (lp *Loop) Run(ctx context.Context) error {
	tick, tc := lp.Clock.NewTicker(Interval)
	defer tick.Stop()
	var link *Link
	again := &registration{}
	lastErr := ""
	end := func(ctx context.Context) {
		if link != nil {
			link.act.clear(ctx, link.Client, link.Config.DeviceID)
			link = nil
		}
	}
	defer func() { end(context.Background()) }() // the game's activity ends with the daemon
	for {
		cfg := lp.Config()
		switch {
		case !cfg.Enabled():
			end(ctx) // unpaired, or reporting turned off
		case link == nil || !reflect.DeepEqual(link.Config, cfg):
			end(ctx)
			l, err := lp.Link(cfg)
			if err != nil {
				lp.Log.Error().Err(err).Msg("RomM reporting off: the RomM client cannot be built")
				break
			}
			if again.token != cfg.Token { // paired again: a new registration may be needed
				again = &registration{token: cfg.Token}
			}
			l.again, link = again, l
		}
		if link != nil {
			if link.Reporter.Due() {
				pass, err := link.Reporter.Drain(ctx)
				switch {
				case err != nil && ctx.Err() == nil:
					if msg := err.Error(); msg != lastErr { // said once until it changes
						lp.Log.Warn().Err(err).Msg("RomM play sessions wait for the next try")
						lastErr = msg
						lp.Note(func(n *Note) { n.LastErr = untrusted.Clean(msg, 300) })
					}
				case err == nil && lastErr != "":
					lastErr = ""
					lp.Note(func(n *Note) { n.LastErr = "" })
				}
				if pass != (Pass{}) {
					lp.Log.Info().Int("delivered", pass.Delivered).Int("unmatched", pass.Unmatched).Int("retrying", pass.Retrying).
						Msg("play sessions reported to RomM")
				}
			}
			link.act.keep(ctx, lp, link)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		case <-lp.Logged:
		case <-lp.Wake:
		}
	}
}

// activity keeps RomM's "now playing" for the cabinet: a heartbeat for the
// running game at every round (RomM forgets it 90 s after the last one; a
// round is 30 s, and a game start or end acts at once), cleared when the
// game ends. A game RomM does not know is not reported.
type activity struct {
	rom    string // ROM path of the game heartbeated, "" when none
	romID  int
	warned bool
}

func (a *activity) keep(ctx context.Context, lp *Loop, l *Link) {
	snap := lp.Snapshot()
	if !snap.Playing || snap.Current.Rom == "" {
		a.clear(ctx, l.Client, l.Config.DeviceID)
		return
	}
	if snap.Current.Rom != a.rom {
		a.clear(ctx, l.Client, l.Config.DeviceID)
		id, known, err := l.Resolver.ROMID(ctx, snap.Current)
		if err != nil {
			return // tried again next round
		}
		a.rom, a.romID = snap.Current.Rom, 0
		if known {
			a.romID = id
		}
	}
	if a.romID == 0 {
		return
	}
	err := l.Client.Heartbeat(ctx, a.romID, l.Config.DeviceID)
	switch {
	case err == nil:
		a.warned = false
	case errors.Is(err, romm.ErrDeviceUnknown):
		a.registerAgain(ctx, lp, l)
	case !a.warned && ctx.Err() == nil:
		lp.Log.Warn().Err(err).Msg("RomM's now playing not updated")
		a.warned = true
	}
}

// registerAgain handles RomM's 404 for the cabinet's device (deleted in
// RomM's web UI, or a RomM restored from a backup): the cabinet registers
// itself once (RomM returns the existing device for the same MAC or
// hostname, else a new one) and records the id, which the daemon reads back
// as a configuration change. A second 404, or a failed registration, is
// said once and shown by `cabinet doctor`.
func (a *activity) registerAgain(ctx context.Context, lp *Loop, l *Link) {
	old := l.Config.DeviceID
	if l.again.done {
		if !l.again.said {
			l.again.said = true
			msg := fmt.Sprintf("RomM does not know the cabinet's device %s, registered again already: RomM's now playing is off until you run `cabinet romm pair` again",
				untrusted.Clean(old, 60))
			lp.Log.Warn().Msg(msg)
			lp.Note(func(n *Note) { n.Text, n.Problem = msg, true })
		}
		return
	}
	l.again.done = true
	id, err := l.Client.RegisterDevice(ctx, l.Config.Device)
	if err == nil && id == old {
		err = errors.New("RomM gave the same device id back")
	}
	if err == nil && id == "" {
		err = errors.New("RomM gave no device id")
	}
	if err == nil {
		err = pairing.Store{Dir: l.Config.PairingDir}.SetDevice(id)
	}
	if err != nil {
		msg := fmt.Sprintf("RomM does not know the cabinet's device %s and registering it again failed (%s): RomM's now playing is off until you run `cabinet romm pair` again",
			untrusted.Clean(old, 60), untrusted.Clean(err.Error(), 200))
		lp.Log.Warn().Msg(msg)
		lp.Note(func(n *Note) { n.Text, n.Problem = msg, true })
		l.again.said = true
		return
	}
	msg := fmt.Sprintf("RomM had forgotten the cabinet's device %s; the cabinet registered again as device %s (%s)",
		untrusted.Clean(old, 60), untrusted.Clean(id, 60), lp.Clock.Now().Format(time.RFC3339))
	lp.Log.Info().Msg(msg)
	lp.Note(func(n *Note) { n.Text, n.Problem = msg, false })
}

func (a *activity) clear(ctx context.Context, c *romm.Client, device string) {
	if a.rom == "" {
		return
	}
	if a.romID > 0 {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second) // at shutdown too: never long
		_ = c.ClearHeartbeat(cctx, device)                      // RomM forgets it within 90 s anyway
		cancel()
	}
	a.rom, a.romID = "", 0
}
