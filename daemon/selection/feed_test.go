package selection

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// rig runs a Feed on a fake clock and records what it shows. Every input is followed by a wait
// for the feed to re-arm its timer, and every Advance by a wait for the decision it caused, so
// nothing is left to timing.
type rig struct {
	t     *testing.T
	f     *Feed
	clk   *clock.Fake
	armed chan struct{}
	dec   chan bool

	mu    sync.Mutex
	cfg   Config
	shown []Settled
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	r := &rig{t: t, clk: clock.NewFake(time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC)), cfg: cfg,
		armed: make(chan struct{}, 16), dec: make(chan bool, 16)}
	r.f = &Feed{Clock: r.clk,
		Config: func() Config { r.mu.Lock(); defer r.mu.Unlock(); return r.cfg },
		Show: func(_ context.Context, s Settled) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.shown = append(r.shown, s)
		},
		Armed:   func() { r.armed <- struct{}{} },
		Decided: func(_ Settled, shown bool) { r.dec <- shown }}
	ctx, cancel := context.WithCancel(cabinettest.Context(t))
	done := make(chan struct{})
	go func() { defer close(done); r.f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func (r *rig) settle() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.Settle > 0 {
		return r.cfg.Settle
	}
	return DefaultSettle
}

// wait waits for the feed to take an input (its timer re-armed).
func (r *rig) wait() {
	r.t.Helper()
	select {
	case <-r.armed:
	case <-time.After(10 * time.Second):
		r.t.Fatal("the feed never re-armed its timer")
	}
}

// game and system are picks of ES's at boot (seconds since boot).
func game(name string, boot float64) Pick {
	return Pick{System: "nes", ROM: "/userdata/roms/nes/" + name + ".nes", Name: name, Boot: time.Duration(boot * float64(time.Second))}
}

func system(name string, boot float64) Pick {
	return Pick{System: name, Boot: time.Duration(boot * float64(time.Second))}
}

func sec(boot float64) time.Duration { return time.Duration(boot * float64(time.Second)) }

func (r *rig) sel(p Pick)              { r.f.Select(p); r.wait() }
func (r *rig) saverOn(boot float64)    { r.f.ScreensaverStart(sec(boot)); r.wait() }
func (r *rig) saverOff(boot float64)   { r.f.ScreensaverStop(sec(boot)); r.wait() }
func (r *rig) running(p *Pick)         { r.f.Running(p); r.wait() }
func (r *rig) advance(d time.Duration) { r.clk.Advance(d) }

// settled moves the clock by the settle time and returns whether the decision showed something.
func (r *rig) settled() bool {
	r.t.Helper()
	r.clk.Advance(r.settle())
	select {
	case shown := <-r.dec:
		return shown
	case <-time.After(10 * time.Second):
		r.t.Fatal("no decision after the settle time")
		return false
	}
}

// expect checks what was shown so far, as "source:name" (a system's name is its own).
func (r *rig) expect(want ...string) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var got []string
	for _, s := range r.shown {
		n := s.Name
		if s.ROM == "" {
			n = s.System
		}
		got = append(got, string(s.Source)+":"+n)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		r.t.Errorf("shown %v, want %v", got, want)
	}
}

// TestSettle: a scroll shows only where it stops, once it has held for the settle time; a
// scroll that comes back to what is shown shows nothing; a system is shown like a game.
func TestSettle(t *testing.T) {
	r := newRig(t, Config{})
	for i, n := range []string{"a", "b", "c", "d"} {
		r.sel(game(n, 10+float64(i)*0.05))
		r.advance(DefaultSettle - time.Millisecond) // each step comes just before the settle time
	}
	r.expect()
	if !r.settled() {
		t.Fatal("the last pick was not shown once it held")
	}
	r.expect("es:d")
	r.sel(game("e", 12))
	r.sel(game("d", 12.1))
	if r.settled() {
		t.Error("a scroll back to the game shown was shown again")
	}
	r.sel(system("snes", 13))
	r.settled()
	r.sel(game("d", 14))
	r.settled()
	r.expect("es:d", "es:snes", "es:d")
}

// TestSettleConfigured: cabinet.selected.settle_ms applies at the next input.
func TestSettleConfigured(t *testing.T) {
	r := newRig(t, Config{Settle: 800 * time.Millisecond})
	r.sel(game("a", 10))
	r.advance(799 * time.Millisecond)
	r.expect()
	r.advance(time.Millisecond)
	if !<-r.dec {
		t.Fatal("not shown after 800 ms")
	}
	r.expect("es:a")
}

