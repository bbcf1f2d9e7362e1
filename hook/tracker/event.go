package tracker

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Kind is what happened. The ES event names are used as they are, so the hook maps argv directly;
// configgen's gameStart/gameStop become KindGameStart/KindGameEnd.
type Kind string

// Event kinds.
const (
	KindStart            Kind = "start"
	KindGameStart        Kind = "game-start"
	KindGameEnd          Kind = "game-end"
	KindGameSelected     Kind = "game-selected"
	KindSystemSelected   Kind = "system-selected"
	KindScreensaverStart Kind = "screensaver-start"
	KindScreensaverStop  Kind = "screensaver-stop"
	KindSleep            Kind = "sleep"
	KindWake             Kind = "wake"
	KindQuit             Kind = "quit"     // Arg "reboot" or "shutdown" when the machine goes down
	KindReboot           Kind = "reboot"   // ES fires it right after "quit reboot"
	KindShutdown         Kind = "shutdown" // ES fires it right after "quit shutdown"
	KindStopped          Kind = "stopped"  // the daemon stopped cleanly: the cabinet goes offline
	// KindAchievement is a RetroAchievements unlock: RetroArch runs the scripts in ES's
	// scripts/achievements/ folder with `id title description` (argv's "achievements").
	KindAchievement Kind = "achievement"
)

// kindRank orders events stamped with exactly the same time in their causal order, so ties never
// depend on arrival order. 0 means unknown.
func kindRank(k Kind) int {
	switch k {
	case KindStart:
		return 1
	case KindSystemSelected:
		return 2
	case KindScreensaverStart:
		return 3
	case KindSleep:
		return 4
	case KindGameSelected:
		return 5
	case KindScreensaverStop:
		return 6
	case KindWake:
		return 7
	case KindGameEnd:
		return 8
	case KindGameStart:
		return 9
	case KindAchievement:
		return 10 // an unlock stamped with its game's start belongs to that game
	case KindQuit:
		return 11
	case KindReboot:
		return 12
	case KindShutdown:
		return 13
	case KindStopped:
		return 14
	}
	return 0
}

// Source is who reported an event (architecture.md "Data formats").
type Source string

// Sources.
const (
	SourceES        Source = "es"
	SourceConfiggen Source = "configgen"
	SourceWatcher   Source = "watcher" // the daemon's GET /runningGame watch
	SourceMCP       Source = "mcp"
	SourceHA        Source = "ha"
)

// sourceBit is the source's bit in a session's set of reporting sources; 0 means unknown.
func sourceBit(s Source) uint8 {
	switch s {
	case SourceES:
		return 1
	case SourceConfiggen:
		return 2
	case SourceWatcher:
		return 4
	case SourceMCP:
		return 8
	case SourceHA:
		return 16
	}
	return 0
}

// nameRank says whose game and system names to prefer: ES's own data (the watcher's /runningGame, an
// MCP launch looked up in ES's list) over ES argv (mangled by sh), over configgen (no name at all).
func nameRank(s Source) int8 {
	switch s {
	case SourceWatcher, SourceMCP:
		return 3
	case SourceES, SourceHA:
		return 2
	}
	return 1
}

// pathRank says whose ROM path to prefer: configgen and the watcher pass the true path, ES argv may
// keep literal backslashes or lose "$words".
func pathRank(s Source) int8 {
	switch s {
	case SourceConfiggen, SourceWatcher:
		return 3
	case SourceMCP:
		return 2
	}
	return 1
}

// Event is one thing that happened, stamped by whoever saw it first.
type Event struct {
	Kind       Kind          `json:"k"`
	At         time.Time     `json:"at"`             // wall clock (RFC 3339 with offset when published)
	Boot       time.Duration `json:"b,omitempty"`    // CLOCK_BOOTTIME at the event
	BootID     string        `json:"bid,omitempty"`  // /proc/sys/kernel/random/boot_id
	Path       string        `json:"path,omitempty"` // ROM path, already de-escaped by the hook
	Stem       string        `json:"stem,omitempty"`
	Name       string        `json:"name,omitempty"`
	System     string        `json:"sys,omitempty"`  // short system name (roms folder)
	SystemName string        `json:"sysn,omitempty"` // full system name (ES data)
	Emulator   string        `json:"emu,omitempty"`
	Core       string        `json:"core,omitempty"`
	Source     Source        `json:"src"`
	Arg        string        `json:"arg,omitempty"` // screensaver type, quit mode
	Unlock     Unlock        `json:"ach,omitzero"`  // KindAchievement's
	// Profile is the household's player when the daemon took a game's start (its sessions carry
	// it); "" from a hook on its own, or when nobody was chosen.
	Profile string `json:"prof,omitempty"`
}

