// Package simulator composes a whole fake cabinet on loopback: the fake
// EmulationStation web API over a fixture (or generated) library, the fake
// RetroArch that comes up while a libretro game runs, ES event scripts fired
// the way ES fires them and Batocera's configgen user scripts, all inside a
// fake Batocera tree (batocera.version, a thermal zone, roms, screenshots,
// batocera.conf), and on request the fake RomM with one of its ROMs on the
// cabinet. The fake ES reads the tree as ES reads a cabinet's disk: a
// reload rescans the ROM folders, uploaded media are written there
// (reload.go). Tests, `cabinet simulate` and `cabinet demo` use it; its
// zero-configuration Start is ready to use. Everything under simulator/
// ships in `cabinet simulate` and `cabinet demo`, except
// simulator/testpeers: the real peers' launchers and the test kits, which
// only tests link.
package simulator

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeinput"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/faketools"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// Options configure a simulated cabinet. The zero value serves the fixture
// library in a temporary tree on random loopback ports.
type Options struct {
	// Dir holds the fake tree (Dir/root) and the written config; "" makes a
	// temporary directory that Close removes.
	Dir string
	// Games, when > 0, generates a library of that many games over
	// Systems systems (benchmarks); 0 serves the fixture library.
	Games, Systems int
	Seed           int64
	// ESAddr and RetroArchAddr default to 127.0.0.1:0 (a free port, kept
	// for the simulator's life).
	ESAddr, RetroArchAddr string
	// PlayTime ends every game after this long; 0: until quit or killed.
	PlayTime time.Duration
	// LaunchDelay is ES's launch transition (default 1 s, as observed).
	LaunchDelay time.Duration
	// Clock drives the fake ES (nil: real time).
	Clock fakees.Clock
	// Env is added to the environment of event and configgen scripts
	// (CABINET_CONFIG for the installed hooks).
	Env []string
	// ScriptStderr receives what event scripts write to ES's stderr.
	ScriptStderr io.Writer
	// RomM also serves the fake RomM (simulator/fakeromm) on RomMAddr
	// (default 127.0.0.1:0), puts one of its ROMs on the cabinet (its file
	// and an ES game for it, see RomMGamePath) and its token in the fake
	// tree (RomMTokenFile), and makes WriteConfig point cabinet.romm.* at
	// it.
	RomM     bool
	RomMAddr string
	// System gives the tree Batocera's own tools and kernel files that
	// Cabinet reads for volume, controllers and updates: the fake
	// batocera-audio (Volume, at 70 %) and update check (publishing
	// Update), and an input device list with one pad (Input).
	System bool
	// BatterySaves makes the simulated RetroArch keep a battery save for
	// every libretro game, as RetroArch does for a cartridge with SRAM:
	// /userdata/saves/<system>/<ROM stem>.srm, written as the content
	// unloads (BatterySave), each play changing it.
	BatterySaves bool
}

// What Options.System installs.
const (
	SystemVolume = 70
	SystemUpdate = "43 2026/07/01 10:00"
	SystemPad    = "Wireless Controller" // 80 % battery, uniq SystemPadID
	SystemPadID  = "a0:ab:51:00:00:01"
)

// Cabinet is a running simulated cabinet.
type Cabinet struct {
	ES        *fakees.Server
	ESServer  *fakees.Listener
	RetroArch *fakeretroarch.Server
	Events    *esevents.Firer
	Configgen *esevents.Configgen
	// Achievements is RetroArch's cheevos_cmd: the achievements hooks run for an unlock.
	Achievements *esevents.Achievements
	Library      *library.Library
	// RomM is the fake RomM (nil unless Options.RomM).
	RomM *fakeromm.Server
	// Input is the fake game pads (nil unless Options.System).
	Input *fakeinput.Input
	// Dir is the simulator's folder and Root the fake Batocera tree in it.
	Dir, Root string

	tempDir   bool
	romm      *rommListener
	rommGame  string // ES path of the RomM ROM on the cabinet
	rommName  string // its ES name and system
	rommSys   string
	rommBytes []byte
	mu        sync.Mutex
	quit      chan struct{} // closed when RetroArch receives QUIT
	// batterySaves: Options.BatterySaves.
	batterySaves bool
}

