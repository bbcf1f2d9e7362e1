// Package packaging owns what Cabinet installs on a cabinet outside its own
// directory: the EmulationStation event-script wrappers, the root quit
// script, the configgen user script and the achievements script RetroArch
// runs on an unlock (the installer, the Batocera service
// script and the static builds live here too). The scripts are rendered from
// one place so the installer, `cabinet doctor` and the tests agree on every
// byte.
package packaging

import (
	"fmt"
	"path"
	"strings"

	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/paths"
)

// Layout says where things live. The zero value is not useful; use
// DefaultLayout (a cabinet) or build one under a test root.
type Layout struct {
	Binary      string // /userdata/system/cabinet/bin/cabinet
	ESScripts   string // /userdata/system/configs/emulationstation/scripts
	UserScripts string // /userdata/system/scripts (configgen)
	RunDir      string // /var/run/cabinet (tmpfs: the screensaver flag)
	FlagLingerS int    // seconds the screensaver flag outlives screensaver-stop
	ServicesDir string // /userdata/system/services
	ServiceName string // cabinet (letters, digits, underscores only)
	Entries     string // /userdata/system/cabinet/entries: Cabinet's entries in ES
	// CloseRetroArchPort makes the service keep RetroArch's command port
	// (RetroArchPort) to loopback at every start (install
	// --close-retroarch-port).
	CloseRetroArchPort bool
	RetroArchPort      int
}

// DefaultFlagLingerS is how many seconds the screensaver flag outlives
// screensaver-stop on a cabinet (the daemon keeps the flag to the same
// rule while it takes the events).
const DefaultFlagLingerS = 5

// DefaultLayout is the layout on a Batocera cabinet.
func DefaultLayout() Layout {
	return Layout{
		Binary:      "/userdata/system/cabinet/bin/cabinet",
		ESScripts:   "/userdata/system/configs/emulationstation/scripts",
		UserScripts: "/userdata/system/scripts",
		RunDir:      "/var/run/cabinet",
		FlagLingerS: DefaultFlagLingerS,
		ServicesDir: "/userdata/system/services",
		ServiceName: "cabinet",
		Entries:     "/userdata/system/cabinet/entries",
	}
}

// Script is one file to install.
type Script struct {
	Path    string
	Mode    uint32
	Content string
}

// HookEvents are the ES events a per-event wrapper is installed for. The
// selections (every cursor move, every carousel stop) reach the daemon only
// through its inbox: with no daemon they never start the binary, but for a
// game-selected while the screensaver shows games. quit is handled by the
// root script, because ES waits only for root scripts on quit.
func HookEvents() []string {
	return []string{"start", "game-start", "game-end", "screensaver-start", "screensaver-stop", "sleep", "wake", "game-selected", "system-selected"}
}

// ScreensaverFlag is the file whose presence lets game-selected through.
func (l Layout) ScreensaverFlag() string { return path.Join(l.RunDir, paths.ScreensaverFlagName) }

// Files are every file Cabinet installs for EmulationStation and
// configgen: the scripts, then Cabinet's entries.
func (l Layout) Files() []Script { return append(l.ESScriptFiles(), l.EntryFiles()...) }

// ESScriptFiles renders every script Cabinet installs for EmulationStation
// and configgen.
func (l Layout) ESScriptFiles() []Script {
	var out []Script
	for _, ev := range HookEvents() {
		out = append(out, Script{Path: path.Join(l.ESScripts, ev, "cabinet"), Mode: 0o755, Content: l.wrapper(ev)})
	}
	out = append(out,
		Script{Path: path.Join(l.ESScripts, "cabinet.sh"), Mode: 0o755, Content: l.rootQuit()},
		Script{Path: path.Join(l.UserScripts, "cabinet.sh"), Mode: 0o755, Content: l.configgen()},
		Script{Path: l.AchievementsScript(), Mode: 0o755, Content: l.achievements()},
	)
	return out
}

const header = "#!/bin/sh\n# Installed by Cabinet; `cabinet doctor` checks it, the installer rewrites it.\n"

// exec is the line that hands over to the binary. stdout goes nowhere: ES
// pipes hook output through `head -300`, and the binary never writes there.
func (l Layout) exec(args string) string {
	return fmt.Sprintf("exec %s hook %s \"$@\" </dev/null >/dev/null\n", shQuote(l.Binary), args)
}

