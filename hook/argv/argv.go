// Package argv turns the arguments EmulationStation or Batocera's launcher
// give a hook into a tracker event: `cabinet hook` parses its own argv with
// it, and the daemon the argv a wrapper wrote into its inbox, so both read
// ES's quirks (its escaping, its argument styles) the same way.
package argv

import (
	"errors"
	"fmt"
	"strings"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// ErrIgnored marks a real ES event the tracker has no use for
// (config-changed, theme-changed…): not worth a log line above debug.
var ErrIgnored = errors.New("event not tracked")

// Bounds on argv: ES passes at most three arguments, configgen five.
const (
	maxArgs     = 8
	maxArgBytes = 8 << 10
)

// Parse turns the hook's arguments (after "hook") into an event stamped
// st: `[--source es|configgen] EVENT [ARGS…]`. ES's per-event wrappers pass
// the event name then ES's arguments; the configgen script passes
// `--source configgen gameStart|gameStop system emulator core rom`.
func Parse(args []string, st tracker.Stamp) (tracker.Event, error) {
	src := tracker.SourceES
	if len(args) > 0 && strings.HasPrefix(args[0], "--source") {
		v, ok := strings.CutPrefix(args[0], "--source=")
		args = args[1:]
		if !ok {
			if len(args) == 0 {
				return tracker.Event{}, errors.New("--source needs a value: es or configgen")
			}
			v, args = args[0], args[1:]
		}
		switch v {
		case "es":
		case "configgen":
			src = tracker.SourceConfiggen
		default:
			return tracker.Event{}, fmt.Errorf("--source %q: want es or configgen", clip(v))
		}
	}
	if len(args) == 0 {
		return tracker.Event{}, errors.New("no event name: want cabinet hook EVENT [ARGS...]")
	}
	if len(args) > maxArgs {
		return tracker.Event{}, fmt.Errorf("%d arguments: at most %d expected", len(args), maxArgs)
	}
	if args[0] == EventAchievements {
		args = boundUnlock(args)
	}
	for i, a := range args {
		if len(a) > maxArgBytes {
			return tracker.Event{}, fmt.Errorf("argument %d is %d bytes: at most %d expected", i+1, len(a), maxArgBytes)
		}
	}
	ev := st.Event("", src)
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	if args[0] == EventAchievements {
		// Batocera's call_achievements_hooks.sh, run by RetroArch (the
		// wrappers pass --source configgen: it never touches the network).
		return parseUnlock(ev, arg(1), arg(2), arg(3))
	}
	if src == tracker.SourceConfiggen {
		switch args[0] {
		case "gameStart":
			ev.Kind = tracker.KindGameStart
		case "gameStop":
			ev.Kind = tracker.KindGameEnd
		default:
			return tracker.Event{}, fmt.Errorf("configgen event %q: want gameStart or gameStop", clip(args[0]))
		}
		ev.System, ev.Emulator, ev.Core, ev.Path = arg(1), arg(2), arg(3), arg(4)
		return ev.Normalize(), nil
	}
	switch name := args[0]; name {
	case "start", "game-end", "screensaver-stop", "sleep", "wake", "reboot", "shutdown":
		ev.Kind = tracker.Kind(name)
	case "game-start":
		// arg1: the path through ES's getEscapedPath and sh; arg2: the
		// stem; arg3: the display name (both may have lost "$words").
		ev.Kind = tracker.KindGameStart
		ev.Path, ev.Stem, ev.Name = UnescapePath(arg(1)), arg(2), arg(3)
	case "game-selected":
		ev.Kind = tracker.KindGameSelected
		ev.System, ev.Path, ev.Name = arg(1), arg(2), arg(3)
	case "system-selected":
		ev.Kind = tracker.KindSystemSelected
		ev.System = arg(1)
	case "screensaver-start":
		ev.Kind = tracker.KindScreensaverStart
		ev.Arg = arg(1)
	case "quit":
		ev.Kind = tracker.KindQuit
		switch mode := arg(1); mode {
		case "", "reboot", "shutdown":
			ev.Arg = mode
		default:
			return tracker.Event{}, fmt.Errorf("quit %q: want no argument, reboot or shutdown", clip(mode))
		}
	case "config-changed", "settings-changed", "controls-changed", "theme-changed", "update-gamelists":
		return tracker.Event{}, fmt.Errorf("%s: %w", name, ErrIgnored)
	default:
		return tracker.Event{}, fmt.Errorf("unknown event %q", clip(name))
	}
	return ev.Normalize(), nil
}

// clip keeps garbage short in messages.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	return strings.ToValidUTF8(s[:40], "") + "…"
}