// Unlock is an achievement event's payload: RetroAchievements' id, title and description as
// RetroArch passed them (cleaned by Normalize), and whether hardcore was configured for the running
// game (set by whoever applies the event first: it reads batocera.conf; hook/journal).
type Unlock struct {
	ID          uint32 `json:"id"`
	Title       string `json:"t,omitempty"`
	Description string `json:"d,omitempty"`
	Hardcore    bool   `json:"hc,omitempty"`
}

// Stamp is a moment on both clocks: the wall clock for display, CLOCK_BOOTTIME for order and
// durations within one boot (wall clocks jump at NTP sync on boxes without a clock chip).
type Stamp struct {
	At     time.Time     `json:"at"`
	Boot   time.Duration `json:"b,omitempty"`
	BootID string        `json:"bid,omitempty"`
}

// Stamp returns the event's moment.
func (e Event) Stamp() Stamp { return Stamp{At: e.At, Boot: e.Boot, BootID: e.BootID} }

// Event is an event of kind from src at this moment.
func (s Stamp) Event(kind Kind, src Source) Event {
	return Event{Kind: kind, At: s.At, Boot: s.Boot, BootID: s.BootID, Source: src}
}

// Bounds of an event's strings, in bytes. Normalize cuts longer values.
const (
	maxPathBytes  = 4096
	maxNameBytes  = 1024
	maxShortBytes = 128
	// An unlock's text is cleaned and capped in runes (haentities); these bound its bytes.
	maxUnlockTitleBytes = 4 * haentities.MaxAchievementTitleRunes
	maxUnlockDescBytes  = 4 * haentities.MaxAchievementDescRunes
)

// Normalize returns the event with invalid UTF-8 replaced by U+FFFD and every string cut to its bound
// at a rune boundary, so a hostile argv can neither grow the state nor make its JSON lossy.
func (e Event) Normalize() Event {
	e.BootID = bound(e.BootID, maxShortBytes)
	e.Path = bound(e.Path, maxPathBytes)
	e.Stem = bound(e.Stem, maxNameBytes)
	e.Name = bound(e.Name, maxNameBytes)
	e.System = bound(e.System, maxShortBytes)
	e.SystemName = bound(e.SystemName, maxNameBytes)
	e.Emulator = bound(e.Emulator, maxShortBytes)
	e.Core = bound(e.Core, maxShortBytes)
	e.Arg = bound(e.Arg, maxShortBytes)
	e.Unlock.Title = haentities.CleanAchievementTitle(bound(e.Unlock.Title, maxUnlockTitleBytes))
	e.Unlock.Description = haentities.CleanAchievementDescription(bound(e.Unlock.Description, maxUnlockDescBytes))
	return e
}

func bound(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Validate reports why the tracker would refuse the event: an unknown kind or source, no time, a
// negative boot clock, or a string over its bound (Normalize fixes those).
func (e Event) Validate() error {
	if kindRank(e.Kind) == 0 {
		return fmt.Errorf("unknown event kind %q", truncate(string(e.Kind)))
	}
	if sourceBit(e.Source) == 0 {
		return fmt.Errorf("%s event: unknown source %q (want es, configgen, watcher, mcp or ha)", e.Kind, truncate(string(e.Source)))
	}
	if e.At.IsZero() {
		return fmt.Errorf("%s event: no time", e.Kind)
	}
	if e.Boot < 0 {
		return fmt.Errorf("%s event: negative boot clock %v", e.Kind, e.Boot)
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"boot id", e.BootID, maxShortBytes}, {"path", e.Path, maxPathBytes}, {"stem", e.Stem, maxNameBytes},
		{"name", e.Name, maxNameBytes}, {"system", e.System, maxShortBytes}, {"system name", e.SystemName, maxNameBytes},
		{"emulator", e.Emulator, maxShortBytes}, {"core", e.Core, maxShortBytes}, {"arg", e.Arg, maxShortBytes},
		{"achievement title", e.Unlock.Title, maxUnlockTitleBytes}, {"achievement description", e.Unlock.Description, maxUnlockDescBytes},
	} {
		if len(f.v) > f.max {
			return fmt.Errorf("%s event: %s is %d bytes, over %d", e.Kind, f.name, len(f.v), f.max)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%s event: %s is not valid UTF-8", e.Kind, f.name)
		}
	}
	return nil
}

// truncate keeps error messages about garbage short.
func truncate(s string) string {
	if len(s) > 32 {
		return bound(s, 32) + "…"
	}
	return s
}
