// Package links builds, from one configuration, every client Cabinet talks through —
// EmulationStation, RetroArch, the household's RomM and ROMarr, the installer, the power
// actions, the system volume and the game lists' search index — in one place. The daemon
// builds one set, shares it between its MCP servers (normal and dry run), its ES watcher and
// names cache, the RomM reporter and the request follower, and builds a new set when the
// configuration changes; `cabinet mcp --standalone` and `cabinet call` without a daemon build
// theirs the same way. Nothing is dialled while building.
package links

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
)

// Settings are what the links are built from; cmd/cabinet maps the cabinet.* keys to them
// (cabinet.es.url, cabinet.retroarch.addr, the system paths under cabinet.paths.root,
// cabinet.name, the cabinet.mcp switches, cabinet.romm.*, cabinet.romarr.*, cabinet.library.*).
type Settings struct {
	ESURL         string
	RetroArchAddr string
	Paths         tools.Paths
	Name          string
	ReadOnly      bool
	DryRun        bool
	// Root is cabinet.paths.root: ES's paths are read under it.
	Root string
	// RomM and ROMarr are the household's library servers (empty URL: not
	// configured); AllowWrites is cabinet.library.allow_writes.
	RomM        RomMSettings
	ROMarr      ROMarrSettings
	AllowWrites bool
	// AllowInstall is cabinet.library.allow_install: library_install and
	// library_uninstall, with the install lock file InstallLock.
	AllowInstall bool
	// MaxInstallBytes is cabinet.library.max_install_bytes (0: the installer's default).
	MaxInstallBytes int64
	InstallLock     string
	// Audio is batocera-audio's path: batocera_set_volume when it is
	// there.
	Audio string
	// Power is cabinet.mcp.power: batocera_power (restart ES, reboot, shut
	// down, as ES's Quit menu), refused while an install holds InstallLock.
	// Never in read-only mode.
	Power bool
	// NoRateLimits lifts the tools' rate limits: benchmarks only (cabinet serve with
	// CABINET_BENCH_NO_RATE_LIMITS=1).
	NoRateLimits bool
}

// RomMSettings are cabinet.romm.*, and the pairing (`cabinet romm pair`).
type RomMSettings struct {
	URL, Token, CAFile string
	PlatformMap        map[string]string
	// DeviceID is RomM's id of the cabinet when it is paired with this
	// RomM, "" when not.
	DeviceID string
}

// ROMarrSettings are cabinet.romarr.*.
type ROMarrSettings struct{ URL, APIKey string }

// Links are the clients of one configuration.
type Links struct {
	Settings  Settings
	ES        *es.Client
	RetroArch *retroarch.Client
	// RomM and ROMarr are nil when their URL is not set.
	RomM   *romm.Client
	ROMarr *romarr.Client
	// Platforms maps RomM's platforms to Batocera's folders (cabinet.romm.platform_map).
	Platforms *platforms.Map
	// Library is the library as the tools see it.
	Library tools.Library
	// Installs are the install records Build was given; Installer is nil without
	// cabinet.library.allow_install, a RomM, or those records.
	Installs  install.Records
	Installer *install.Installer
	// Power is nil without cabinet.mcp.power, or in read-only mode.
	Power *power.Runner
	// Volume is nil when the cabinet has no batocera-audio.
	Volume *sysaudio.Audio
	// Games is the game lists' search index every tools server over these links shares.
	Games *tools.Games
	// ResolvePath maps a path ES reports to the file on this machine (cabinet.paths.root);
	// nil: the same path.
	ResolvePath func(string) string
}

