package tools

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
)

// Settings are what a tools server is built from; cmd/cabinet maps the
// cabinet.* keys to them (cabinet.es.url, cabinet.retroarch.addr, the
// system paths under cabinet.paths.root, cabinet.name,
// cabinet.mcp.read_only, cabinet.mcp.dry_run and cabinet.mcp.power).
type Settings struct {
	ESURL         string
	RetroArchAddr string
	Paths         Paths
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

// Build builds the tools server with its own ES and RetroArch clients.
// dryRun forces a dry run (`cabinet call --dry-run`); extra carries the
// daemon's History and DaemonStatus when it builds the server.
func Build(s Settings, version string, dryRun bool, extra Deps) (*Server, error) {
	esc, err := es.New(es.Config{URL: s.ESURL})
	if err != nil {
		return nil, err
	}
	deps := extra
	deps.ES, deps.RetroArch, deps.Paths = esc, retroarch.New(s.RetroArchAddr), s.Paths
	deps.Name, deps.Version = s.Name, version
	if s.Root != "" {
		root := s.Root
		deps.ResolvePath = func(p string) string { return filepath.Join(root, p) }
	}
	lib, rc, err := buildLibrary(s)
	if err != nil {
		return nil, err
	}
	if s.AllowInstall && rc != nil && deps.Installs != nil {
		lib.Installer = &install.Installer{RomM: rc, RomMURL: s.RomM.URL, ES: esc, Meta: es.NewMetadataWriter(esc),
			Records: deps.Installs, Platforms: lib.Platforms, Path: deps.ResolvePath, LockFile: s.InstallLock, MaxBytes: s.MaxInstallBytes,
			Screen: pairing.CabinetScreen{ES: esc, RetroArch: retroarch.New(s.RetroArchAddr, retroarch.WithTimeout(time.Second))}}
	}
	deps.Library = lib
	if a := (&sysaudio.Audio{Bin: s.Audio}); s.Audio != "" && a.Available() {
		deps.Volume = a
	}
	if s.Power && !s.ReadOnly {
		deps.Power = &power.Runner{ES: esc, Routes: es.NewPowerClient(esc), Busy: installBusy(s.InstallLock)}
	}
	return New(deps, Options{ReadOnly: s.ReadOnly, DryRun: s.DryRun || dryRun})
}

// buildLibrary makes the RomM and ROMarr clients the settings name.
// Nothing is dialled here.
func buildLibrary(s Settings) (Library, *romm.Client, error) {
	lib := Library{AllowWrites: s.AllowWrites, Platforms: platforms.Default().WithOverrides(s.RomM.PlatformMap), DeviceID: s.RomM.DeviceID,
		RomMURL: s.RomM.URL}
	var rc *romm.Client
	if s.RomM.URL != "" {
		c, err := romm.New(romm.Config{URL: s.RomM.URL, Token: s.RomM.Token, CAFile: s.RomM.CAFile})
		if err != nil {
			return Library{}, nil, fmt.Errorf("cabinet.romm.url: %w", err)
		}
		lib.RomM, rc = c, c
		if s.Paths.StateDir != "" {
			lib.APIIndex = versionedAPIIndex(filepath.Join(s.Paths.StateDir, "romm-api"), c)
		}
	}
	if s.ROMarr.URL != "" {
		c, err := romarr.New(romarr.Config{URL: s.ROMarr.URL, APIKey: s.ROMarr.APIKey})
		if err != nil {
			return Library{}, nil, fmt.Errorf("cabinet.romarr.url: %w", err)
		}
		lib.ROMarr = c
	}
	return lib, rc, nil
}
