package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// RomMReport is where the daemon reports the cabinet's play sessions: set
// once the cabinet is paired with RomM (cabinet romm pair) and
// cabinet.romm.report_play is on.
type RomMReport struct {
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

func (r RomMReport) enabled() bool { return r.URL != "" && r.Token != "" && r.DeviceID != "" }

// rommReportInterval is how often the daemon looks for sessions RomM
// lacks and heartbeats the running game: a session reaches RomM's history
// within a minute of being logged (at once, when RomM is up: a logged
// session wakes the loop), and RomM's 90 s "now playing" never lapses.
const rommReportInterval = 30 * time.Second

// rommDeviceNote is what the status says of the cabinet's RomM device and
// of RomM's last failure (Daemon.mu).
type rommDeviceNote struct {
	text    string
	problem bool
	lastErr string
}

func (d *Daemon) setRomMNote(f func(*rommDeviceNote)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(&d.romm)
}

// rommLink is the reporting to one RomM (server, token, device): its
// client, the lookups it has made, its backoff, and the game it shows as
// playing.
type rommLink struct {
	cfg      RomMReport
	client   *romm.Client
	resolver *rommreport.FileResolver
	reporter *rommreport.Reporter
	act      activity
	again    *registration
}

// registration remembers, for one token, that the cabinet registered its
// device again: once per pairing, so RomM forgetting the new id too does
// not start a registration every round.
type registration struct {
	token string
	done  bool // registered again, or tried to
	said  bool // the second 404 was said
}

func (d *Daemon) newRomMLink(cfg RomMReport) (*rommLink, error) {
	c, err := d.rommClient(cfg)
	if err != nil {
		return nil, err
	}
	root := cfg.Root
	res := &rommreport.FileResolver{Lookup: rommreport.RomMLookup{Client: c, Platforms: platforms.Default().WithOverrides(cfg.PlatformMap)},
		Path:   func(p string) string { return filepath.Join(root, p) },
		Limits: romhash.Limits{MaxFileBytes: 256 << 20},
		Installed: func(rom string) (int, bool) {
			rec, err := install.Kept{DB: d.eng.store()}.InstallAt(rom)
			return rec.ROMID, err == nil && rec.RomM == cfg.URL && rec.ROMID > 0
		}}
	return &rommLink{cfg: cfg, client: c, resolver: res,
		reporter: &rommreport.Reporter{Store: rommreport.Marks{DB: d.eng.store()}, Post: rommreport.RomMPoster{Client: c, DeviceID: cfg.DeviceID},
			Resolve: res, Since: cfg.Since, Now: d.clock.Now}}, nil
}

// reportRomM drains the sessions RomM lacks at start, whenever a session is
// logged or a game starts or ends, and every interval, while reporting is
// configured; a failing RomM is retried after its backoff (rommreport).
func (d *Daemon) reportRomM(ctx context.Context) error {
	tick, tc := d.clock.NewTicker(rommReportInterval)
	defer tick.Stop()
	var link *rommLink
	again := &registration{}
	lastErr := ""
	end := func(ctx context.Context) {
		if link != nil {
			link.act.clear(ctx, link.client, link.cfg.DeviceID)
			link = nil
		}
	}
	defer func() { end(context.Background()) }() // the game's activity ends with the daemon
	for {
		cfg := d.config().RomM
		switch {
		case !cfg.enabled():
			end(ctx) // unpaired, or reporting turned off
		case link == nil || !reflect.DeepEqual(link.cfg, cfg):
			end(ctx)
			l, err := d.newRomMLink(cfg)
			if err != nil {
				d.log.Error().Err(err).Msg("RomM reporting off: the RomM client cannot be built")
				break
			}
			if again.token != cfg.Token { // paired again: a new registration may be needed
				again = &registration{token: cfg.Token}
			}
			l.again, link = again, l
		}
		if link != nil {
			if link.reporter.Due() {
				pass, err := link.reporter.Drain(ctx)
				switch {
				case err != nil && ctx.Err() == nil:
					if msg := err.Error(); msg != lastErr { // said once until it changes
						d.log.Warn().Err(err).Msg("RomM play sessions wait for the next try")
						lastErr = msg
						d.setRomMNote(func(n *rommDeviceNote) { n.lastErr = untrusted.Clean(msg, 300) })
					}
				case err == nil && lastErr != "":
					lastErr = ""
					d.setRomMNote(func(n *rommDeviceNote) { n.lastErr = "" })
				}
				if pass != (rommreport.Pass{}) {
					d.log.Info().Int("delivered", pass.Delivered).Int("unmatched", pass.Unmatched).Int("retrying", pass.Retrying).
						Msg("play sessions reported to RomM")
				}
			}
			link.act.keep(ctx, d, link)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		case <-d.eng.logged:
		case <-d.rommWake:
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

func (a *activity) keep(ctx context.Context, d *Daemon, l *rommLink) {
	snap := d.eng.snapshot()
	if !snap.Playing || snap.Current.Rom == "" {
		a.clear(ctx, l.client, l.cfg.DeviceID)
		return
	}
	if snap.Current.Rom != a.rom {
		a.clear(ctx, l.client, l.cfg.DeviceID)
		id, known, err := l.resolver.ROMID(ctx, snap.Current)
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
	err := l.client.Heartbeat(ctx, a.romID, l.cfg.DeviceID)
	switch {
	case err == nil:
		a.warned = false
	case errors.Is(err, romm.ErrDeviceUnknown):
		a.registerAgain(ctx, d, l)
	case !a.warned && ctx.Err() == nil:
		d.log.Warn().Err(err).Msg("RomM's now playing not updated")
		a.warned = true
	}
}

// registerAgain handles RomM's 404 for the cabinet's device (deleted in
// RomM's web UI, or a RomM restored from a backup): the cabinet registers
// itself once (RomM returns the existing device for the same MAC or
// hostname, else a new one) and records the id, which the daemon reads back
// as a configuration change. A second 404, or a failed registration, is
// said once and shown by `cabinet doctor`.
func (a *activity) registerAgain(ctx context.Context, d *Daemon, l *rommLink) {
	old := l.cfg.DeviceID
	if l.again.done {
		if !l.again.said {
			l.again.said = true
			msg := fmt.Sprintf("RomM does not know the cabinet's device %s, registered again already: RomM's now playing is off until you run `cabinet romm pair` again",
				untrusted.Clean(old, 60))
			d.log.Warn().Msg(msg)
			d.setRomMNote(func(n *rommDeviceNote) { n.text, n.problem = msg, true })
		}
		return
	}
	l.again.done = true
	id, err := l.client.RegisterDevice(ctx, l.cfg.Device)
	if err == nil && id == old {
		err = errors.New("RomM gave the same device id back")
	}
	if err == nil && id == "" {
		err = errors.New("RomM gave no device id")
	}
	if err == nil {
		err = pairing.Store{Dir: l.cfg.PairingDir}.SetDevice(id)
	}
	if err != nil {
		msg := fmt.Sprintf("RomM does not know the cabinet's device %s and registering it again failed (%s): RomM's now playing is off until you run `cabinet romm pair` again",
			untrusted.Clean(old, 60), untrusted.Clean(err.Error(), 200))
		d.log.Warn().Msg(msg)
		d.setRomMNote(func(n *rommDeviceNote) { n.text, n.problem = msg, true })
		l.again.said = true
		return
	}
	msg := fmt.Sprintf("RomM had forgotten the cabinet's device %s; the cabinet registered again as device %s (%s)",
		untrusted.Clean(old, 60), untrusted.Clean(id, 60), d.clock.Now().Format(time.RFC3339))
	d.log.Info().Msg(msg)
	d.setRomMNote(func(n *rommDeviceNote) { n.text, n.problem = msg, false })
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

// rommClient is the links' RomM client when the reporting speaks to RomM as the tools do (the
// same server and token: the pairing's, unless cabinet.romm.token names another identity),
// else one of its own.
func (d *Daemon) rommClient(cfg RomMReport) (*romm.Client, error) {
	if l := d.links(); l != nil && l.RomM != nil {
		if r := l.Settings.RomM; r.URL == cfg.URL && r.Token == cfg.Token && r.CAFile == cfg.CAFile {
			return l.RomM, nil
		}
	}
	return romm.New(romm.Config{URL: cfg.URL, Token: cfg.Token, CAFile: cfg.CAFile})
}