// Build builds the links of s. installs keeps the install records (nil: no installer); clock
// ages the search index (nil: real time).
func Build(s Settings, installs install.Records, clock tools.Clock) (*Links, error) {
	esc, err := es.New(es.Config{URL: s.ESURL})
	if err != nil {
		return nil, err
	}
	l := &Links{Settings: s, ES: esc, RetroArch: retroarch.New(s.RetroArchAddr),
		Platforms: platforms.Default().WithOverrides(s.RomM.PlatformMap), Installs: installs}
	if s.Root != "" {
		root := s.Root
		l.ResolvePath = func(p string) string { return filepath.Join(root, p) }
	}
	l.Library = tools.Library{AllowWrites: s.AllowWrites, Platforms: l.Platforms, DeviceID: s.RomM.DeviceID, RomMURL: s.RomM.URL}
	if s.RomM.URL != "" {
		c, err := romm.New(romm.Config{URL: s.RomM.URL, Token: s.RomM.Token, CAFile: s.RomM.CAFile})
		if err != nil {
			return nil, fmt.Errorf("cabinet.romm.url: %w", err)
		}
		l.RomM, l.Library.RomM = c, c
		if s.Paths.StateDir != "" {
			l.Library.APIIndex = tools.VersionedAPIIndex(filepath.Join(s.Paths.StateDir, "romm-api"), c)
		}
	}
	if s.ROMarr.URL != "" {
		c, err := romarr.New(romarr.Config{URL: s.ROMarr.URL, APIKey: s.ROMarr.APIKey})
		if err != nil {
			return nil, fmt.Errorf("cabinet.romarr.url: %w", err)
		}
		l.ROMarr, l.Library.ROMarr = c, c
	}
	if s.AllowInstall && l.RomM != nil && installs != nil {
		l.Installer = &install.Installer{RomM: l.RomM, RomMURL: s.RomM.URL, ES: esc, Meta: es.NewMetadataWriter(esc),
			Records: installs, Platforms: l.Platforms, Path: l.ResolvePath, LockFile: s.InstallLock, MaxBytes: s.MaxInstallBytes,
			Screen: l.Screen()}
		l.Library.Installer = l.Installer
	}
	if a := (&sysaudio.Audio{Bin: s.Audio}); s.Audio != "" && a.Available() {
		l.Volume = a
	}
	if s.Power && !s.ReadOnly {
		l.Power = &power.Runner{ES: esc, Routes: es.NewPowerClient(esc), Busy: install.BusyCheck(s.InstallLock)}
	}
	l.Games = tools.NewGames(tools.Deps{ES: esc, RetroArch: l.RetroArch, ResolvePath: l.ResolvePath, Clock: clock}, tools.Options{})
	return l, nil
}

// Screen is a line on the cabinet's screen (an ES toast, RetroArch's message during a game),
// for what the installer and the request follower say there.
func (l *Links) Screen() pairing.CabinetScreen {
	return pairing.CabinetScreen{ES: l.ES, RetroArch: retroarch.New(l.Settings.RetroArchAddr, retroarch.WithTimeout(time.Second))}
}

// Tools builds an MCP tools server over the links; dryRun forces a dry run (`cabinet call
// --dry-run`), beside cabinet.mcp.dry_run. extra carries what the caller adds: the play history,
// the install and request records, the daemon's status, the clock.
func (l *Links) Tools(version string, dryRun bool, extra tools.Deps) (*tools.Server, error) {
	deps := extra
	deps.ES, deps.RetroArch, deps.Paths = l.ES, l.RetroArch, l.Settings.Paths
	deps.Name, deps.Version = l.Settings.Name, version
	deps.ResolvePath = l.ResolvePath
	deps.Library = l.Library
	if deps.Installs == nil {
		deps.Installs = l.Installs
	}
	if l.Volume != nil {
		deps.Volume = l.Volume
	}
	if l.Power != nil {
		deps.Power = l.Power
	}
	deps.Games = l.Games
	opts := tools.Options{ReadOnly: l.Settings.ReadOnly, DryRun: l.Settings.DryRun || dryRun}
	if l.Settings.NoRateLimits {
		opts.Limits = tools.Unlimited()
	}
	return tools.New(deps, opts)
}
