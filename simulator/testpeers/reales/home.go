package reales

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The games of the library every real ES gets.
const (
	SystemNES  = "nes"
	SystemSNES = "snes"
	// ROMPlain has nothing sh would read.
	ROMPlain = "Tetris.nes"
	// ROMMario is unquoted in ES's game-start hook line (no space) and its
	// stem "Mario_(USA)" is a sh syntax error there: ES's own game-start
	// hooks never run for it (es-core Scripting.cpp executeScript).
	ROMMario = "Mario_(USA).nes"
	// ROMSpaces is quoted in the hook line, so arg1 arrives with ES's
	// escaping backslashes in it (FileSystemUtil getEscapedPath).
	ROMSpaces = "Super Mario Bros. (World).nes"
	// ROMSNES is the second system's game.
	ROMSNES = "Street Fighter II (USA).sfc"
)

// System is one <system> of es_systems.cfg.
type System struct {
	Name, FullName, Extension string
	Emulator, Core            string // the default <emulator>/<core>: %EMULATOR% %CORE%
	ROMs                      []string
}

// Systems is the library.
func Systems() []System {
	return []System{
		{Name: SystemNES, FullName: "Nintendo Entertainment System", Extension: ".nes", Emulator: "libretro", Core: "nestopia",
			ROMs: []string{ROMPlain, ROMMario, ROMSpaces}},
		{Name: SystemSNES, FullName: "Super Nintendo", Extension: ".sfc", Emulator: "libretro", Core: "snes9x",
			ROMs: []string{ROMSNES}},
	}
}

// Stubs are the programs ES must never run for real here: its reboot and
// shutdown paths (es-core Platform.cpp runRestartCommand/runShutdownCommand:
// `shutdown -r now`, `shutdown -P -h now`) and the swissknife of /emukill
// (es-app ApiSystem::emuKill).
func Stubs() []string { return []string{"shutdown", "reboot", "poweroff", "batocera-es-swissknife"} }

// layout is where one real ES keeps its files.
type layout struct {
	dir         string
	home        string // HOME
	esDir       string // HOME/.emulationstation: es_systems.cfg, es_settings.cfg, es_log.txt
	scripts     string // HOME/.emulationstation/scripts
	userScripts string // the configgen user scripts the emulator runs
	roms        string
	stubs       string // first in ES's PATH
	stubLog     string // one line per stub run
	emulator    string // the <command> of every system
	emuLog      string // the emulator's lines: launch, started, ended
	emuPID      string // the running game's pid (what EndGame kills)
	playTime    string // seconds the next games play, read at each launch
	out         string // xvfb-run's and ES's stdout and stderr
}

func newLayout(dir string) layout {
	home := filepath.Join(dir, "home")
	es := filepath.Join(home, ".emulationstation")
	return layout{
		dir: dir, home: home, esDir: es,
		scripts:     filepath.Join(es, "scripts"),
		userScripts: filepath.Join(home, "system", "scripts"),
		roms:        filepath.Join(home, "roms"),
		stubs:       filepath.Join(dir, "stubs"),
		stubLog:     filepath.Join(dir, "stubs.log"),
		emulator:    filepath.Join(dir, "emulator.sh"),
		emuLog:      filepath.Join(dir, "emulator.log"),
		emuPID:      filepath.Join(dir, "emulator.pid"),
		playTime:    filepath.Join(dir, "playtime"),
		out:         filepath.Join(dir, "es.out"),
	}
}