func (l Layout) wrapper(ev string) string {
	flag := shQuote(l.ScreensaverFlag())
	var b strings.Builder
	b.WriteString(header)
	b.WriteString(l.handOver(shQuote(ev), 1))
	switch ev {
	case "system-selected":
		b.WriteString("exit 0 # no daemon: a carousel stop never starts the binary\n")
		return b.String()
	case "game-selected":
		// Every cursor move fires this event: stay in sh unless a
		// screensaver (which picks games itself) is or just was running.
		fmt.Fprintf(&b, "# Scrolling a game list must never start the binary.\n[ -e %s ] || exit 0\n", flag)
	case "screensaver-start":
		// suspend fires no screensaver-stop, so it never sets the flag
		// (it shows no games anyway). The flag holds this start's id so a
		// late removal from an earlier stop leaves a new screensaver alone.
		fmt.Fprintf(&b, "if [ \"$1\" != suspend ]; then\n  mkdir -p %s && echo \"$$\" > %s\nfi\n", shQuote(l.RunDir), flag)
	case "screensaver-stop":
		// The screensaver's own game-selected races screensaver-stop (ES
		// fires them milliseconds apart and runs hooks concurrently), so the
		// flag lingers a few seconds before it goes.
		fmt.Fprintf(&b, "if [ -e %[1]s ]; then\n  gen=$(cat %[1]s 2>/dev/null)\n  (sleep %[2]d; [ \"$(cat %[1]s 2>/dev/null)\" = \"$gen\" ] && rm -f %[1]s) </dev/null >/dev/null 2>&1 &\nfi\n", flag, l.FlagLingerS)
	}
	b.WriteString(l.exec(ev))
	return b.String()
}

// handOver is the daemon-up path: with shell builtins only (no fork, no
// binary), it checks that `cabinet serve` runs — the pid and start time in
// its up file match /proc/PID/stat's field 22, so a dead daemon's reused
// pid does not count — and writes the event into its inbox with one printf
// (see package inbox), under set -C so no other wrapper's file is taken,
// then exits. Anything that fails (no daemon, a full or read-only tmpfs, a
// name taken) falls through to the lines after it. args are the argv words
// before "$@" (already quoted) and n how many there are. printf is a
// regular builtin: a failed redirection does not exit the shell, as it
// would on : or exec.
func (l Layout) handOver(args string, n int) string {
	return l.handOverPrintf(fmt.Sprintf(`'%%s\0' %s "$u" $(($#+%d)) %s "$@" %s`, journal.InboxMagic, n, args, journal.InboxEnd))
}

// handOverPrintf is handOver with the printf's arguments given (format
// first): the achievements wrapper writes a fixed record of bounded fields.
func (l Layout) handOverPrintf(printfArgs string) string {
	up := shQuote(path.Join(l.RunDir, paths.UpFileName))
	box := shQuote(path.Join(l.RunDir, paths.InboxName) + "/")
	return fmt.Sprintf(`# While cabinet serve runs, the event goes into its inbox without starting the binary.
if { read -r p t <%s && read -r x x x x x x x x x x x x x x x x x x x x x s x <"/proc/$p/stat" &&
  [ "$s" = "$t" ] && read -r u x </proc/uptime; } 2>/dev/null; then
  set -C
  printf %s 2>/dev/null >%s"$u-$$" && exit 0
  set +C
fi
`, up, printfArgs, box)
}

// rootQuit is the root generic script. ES runs it for every event with the
// event name as $1, and waits for it (with no timeout) only on quit, which is
// the one moment to get the reboot/shutdown event and `offline` out before
// the machine stops. Every other event exits in sh.
func (l Layout) rootQuit() string {
	return header + "# ES runs this for every event; it acts only on quit ($2: reboot or shutdown when the machine goes down).\n" +
		"[ \"$1\" = quit ] || exit 0\nshift\n" + l.exec("quit")
}

// configgen is Batocera's emulatorlauncher user script: gameStart|gameStop
// system emulator core rom, synchronous (it blocks the game), with a proper
// argv.
func (l Layout) configgen() string {
	return header + "# Batocera's launcher runs this around every game: gameStart|gameStop system emulator core rom.\n" +
		l.handOver("--source configgen", 2) + l.exec("--source configgen")
}

// shQuote quotes s for sh.
func shQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
