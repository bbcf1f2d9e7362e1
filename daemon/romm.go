package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/rommreport"
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
}

func (r RomMReport) enabled() bool { return r.URL != "" && r.Token != "" && r.DeviceID != "" }

// rommReportInterval is how often the daemon looks for sessions RomM
// lacks: a session reaches RomM's history within a minute of being logged,
// and a failure waits its own backoff (rommreport).
const rommReportInterval = 30 * time.Second

// reportRomM drains the sessions RomM lacks at start and every interval,
// while reporting is configured.
func (d *Daemon) reportRomM(ctx context.Context) error {
	tick, tc := d.clock.NewTicker(rommReportInterval)
	defer tick.Stop()
	var cur RomMReport
	var resolver *rommreport.FileResolver
	var client *romm.Client
	lastErr := ""
	var act activity
	defer func() {
		if client != nil {
			act.clear(context.Background(), client, cur.DeviceID) // the game's activity ends with the daemon
		}
	}()
	for {
		cfg := d.config().RomM
		if cfg.enabled() {
			if client == nil || !reflect.DeepEqual(cur, cfg) {
				c, err := romm.New(romm.Config{URL: cfg.URL, Token: cfg.Token, CAFile: cfg.CAFile})
				if err != nil {
					d.log.Error().Err(err).Msg("RomM reporting off: the RomM client cannot be built")
					client = nil
				} else {
					client, cur = c, cfg
					root := cfg.Root
					resolver = &rommreport.FileResolver{Lookup: rommreport.RomMLookup{Client: c, Platforms: platforms.Default().WithOverrides(cfg.PlatformMap)},
						Path:   func(p string) string { return filepath.Join(root, p) },
						Limits: romhash.Limits{MaxFileBytes: 256 << 20}}
				}
			}
			if client != nil {
				r := &rommreport.Reporter{Store: d.eng.store(), Post: rommreport.RomMPoster{Client: client, DeviceID: cfg.DeviceID},
					Resolve: resolver, Since: cfg.Since, Now: d.clock.Now}
				pass, err := r.Drain(ctx)
				switch {
				case err != nil && ctx.Err() == nil:
					if msg := err.Error(); msg != lastErr { // said once until it changes
						d.log.Warn().Err(err).Msg("RomM play sessions wait for the next try")
						lastErr = msg
					}
				case err == nil:
					lastErr = ""
				}
				if pass != (rommreport.Pass{}) {
					d.log.Info().Int("delivered", pass.Delivered).Int("unmatched", pass.Unmatched).Int("retrying", pass.Retrying).
						Msg("play sessions reported to RomM")
				}
				act.keep(ctx, d, client, resolver, cfg.DeviceID)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		case <-d.eng.logged:
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

func (a *activity) keep(ctx context.Context, d *Daemon, c *romm.Client, r *rommreport.FileResolver, device string) {
	snap := d.eng.snapshot()
	if !snap.Playing || snap.Current.Rom == "" {
		a.clear(ctx, c, device)
		return
	}
	if snap.Current.Rom != a.rom {
		a.clear(ctx, c, device)
		id, known, err := r.ROMID(ctx, snap.Current)
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
	err := c.Heartbeat(ctx, a.romID, device)
	switch {
	case err == nil:
		a.warned = false
	case errors.Is(err, romm.ErrDeviceUnknown) && !a.warned:
		d.log.Warn().Err(err).Msg("RomM does not know this cabinet's device: pair again with `cabinet romm pair`")
		a.warned = true
	case !a.warned && ctx.Err() == nil:
		d.log.Warn().Err(err).Msg("RomM's now playing not updated")
		a.warned = true
	}
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