// write lays out HOME: the config files, the ROMs, the emulator, the stubs.
func (l layout) write(opts Options) error {
	if strings.ContainsAny(l.dir, " '\"\\$`!&*()[]{}?;<>|^~#") {
		return fmt.Errorf("reales: %q has shell characters: ES pastes paths unquoted into sh", l.dir)
	}
	for _, d := range []string{l.scripts, l.userScripts, l.stubs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		filepath.Join(l.esDir, "es_systems.cfg"):  l.systemsCfg(),
		filepath.Join(l.esDir, "es_settings.cfg"): settingsCfg(opts),
	}
	for _, s := range Systems() {
		for _, rom := range s.ROMs {
			files[filepath.Join(l.roms, s.Name, rom)] = "ROM " + rom + "\n"
		}
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	if err := l.setPlayTime(opts.PlayTime); err != nil {
		return err
	}
	exe := map[string]string{l.emulator: l.emulatorScript()}
	for _, s := range Stubs() {
		exe[filepath.Join(l.stubs, s)] = fmt.Sprintf("#!/bin/sh\n# reales: %s must never run for real under a test's EmulationStation.\n"+
			"printf '%%s\\n' \"%s $*\" >>%s\nexit 0\n", s, s, shQuote(l.stubLog))
	}
	for p, body := range exe {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// systemsCfg declares the library. ES substitutes %SYSTEM% %EMULATOR% %CORE%
// and %ROM% (the path through getEscapedPath) into <command> and runs it
// with system(), blocking its UI thread until the emulator exits (es-app
// FileData::getlaunchCommand and launchGame).
func (l layout) systemsCfg() string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<systemList>\n")
	for _, s := range Systems() {
		fmt.Fprintf(&b, `  <system>
    <name>%s</name>
    <fullname>%s</fullname>
    <path>%s</path>
    <extension>%s</extension>
    <command>%s %%SYSTEM%% %%EMULATOR%% %%CORE%% %%ROM%%</command>
    <platform>%s</platform>
    <theme>%s</theme>
    <emulators><emulator name="%s"><cores><core default="true">%s</core></cores></emulator></emulators>
  </system>
`, s.Name, html.EscapeString(s.FullName), html.EscapeString(filepath.Join(l.roms, s.Name)), s.Extension,
			html.EscapeString(l.emulator), s.Name, s.Name, s.Emulator, s.Core)
	}
	b.WriteString("</systemList>\n")
	return b.String()
}

// settingsCfg is es_settings.cfg (es-core Settings::loadFile): the
// screensaver as asked (ScreenSaverTime is in ms, 0 = never), and instant
// transitions so a launch is not held by an animation.
func settingsCfg(opts Options) string {
	behavior := opts.ScreensaverBehavior
	if behavior == "" {
		behavior = "dim"
	}
	return fmt.Sprintf(`<?xml version="1.0"?>
<config>
  <int name="ScreenSaverTime" value="%d" />
  <string name="ScreenSaverBehavior" value="%s" />
  <string name="TransitionStyle" value="instant" />
  <string name="GameTransitionStyle" value="instant" />
  <bool name="ShowHelpPrompts" value="false" />
</config>
`, opts.ScreensaverTime.Milliseconds(), html.EscapeString(behavior))
}

// emulatorScript plays Batocera's emulatorlauncher as Cabinet sees it:
// every executable user script is called with `gameStart system emulator
// core rom`, synchronously, before the game, and with gameStop after it
// (batocera.linux configgen emulatorlauncher.py callExternalScripts); the
// game itself sleeps until it is killed (EndGame, as the swissknife's
// --emukill kills the emulator) or its play time is up.
func (l layout) emulatorScript() string {
	return fmt.Sprintf(`#!/bin/sh
# reales: the emulator of every system. ES runs: emulator.sh %%SYSTEM%% %%EMULATOR%% %%CORE%% %%ROM%%
log=%[1]s scripts=%[2]s
system=$1 emulator=$2 core=$3 rom=$4
printf 'launch %%s\n' "$rom" >>"$log"
configgen() {
  for s in "$scripts"/*; do
    if [ -f "$s" ] && [ -x "$s" ]; then "$s" "$1" "$system" "$emulator" "$core" "$rom"; fi
  done
}
configgen gameStart
read -r play <%[4]s
sleep "$play" &
game=$!
echo "$game" >%[3]s
printf 'started %%s\n' "$rom" >>"$log"
wait "$game"
rm -f %[3]s
configgen gameStop
printf 'ended %%s\n' "$rom" >>"$log"
`, shQuote(l.emuLog), shQuote(l.userScripts), shQuote(l.emuPID), shQuote(l.playTime))
}

// setPlayTime writes how long the next games play (0: 10 minutes).
func (l layout) setPlayTime(d time.Duration) error {
	secs := "600"
	if d > 0 {
		secs = fmt.Sprintf("%.3f", d.Seconds())
	}
	return os.WriteFile(l.playTime, []byte(secs+"\n"), 0o644)
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
