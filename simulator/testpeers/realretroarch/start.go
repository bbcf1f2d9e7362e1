package realretroarch

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults for Start.
const (
	DefaultROMName      = "stub"
	defaultStartTimeout = 45 * time.Second
	probeInterval       = 100 * time.Millisecond
	stopGrace           = 3 * time.Second
	logTailBytes        = 4096
)

// Options configure Start. Dir is required; the rest have defaults.
type Options struct {
	// Dir is a directory the instance owns (a test's t.TempDir()). The ROM,
	// config, log, a private HOME and the save/state/screenshot folders go here.
	Dir string
	// Port is the UDP command port; 0 picks a free loopback port.
	Port int
	// ROMName is the stem of the ROM file (default "stub"); GET_STATUS reports it
	// as the game and SAVE_STATE names the state file after it.
	ROMName string
	// ROM is the iNES image to run (BatteryROM, say); nil runs StubROM. It is
	// written to Dir as ROMName+".nes", and Instance.CRC32 is its CRC32.
	ROM []byte
	// Contentless starts RetroArch without a core or content, so GET_STATUS
	// answers CONTENTLESS.
	Contentless bool
	// Config sets more retroarch.cfg keys, or other values for the
	// defaults' (Batocera's savestate_auto_index "true", say).
	Config map[string]string
	// Narrate turns on RetroArch's accessibility narrator: every on-screen
	// message, SHOW_MSG's included, is spoken and logged ("Spoke: …"),
	// which is how a test sees what headless RetroArch would have shown
	// (Spoken). The espeak it speaks through is a silent stub in Dir.
	Narrate bool
}

// Instance is a running RetroArch. Its fields are fixed after Start.
type Instance struct {
	Addr          string // command address, "127.0.0.1:<port>"
	Port          int
	ConfigPath    string
	LogPath       string
	ROMPath       string // empty when Contentless
	ROMBasename   string // ROM stem, as GET_STATUS reports it
	CRC32         uint32 // CRC32 of the ROM file, as GET_STATUS reports it
	SystemID      string // "nes": the core info systemid GET_STATUS reports
	Core          string
	SavestateDir  string
	ScreenshotDir string
	SavefileDir   string // where RetroArch reads and writes the battery save (SRMPath)
	SystemDir     string

	cmd      *exec.Cmd
	done     chan struct{} // closed when the process has exited
	stopOnce sync.Once
}

// Start writes the ROM (Options.ROM, else the stub) and a headless config into opts.Dir, starts
// `dbus-run-session -- retroarch --config F -L CORE ROM` in its own process
// group and waits until VERSION answers or ctx ends (20 s without a deadline).
// The caller must call Stop.
func Start(ctx context.Context, opts Options) (*Instance, error) {
	peer, err := find()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("realretroarch start: Options.Dir is required")
	}
	if opts.ROMName == "" {
		opts.ROMName = DefaultROMName
	}
	if opts.Port == 0 {
		if opts.Port, err = FreeUDPPort(); err != nil {
			return nil, fmt.Errorf("realretroarch start: %w", err)
		}
	}
	in, err := prepare(peer, opts)
	if err != nil {
		return nil, fmt.Errorf("realretroarch start: %w", err)
	}
	if err := in.launch(peer, opts); err != nil {
		return nil, fmt.Errorf("realretroarch start: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	if err := in.waitVersion(ctx); err != nil {
		_ = in.Stop()
		return nil, fmt.Errorf("realretroarch start: %w\n--- retroarch log tail ---\n%s", err, in.LogTail())
	}
	return in, nil
}