// TestScreensaverPicksNotShown: the screensaver's picks (within its run, or racing its start
// and stop) are not shown, and the player's pick stays; after the stop nothing changes, and the
// player's next pick is shown.
func TestScreensaverPicksNotShown(t *testing.T) {
	r := newRig(t, Config{})
	r.sel(game("mine", 10))
	r.settled()
	// The first random game's wrapper wins the race with screensaver-start's.
	r.sel(game("ss1", 99.999))
	r.saverOn(100)
	if r.settled() {
		t.Error("the screensaver's first pick, taken before its start, was shown")
	}
	r.sel(game("ss2", 130))
	r.settled()
	r.sel(game("ss3", 160))
	r.saverOff(160.1)
	r.sel(game("ss4", 160.2)) // the launch's game-selected, taken after the stop
	if r.settled() {
		t.Error("the player's pick was shown again though it is the one shown")
	}
	r.sel(game("next", 170))
	r.settled()
	r.expect("es:mine", "es:next")
}

// TestScreensaverPicksShown: with cabinet.selected.screensaver_picks the screensaver's picks are
// shown, marked; when it stops, the player's last pick comes back (ES says nothing then).
func TestScreensaverPicksShown(t *testing.T) {
	r := newRig(t, Config{Screensaver: true})
	r.sel(game("mine", 10))
	r.settled()
	r.saverOn(100)
	r.sel(game("ss1", 100.01))
	r.settled()
	r.sel(game("ss2", 130))
	r.settled()
	r.saverOff(150)
	r.settled()
	r.expect("es:mine", "screensaver:ss1", "screensaver:ss2", "es:mine")

	// The player's next pick, well after the stop.
	r.sel(game("after", 200))
	r.settled()
	r.expect("es:mine", "screensaver:ss1", "screensaver:ss2", "es:mine", "es:after")
}

// TestScreensaverStopRace: the screensaver's pick that raced its stop (taken within
// ScreensaverTrail after it) is not the player's, and neither is a pick just before its start;
// a pick well after the stop is.
func TestScreensaverStopRace(t *testing.T) {
	r := newRig(t, Config{})
	r.sel(game("mine", 10))
	r.settled()
	r.saverOn(100)
	r.saverOff(110)
	r.sel(game("late", 110+ScreensaverTrail.Seconds()-0.01))
	if r.settled() {
		t.Error("a pick racing the screensaver's stop was shown")
	}
	r.sel(game("player", 110+ScreensaverTrail.Seconds()+0.1))
	r.settled()
	r.expect("es:mine", "es:player")
}

// TestRunningGameHolds: while a game runs the feed shows it and nothing else; after, the
// player's last pick comes back. A screensaver launch (its pick, its stop, the game) shows only
// the game, then the pick the player made before the screensaver.
func TestRunningGameHolds(t *testing.T) {
	r := newRig(t, Config{})
	r.sel(game("mine", 10))
	r.settled()
	g := game("played", 20)
	r.running(&g)
	r.settled()
	r.sel(game("during", 30))
	if r.settled() {
		t.Error("a pick while the game runs was shown")
	}
	r.running(nil)
	r.settled()
	r.expect("es:mine", "playing:played", "es:during")

	r.saverOn(100)
	r.sel(game("shown", 130))
	r.settled()
	r.sel(game("shown", 140)) // the launch fires game-selected for the game shown…
	r.saverOff(140.001)       // …then screensaver-stop…
	launched := game("shown", 140.002)
	r.running(&launched) // …then game-start
	r.settled()
	r.running(nil)
	r.settled()
	r.expect("es:mine", "playing:played", "es:during", "playing:shown", "es:during")
}

// TestPicksBounded: the feed keeps a bounded number of picks, and the player's pick older than
// those (the screensaver's picks pushed it out) is still the one restored.
func TestPicksBounded(t *testing.T) {
	r := newRig(t, Config{Screensaver: true})
	r.sel(game("mine", 10))
	r.settled()
	r.saverOn(100)
	for i := 0; i < 3*maxRecent; i++ {
		r.sel(game(fmt.Sprintf("ss%d", i), 101+float64(i)))
	}
	r.settled()
	r.saverOff(1000)
	r.settled()
	r.expect("es:mine", fmt.Sprintf("screensaver:ss%d", 3*maxRecent-1), "es:mine")
	r.f.mu.Lock()
	n := len(r.f.recent)
	r.f.mu.Unlock()
	if n > maxRecent {
		t.Errorf("%d picks kept, want at most %d", n, maxRecent)
	}
}

// TestRestore: what a previous daemon showed is not shown again.
func TestRestore(t *testing.T) {
	r := newRig(t, Config{})
	r.f.Restore(Settled{Pick: Pick{System: "nes", ROM: "/userdata/roms/nes/mine.nes", Name: "mine"}, Source: SourceES})
	r.sel(game("mine", 10))
	if r.settled() {
		t.Error("the restored selection was shown again")
	}
	r.expect()
}

// TestScreensaverLead: a pick taken just before the screensaver's start (its first game, whose
// wrapper won the race) is the screensaver's; one taken well before is the player's.
func TestScreensaverLead(t *testing.T) {
	r := newRig(t, Config{})
	r.sel(game("mine", 99.5))
	r.sel(game("first", 100-ScreensaverLead.Seconds()+0.01))
	r.saverOn(100)
	r.settled()
	r.expect("es:mine")
}
