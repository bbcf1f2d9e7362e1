// Package selection is the debounced feed of what is under EmulationStation's cursor. ES fires
// game-selected at every cursor step and system-selected whenever the carousel stops, and the
// screensaver's random games fire the very same game-selected; ES never says again what the
// cursor is on when the screensaver stops. The Feed takes those raw picks, the screensaver's
// runs and the running game, and shows — through its Show callback, on its own goroutine — only
// a selection that has held for the settle time: never the steps of a scroll, nothing when the
// selection comes back to what is shown, the screensaver's picks marked as such (and not shown
// unless asked), the player's last pick again once the screensaver stops, and the running game
// while one runs. The Hub hands what was shown to in-process subscribers (the marquee page's
// server-sent events) without ever waiting for them.
//
// Time is the daemon's clock (a Fake in tests): one trailing timer, re-armed by every input,
// never a poll. Which picks are the screensaver's is decided when the timer fires, on the boot
// clock stamps of the picks and of the screensaver's start and stop, so a pick taken before
// the screensaver-start it follows (ES fires them within a millisecond, and their wrappers
// race) is still the screensaver's.
package selection

import (
	"context"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// Source says where a shown selection comes from.
type Source string

const (
	// SourceES is ES's cursor: the player's pick.
	SourceES Source = "es"
	// SourceScreensaver is a random game the screensaver shows (shown only when Config.Screensaver).
	SourceScreensaver Source = "screensaver"
	// SourcePlaying is the running game, which the feed holds while it runs.
	SourcePlaying Source = "playing"
)

// DefaultSettle is how long a selection must hold before it is shown (cabinet.selected.settle_ms).
const DefaultSettle = 300 * time.Millisecond

// Bounds of the screensaver's race with the picks, on the boot clock: a game-selected taken up
// to ScreensaverLead before a screensaver-start, or up to ScreensaverTrail after its stop, is
// the screensaver's. ES's own events race by milliseconds (the screensaver fires its first
// game-selected in the frame it starts; its launch fires game-selected, screensaver-stop and
// game-start in a row), and their wrappers run at once. A player's last move comes the idle
// time (a minute or more) before the screensaver starts, and a move after it stops comes with
// a second key press.
const (
	ScreensaverLead  = 250 * time.Millisecond
	ScreensaverTrail = 250 * time.Millisecond
)

// Bounds of what the feed remembers.
const (
	maxRecent = 32 // raw picks kept for the decision (older player picks leave one behind)
	maxRuns   = 8  // screensaver runs kept
)

// Config is the feed's configuration (cabinet.selected.*), read at every input: a change applies
// at once.
type Config struct {
	// Settle is how long a selection must hold before it is shown (0: DefaultSettle).
	Settle time.Duration
	// Screensaver shows the screensaver's picks too (marked SourceScreensaver).
	Screensaver bool
}

// Pick is one selection as ES reported it, or the running game.
type Pick struct {
	System string // ES's system name ("nes"): the game's own system, even in a collection
	ROM    string // the ROM path as ES passed it; "" when a system is selected
	Name   string // the name ES passed (argv; it may have lost "$words")
	// Boot is when it happened on the boot clock (CLOCK_BOOTTIME), At on the wall clock.
	Boot time.Duration
	At   time.Time
}

// Settled is a selection the feed shows.
type Settled struct {
	Pick
	Source Source
}

// Same says whether two selections show the same thing (the same game or system, from the same
// source): a selection that comes back to what is shown is not shown again.
func (s Settled) Same(o Settled) bool {
	return s.System == o.System && s.ROM == o.ROM && s.Source == o.Source
}

// run is one run of a screensaver that shows games, on the boot clock.
type run struct {
	start, stop time.Duration
	open        bool
}

// Feed debounces the picks. Its zero value is not usable: set Clock, Config and Show, then Run.
type Feed struct {
	Clock  clock.Clock
	Config func() Config
	// Show is given each selection that settled and differs from the one shown before, on the
	// feed's goroutine; the feed waits for it (the next decision is taken after).
	Show func(ctx context.Context, s Settled)
	// Armed and Decided, when set, are told each time the settle timer is armed and each
	// decision taken (shown: whether s was given to Show): seams for tests and benchmarks.
	Armed   func()
	Decided func(s Settled, shown bool)

	mu      sync.Mutex
	recent  []Pick // raw picks, oldest first
	base    *Pick  // the player's newest pick that left recent
	runs    []run  // screensaver runs, oldest first
	running *Pick  // the running game
	shown   *Settled
	wake    chan struct{}
}

func (f *Feed) wakeCh() chan struct{} {
	if f.wake == nil {
		f.wake = make(chan struct{}, 1)
	}
	return f.wake
}

// nudgeLocked re-arms the settle timer (f.mu held).
func (f *Feed) nudgeLocked() {
	select {
	case f.wakeCh() <- struct{}{}:
	default:
	}
}

// Select takes a game-selected (ROM set) or system-selected (ROM "") of ES's.
func (f *Feed) Select(p Pick) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.recent) == maxRecent {
		old := f.recent[0]
		f.recent = append(f.recent[:0], f.recent[1:]...)
		if !f.screensaverLocked(old) && (f.base == nil || old.Boot >= f.base.Boot) {
			f.base = &old
		}
	}
	f.recent = append(f.recent, p)
	f.nudgeLocked()
}