// Start builds the tree and starts the fakes.
func Start(opts Options) (*Cabinet, error) {
	c := &Cabinet{Dir: opts.Dir, batterySaves: opts.BatterySaves}
	if c.Dir == "" {
		d, err := os.MkdirTemp("", "cabinet-sim-")
		if err != nil {
			return nil, err
		}
		c.Dir, c.tempDir = d, true
	}
	c.Root = filepath.Join(c.Dir, "root")
	if opts.Games > 0 {
		systems := opts.Systems
		if systems <= 0 {
			systems = 60
		}
		c.Library = library.Generate(opts.Games, systems, opts.Seed)
	} else {
		c.Library = library.Fixture("")
	}
	if opts.RomM {
		if err := c.startRomM(opts.RomMAddr); err != nil {
			c.Close()
			return nil, err
		}
		if err := c.addRomMGame(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.buildTree(); err != nil {
		c.Close()
		return nil, err
	}
	if c.RomM != nil {
		if err := c.writeRomMFiles(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if opts.System {
		if err := c.installSystem(); err != nil {
			c.Close()
			return nil, fmt.Errorf("simulator: %w", err)
		}
	}
	c.RetroArch = &fakeretroarch.Server{
		ListenAddr:    opts.RetroArchAddr,
		SavestateDir:  c.Path("/userdata/saves"),
		SavefileDir:   c.Path("/userdata/saves"),
		ScreenshotDir: c.Path("/userdata/screenshots"),
		SystemDir:     c.Path("/userdata/bios"),
		OnQuit:        c.onQuit,
	}
	if _, err := c.RetroArch.Reserve(); err != nil {
		c.Close()
		return nil, fmt.Errorf("simulator: reserve RetroArch port: %w", err)
	}
	c.Events = &esevents.Firer{Root: c.Root, Env: opts.Env, Dir: c.Path("/userdata"), Home: c.Path("/userdata/system"), Stderr: opts.ScriptStderr}
	c.Configgen = &esevents.Configgen{Root: c.Root, Env: opts.Env, Dir: c.Path("/userdata"), Home: c.Path("/userdata/system")}
	c.Achievements = &esevents.Achievements{Root: c.Root, Env: opts.Env, Dir: c.Path("/userdata"), Stderr: opts.ScriptStderr}
	c.ES = fakees.New(fakees.Config{
		Library:     c.Library,
		Clock:       opts.Clock,
		Events:      c.Events,
		Emulator:    emulator{c},
		LaunchDelay: opts.LaunchDelay,
		PlayTime:    opts.PlayTime,
		ROMs:        c.romsFS,
		WriteFile:   c.writeMedia,
		Media:       c.readMedia,
		Settings:    c.Path("/userdata/system/configs/emulationstation/es_settings.cfg"),
	})
	addr := opts.ESAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := fakees.Serve(addr, c.ES)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("simulator: serve ES: %w", err)
	}
	c.ESServer = ln
	return c, nil
}

// installSystem puts the fake batocera-audio, update check and game pads
// in the tree.
func (c *Cabinet) installSystem() error {
	if err := faketools.InstallAudio(c.Root, SystemVolume, false); err != nil {
		return err
	}
	if err := faketools.InstallUpdateCheck(c.Root, SystemUpdate, false); err != nil {
		return err
	}
	in, err := fakeinput.New(c.Root)
	if err != nil {
		return err
	}
	c.Input = in
	return in.Connect(SystemPad, SystemPadID, 80)
}

// Path resolves a cabinet path (/userdata/…) inside the fake tree.
func (c *Cabinet) Path(p string) string { return filepath.Join(c.Root, strings.TrimPrefix(p, "/")) }

// ESURL is the fake ES base URL; RetroArchAddr the fake RetroArch's UDP
// address (no socket while no libretro game runs, as on a cabinet).
func (c *Cabinet) ESURL() string         { return c.ESServer.URL() }
func (c *Cabinet) RetroArchAddr() string { return c.RetroArch.Addr() }

// Close stops everything, kills event scripts still running, and removes a
// temporary tree.
func (c *Cabinet) Close() error {
	if c.ES != nil {
		c.ES.Close()
	}
	if c.ESServer != nil {
		c.ESServer.Close()
	}
	if c.RetroArch != nil {
		c.RetroArch.Unload()
	}
	if c.romm != nil {
		c.romm.close()
	}
	if c.Events != nil {
		c.Events.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.Events.Wait(ctx)
		cancel()
	}
	if c.tempDir {
		return os.RemoveAll(c.Dir)
	}
	return nil
}

// buildTree lays out the parts of a Batocera tree that Cabinet reads.
func (c *Cabinet) buildTree() error {
	files := map[string]string{
		"/usr/share/batocera/batocera.version":            "42 2026/11/01 10:00\n",
		"/usr/share/batocera/batocera.arch":               "x86_64",
		"/sys/class/thermal/thermal_zone0/temp":           "47000\n",
		"/sys/class/thermal/thermal_zone0/type":           "x86_pkg_temp\n",
		"/userdata/system/batocera.conf":                  "# simulated cabinet\nsystem.hostname=BATOCERA\nglobal.retroarch.network_cmd_enable=true\n",
		"/userdata/system/configs/emulationstation/.keep": "",
	}
	for _, d := range []string{"/userdata/screenshots", "/userdata/saves", "/userdata/bios", "/userdata/system/scripts",
		"/userdata/system/configs/emulationstation/scripts", "/userdata/system/logs", "/var/run"} {
		if err := os.MkdirAll(c.Path(d), 0o755); err != nil {
			return err
		}
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(c.Path(p)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(c.Path(p), []byte(body), 0o644); err != nil {
			return err
		}
	}
	// Every system's folder, and small ROM files where ES says the games
	// are: for tools that look, and for /reloadgames, which rescans the
	// folders and drops a game whose file is gone. Generated games are
	// pinned (library.Generate): tens of thousands of files would slow the
	// start down, and a reload keeps them without.
	for _, s := range c.Library.Systems() {
		if err := os.MkdirAll(c.Path(c.Library.RomsRoot()+"/"+s.Name), 0o755); err != nil {
			return err
		}
	}
	for _, g := range c.Library.AllGames() {
		if g.Pinned() {
			continue
		}
		p := c.Path(g.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("ROM "+g.Path), 0o644); err != nil {
			return err
		}
	}
	// The pictures ES names for the games: real covers, and the hostile
	// ones the fixture marks (library.MediaFiles).
	for _, f := range c.Library.MediaFiles() {
		if err := writeMedia(c.Path(f.Path), f); err != nil {
			return err
		}
	}
	return nil
}

func writeMedia(p string, f library.MediaFile) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, f.Data, 0o644); err != nil {
		return err
	}
	if f.Size > int64(len(f.Data)) {
		return os.Truncate(p, f.Size) // a hole: no 20 MB written
	}
	return nil
}

func (c *Cabinet) onQuit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.quit != nil {
		close(c.quit)
		c.quit = nil
	}
}

// emulator plays Batocera's emulatorlauncher: configgen scripts around the
// game, RetroArch up for libretro systems, the game ending on /emukill (ctx),
// the play timer (ctx) or RetroArch's QUIT.
type emulator struct{ c *Cabinet }

func (e emulator) Run(ctx context.Context, g library.Game) (int, error) {
	c := e.c
	sys, _ := c.Library.System(g.System)
	if err := c.Configgen.Run(ctx, esevents.GameStart, g.System, sys.Emulator, sys.Core, g.Path); err != nil {
		return 1, fmt.Errorf("configgen gameStart: %w", err)
	}
	quit := make(chan struct{})
	if sys.Libretro {
		c.mu.Lock()
		c.quit = quit
		c.mu.Unlock()
		content := fakeretroarch.Content{SystemID: sys.RetroArchSystem, Basename: library.Stem(g.Path), CRC32: crc32.ChecksumIEEE([]byte(g.Path))}
		if err := c.RetroArch.Load(content); err != nil {
			return 1, fmt.Errorf("start RetroArch: %w", err)
		}
	}
	select {
	case <-ctx.Done():
	case <-quit:
	}
	c.RetroArch.Unload()
	if sys.Libretro && c.batterySaves {
		if err := c.writeBatterySave(g); err != nil {
			return 1, fmt.Errorf("write the battery save: %w", err)
		}
	}
	stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Configgen.Run(stop, esevents.GameStop, g.System, sys.Emulator, sys.Core, g.Path); err != nil && !errors.Is(err, context.Canceled) {
		return 0, fmt.Errorf("configgen gameStop: %w", err)
	}
	return 0, nil
}

// BatterySaveSize is the simulated battery save's size (a cartridge's 8 KiB).
const BatterySaveSize = 8192

// BatterySave is where the simulated RetroArch keeps game g's battery save
// (Batocera's savefile_directory, /userdata/saves/<system>).
func (c *Cabinet) BatterySave(system, romPath string) string {
	return c.Path("/userdata/saves/" + system + "/" + library.Stem(romPath) + ".srm")
}

// writeBatterySave writes g's save as RetroArch does when content unloads:
// "SRAM <stem>" at its start, and a play counter at offset 64 that each
// play increments, so every play changes it.
func (c *Cabinet) writeBatterySave(g library.Game) error {
	p := c.BatterySave(g.System, g.Path)
	b, err := os.ReadFile(p)
	if err != nil || len(b) != BatterySaveSize {
		b = make([]byte, BatterySaveSize)
		copy(b, "SRAM "+library.Stem(g.Path))
	}
	b[64]++
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}
