package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
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
					resolver = &rommreport.FileResolver{Lookup: rommLookup{c: c, m: platforms.Default().WithOverrides(cfg.PlatformMap)},
						Path:   func(p string) string { return filepath.Join(root, p) },
						Limits: romhash.Limits{MaxFileBytes: 256 << 20}}
				}
			}
			if client != nil {
				r := &rommreport.Reporter{Store: d.eng.store(), Post: rommPoster{c: client, device: cfg.DeviceID},
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

// rommPoster sends sessions with the cabinet's device id.
type rommPoster struct {
	c      *romm.Client
	device string
}

func (p rommPoster) Post(ctx context.Context, s []rommreport.Session) ([]rommreport.Result, error) {
	in := make([]romm.PlaySession, len(s))
	for i, x := range s {
		in[i] = romm.PlaySession{ROMID: x.ROMID, Start: x.Start, End: x.End, Duration: x.Duration}
	}
	res, err := p.c.PostPlaySessions(ctx, p.device, in)
	if err != nil {
		return nil, err
	}
	out := make([]rommreport.Result, len(s))
	for i := range out {
		out[i] = rommreport.Result{Status: romm.SessionError, Detail: "RomM gave no result for it"}
	}
	for _, r := range res {
		if r.Index >= 0 && r.Index < len(out) {
			out[r.Index] = rommreport.Result{Status: r.Status, Detail: r.Detail}
		}
	}
	return out, nil
}

// rommLookup finds RomM ROMs for the reporter.
type rommLookup struct {
	c *romm.Client
	m *platforms.Map
}

func (l rommLookup) ByHash(ctx context.Context, crc, md5, sha1 string) (int, error) {
	r, err := l.c.ROMByHash(ctx, crc, md5, sha1)
	if errors.Is(err, romm.ErrNotFound) {
		return 0, rommreport.ErrUnknown
	}
	if err != nil {
		return 0, err
	}
	return r.ID, nil
}

// ByName searches the RomM platforms that map to folder for a ROM whose
// file is name (and size, when known).
func (l rommLookup) ByName(ctx context.Context, folder, name string, size int64) (int, error) {
	pl, err := l.c.Platforms(ctx)
	if err != nil {
		return 0, err
	}
	var ids []int
	for _, p := range pl {
		if f, ok := l.m.Folder(p.Slug, p.FSSlug, nil); ok && f == folder {
			ids = append(ids, p.ID)
		}
	}
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	if len(ids) == 0 || stem == "" {
		return 0, rommreport.ErrUnknown
	}
	page, err := l.c.SearchROMs(ctx, romm.SearchQuery{Term: stem, PlatformIDs: ids, Limit: 50})
	if err != nil {
		return 0, err
	}
	for _, r := range page.Items {
		if r.FSName == name && (size < 0 || r.FSSizeBytes == size) {
			return r.ID, nil
		}
	}
	return 0, rommreport.ErrUnknown
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
		_ = c.ClearHeartbeat(cctx, device) // RomM forgets it within 90 s anyway
		cancel()
	}
	a.rom, a.romID = "", 0
}
