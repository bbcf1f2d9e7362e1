package daemon

import (
	"context"
	"path/filepath"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// reportRomM reports to RomM (package rommreport's Loop) with the configuration in force, woken
// when a session is logged or a game starts or ends, and when the configuration changes.
func (d *Daemon) reportRomM(ctx context.Context) error {
	lp := &rommreport.Loop{Clock: d.clock, Log: d.log, Config: func() rommreport.Config { return d.config().RomM },
		Snapshot: func() haentities.Snapshot { return d.eng.snapshot() }, Logged: d.eng.logged, Wake: d.rommWake,
		Link: d.newRomMLink, Note: d.setRomMNote}
	return lp.Run(ctx)
}

func (d *Daemon) setRomMNote(f func(*rommreport.Note)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(&d.romm)
}

func (d *Daemon) newRomMLink(cfg rommreport.Config) (*rommreport.Link, error) {
	c, err := d.rommClient(cfg)
	if err != nil {
		return nil, err
	}
	res := d.romResolver(c, cfg.URL, cfg.Root, cfg.PlatformMap)
	return &rommreport.Link{Config: cfg, Client: c, Resolver: res,
		Reporter: &rommreport.Reporter{Store: rommreport.Marks{DB: d.eng.store()}, Post: rommreport.RomMPoster{Client: c, DeviceID: cfg.DeviceID},
			Resolve: res, Since: cfg.Since, Now: d.clock.Now}}, nil
}

// rommClient is the links' RomM client when the reporting speaks to RomM as the tools do (the
// same server and token: the pairing's, unless cabinet.romm.token names another identity),
// else one of its own.
func (d *Daemon) rommClient(cfg rommreport.Config) (*romm.Client, error) {
	if l := d.links(); l != nil && l.RomM != nil {
		if r := l.Settings.RomM; r.URL == cfg.URL && r.Token == cfg.Token && r.CAFile == cfg.CAFile {
			return l.RomM, nil
		}
	}
	return romm.New(romm.Config{URL: cfg.URL, Token: cfg.Token, CAFile: cfg.CAFile})
}

// romResolver finds a game's RomM id for the reporting and the save sync: its install record
// from this RomM first, else the file's hashes the way RomM computes them (under root), else its
// name within the system's platforms.
func (d *Daemon) romResolver(c *romm.Client, url, root string, platformMap map[string]string) *rommreport.FileResolver {
	return &rommreport.FileResolver{Lookup: rommreport.RomMLookup{Client: c, Platforms: platforms.Default().WithOverrides(platformMap)},
		Path:   func(p string) string { return filepath.Join(root, p) },
		Limits: romhash.Limits{MaxFileBytes: 256 << 20},
		Installed: func(rom string) (int, bool) {
			rec, err := install.Kept{DB: d.eng.store()}.InstallAt(rom)
			return rec.ROMID, err == nil && rec.RomM == url && rec.ROMID > 0
		}}
}