func prepare(peer peer, opts Options) (*Instance, error) {
	in := &Instance{
		Addr:          net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)),
		Port:          opts.Port,
		ConfigPath:    filepath.Join(opts.Dir, "retroarch.cfg"),
		LogPath:       filepath.Join(opts.Dir, "retroarch.log"),
		ROMBasename:   opts.ROMName,
		SystemID:      "nes",
		Core:          peer.Core,
		SavestateDir:  filepath.Join(opts.Dir, "states"),
		ScreenshotDir: filepath.Join(opts.Dir, "screenshots"),
		SavefileDir:   filepath.Join(opts.Dir, "saves"),
		SystemDir:     filepath.Join(opts.Dir, "system"),
		done:          make(chan struct{}),
	}
	for _, d := range []string{in.SavestateDir, in.ScreenshotDir, in.SavefileDir, in.SystemDir, in.home()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if !opts.Contentless {
		rom := opts.ROM
		if rom == nil {
			rom = StubROM()
		}
		in.ROMPath = filepath.Join(opts.Dir, opts.ROMName+".nes")
		in.CRC32 = crc32.ChecksumIEEE(rom)
		if err := os.WriteFile(in.ROMPath, rom, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(in.ConfigPath, []byte(in.config(peer, opts)), 0o644); err != nil {
		return nil, err
	}
	if opts.Narrate {
		// The narrator runs espeak from PATH (frontend/drivers/
		// platform_unix.c, accessibility_speak_unix): never the machine's.
		if err := os.MkdirAll(in.stubs(), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(in.stubs(), "espeak"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// SRMPath is where RetroArch keeps the content's battery save: it loads it
// when it starts the content and writes it when it unloads it (QUIT, or
// Stop's SIGTERM). The save folder is flat: the config turns off sorting by
// core and by content.
func (in *Instance) SRMPath() string {
	return filepath.Join(in.SavefileDir, in.ROMBasename+".srm")
}

func (in *Instance) home() string  { return filepath.Join(filepath.Dir(in.ConfigPath), "home") }
func (in *Instance) stubs() string { return filepath.Join(filepath.Dir(in.ConfigPath), "stubs") }

// config is the headless configuration. quit_press_twice and the core paths
// are what Batocera's configgen sets; the sort_* and thumbnail settings are
// pinned so file names are predictable.
func (in *Instance) config(peer peer, opts Options) string {
	kv := [][2]string{
		{"video_driver", "null"},
		{"audio_driver", "null"},
		{"input_driver", "null"},
		{"menu_driver", "null"},
		{"network_cmd_enable", "true"},
		{"network_cmd_port", strconv.Itoa(in.Port)},
		{"gamemode_enable", "false"},
		{"libretro_directory", filepath.Dir(peer.Core)},
		{"libretro_info_path", peer.InfoDir},
		{"savestate_directory", in.SavestateDir},
		{"screenshot_directory", in.ScreenshotDir},
		{"savefile_directory", in.SavefileDir},
		{"system_directory", in.SystemDir},
		{"config_save_on_exit", "false"},
		{"quit_press_twice", "false"},
		{"savestate_thumbnail_enable", "false"},
		{"sort_savefiles_enable", "false"},
		{"sort_savestates_enable", "false"},
		{"sort_savefiles_by_content_enable", "false"},
		{"sort_savestates_by_content_enable", "false"},
		{"sort_screenshots_by_content_enable", "false"},
		{"screenshots_in_content_dir", "false"},
		// 1.14's default: the battery save is written only when the content
		// is unloaded (QUIT, SIGTERM), not every N seconds while it runs.
		{"autosave_interval", "0"},
		// Otherwise 1.14 writes core_info.cache into the system info directory.
		{"core_info_cache_enable", "false"},
		// Null video never blocks on vsync; this paces the loop at the core's
		// frame rate instead of spinning a CPU.
		{"vrr_runloop_enable", "true"},
	}
	extra := maps.Clone(opts.Config)
	if opts.Narrate {
		if extra == nil {
			extra = map[string]string{}
		}
		extra["accessibility_enable"] = "true"
	}
	for i, p := range kv {
		if v, ok := extra[p[0]]; ok {
			kv[i][1] = v
			delete(extra, p[0])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		kv = append(kv, [2]string{k, extra[k]})
	}
	var b strings.Builder
	for _, p := range kv {
		fmt.Fprintf(&b, "%s = %q\n", p[0], p[1])
	}
	return b.String()
}

// sessionBusConfig is a private session bus without service directories:
// RetroArch 1.14 asks the bus for GameMode even with gamemode_enable off, and
// the stock session config would activate gamemoded, which then outlives the
// test in its own session.
const sessionBusConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

func (in *Instance) launch(peer peer, opts Options) error {
	busConf := filepath.Join(opts.Dir, "session-bus.conf")
	if err := os.WriteFile(busConf, []byte(sessionBusConfig), 0o644); err != nil {
		return err
	}
	args := []string{"--config-file=" + busConf, "--", peer.RetroArch, "--verbose", "--config", in.ConfigPath}
	if !opts.Contentless {
		args = append(args, "-L", peer.Core, in.ROMPath)
	}
	logf, err := os.Create(in.LogPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(peer.DBusRun, args...)
	cmd.Dir = opts.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "HOME="+in.home(), "XDG_CONFIG_HOME="+filepath.Join(in.home(), ".config"))
	if opts.Narrate {
		cmd.Env = append(cmd.Env, "PATH="+in.stubs()+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	// Its own process group, so Stop reaches dbus-daemon and retroarch too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	in.cmd = cmd
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(in.done)
	}()
	return nil
}