// ScreensaverStart takes a screensaver-start of a screensaver that shows games (random video,
// slideshow; dim, black and suspend pick none and are not given).
func (f *Feed) ScreensaverStart(boot time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.runs {
		if r.start == boot {
			return // told twice
		}
	}
	if n := len(f.runs); n > 0 && f.runs[n-1].open {
		f.runs[n-1].open, f.runs[n-1].stop = false, boot
	}
	if len(f.runs) == maxRuns {
		f.runs = append(f.runs[:0], f.runs[1:]...)
	}
	f.runs = append(f.runs, run{start: boot, open: true})
	f.nudgeLocked()
}

// ScreensaverStop ends the screensaver's run, if one is on, at boot: its screensaver-stop, or
// anything else that says the player is back (a wake, a system-selected, a game's start or end,
// ES's start). The player's last pick is shown again once it has settled.
func (f *Feed) ScreensaverStop(boot time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.runs)
	if n == 0 || !f.runs[n-1].open || boot < f.runs[n-1].start {
		return
	}
	f.runs[n-1].open, f.runs[n-1].stop = false, boot
	f.nudgeLocked()
}

// Running takes the running game (nil: none runs): the feed holds it while it runs, and goes
// back to the player's last pick after.
func (f *Feed) Running(p *Pick) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case p == nil && f.running == nil:
		return
	case p != nil && f.running != nil && p.System == f.running.System && p.ROM == f.running.ROM:
		return
	}
	if p != nil {
		c := *p
		p = &c
	}
	f.running = p
	f.nudgeLocked()
}

// Restore says what is shown already (what a previous daemon published), so that a selection
// coming back to it is not shown again. Call it before Run.
func (f *Feed) Restore(s Settled) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shown = &s
}

// Shown is the selection shown last.
func (f *Feed) Shown() (Settled, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shown == nil {
		return Settled{}, false
	}
	return *f.shown, true
}

// Run decides and shows selections until ctx ends: each input re-arms one timer, and when it
// fires — nothing new for the settle time — the selection is decided and shown if it changed.
func (f *Feed) Run(ctx context.Context) error {
	f.mu.Lock()
	wake := f.wakeCh()
	f.mu.Unlock()
	t, fire := f.Clock.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
			t.Reset(f.settle())
			if f.Armed != nil {
				f.Armed()
			}
		case <-fire:
			s, ok := f.decide()
			if ok {
				f.Show(ctx, s)
			}
			if f.Decided != nil {
				f.Decided(s, ok)
			}
		}
	}
}

func (f *Feed) config() Config {
	if f.Config == nil {
		return Config{}
	}
	return f.Config()
}

func (f *Feed) settle() time.Duration {
	if d := f.config().Settle; d > 0 {
		return d
	}
	return DefaultSettle
}

// decide picks what to show now and records it as shown; ok is false when that is what is shown.
func (f *Feed) decide() (Settled, bool) {
	cfg := f.config()
	f.mu.Lock()
	defer f.mu.Unlock()
	want, ok := f.wantLocked(cfg)
	if !ok || f.shown != nil && f.shown.Same(want) {
		return Settled{}, false
	}
	f.shown = &want
	return want, true
}

// wantLocked is what the feed should show: the running game; else the newest pick, when it is
// the player's, or the screensaver's while it runs and its picks are shown; else the player's
// newest pick.
func (f *Feed) wantLocked(cfg Config) (Settled, bool) {
	if f.running != nil {
		return Settled{Pick: *f.running, Source: SourcePlaying}, true
	}
	if n := len(f.recent); n > 0 && cfg.Screensaver {
		if p := f.recent[n-1]; f.screensaverLocked(p) && f.runningSaverLocked(p) {
			return Settled{Pick: p, Source: SourceScreensaver}, true
		}
	}
	for i := len(f.recent) - 1; i >= 0; i-- {
		if p := f.recent[i]; !f.screensaverLocked(p) {
			return Settled{Pick: p, Source: SourceES}, true
		}
	}
	if f.base != nil {
		return Settled{Pick: *f.base, Source: SourceES}, true
	}
	return Settled{}, false
}

// screensaverLocked says whether a pick is the screensaver's: within a run, or racing its start
// or stop. A system-selected is always the player's.
func (f *Feed) screensaverLocked(p Pick) bool {
	if p.ROM == "" {
		return false
	}
	for _, r := range f.runs {
		if p.Boot >= r.start-ScreensaverLead && (r.open || p.Boot <= r.stop+ScreensaverTrail) {
			return true
		}
	}
	return false
}

// runningSaverLocked says whether the screensaver whose pick p is still runs.
func (f *Feed) runningSaverLocked(p Pick) bool {
	n := len(f.runs)
	return n > 0 && f.runs[n-1].open && p.Boot >= f.runs[n-1].start-ScreensaverLead
}
