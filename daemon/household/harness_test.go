package household

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

var paris = func() *time.Location {
	l, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		panic(err) // the tests' days and bedtimes are Paris's (a daylight-saving zone)
	}
	return l
}()

// at is a moment in Paris.
func at(y int, mo time.Month, d, h, mi int) time.Time { return time.Date(y, mo, d, h, mi, 0, 0, paris) }

// endCall is one Ender.End.
type endCall struct {
	Game string
	Save bool
}

// cab is the cabinet the enforcer sees: its clocks (the real time is the
// fake clock's; the wall clock is it plus skew, set or not; the boot clock
// counts from the boot), the running game, a screen and an ender that
// record, and the store.
type cab struct {
	t   *testing.T
	clk *clock.Fake
	st  *store.Store
	dir string

	mu       sync.Mutex
	bootID   string
	bootAt   time.Time
	skew     time.Duration
	synced   bool
	run      Running
	applied  chan struct{}
	raUp     bool
	plan     SavePlan
	shown    []string
	notes    []string
	ends     []endCall
	events   []Event
	status   Status
	rules    Rules
	changed  chan struct{}
	endKeeps bool // End does not stop the game (a launch ES did not list yet)
}

func newCab(t *testing.T, start time.Time, rules Rules) *cab {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &cab{t: t, clk: clock.NewFake(start), st: st, dir: dir, bootID: "boot1", bootAt: start.Add(-time.Hour),
		synced: true, applied: make(chan struct{}), raUp: true, plan: SaveNewSlot, rules: rules, changed: make(chan struct{})}
}

// enforcer is a new enforcer over c (a restart of the daemon is a second one).
func (c *cab) enforcer() *Enforcer {
	return &Enforcer{Clock: c.clk, Log: zerolog.Nop(), Store: c.st, Now: c.now, Location: paris,
		Synced:  func(time.Time) bool { c.mu.Lock(); defer c.mu.Unlock(); return c.synced },
		Rules:   func() Rules { c.mu.Lock(); defer c.mu.Unlock(); return c.rules },
		Running: func() Running { c.mu.Lock(); defer c.mu.Unlock(); return c.run },
		Applied: func() <-chan struct{} { c.mu.Lock(); defer c.mu.Unlock(); return c.applied },
		Screen:  screen{c}, Ender: ender{c},
		Report: func(st Status) { c.record(func() { c.status = st }) },
		Event:  func(ev Event) { c.record(func() { c.events = append(c.events, ev) }) }}
}

func (c *cab) now() tracker.Stamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.clk.Now()
	return tracker.Stamp{At: n.Add(c.skew), Boot: n.Sub(c.bootAt), BootID: c.bootID}
}

// record changes what was seen and wakes the waits.
func (c *cab) record(fn func()) {
	c.mu.Lock()
	fn()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *cab) wake() <-chan struct{} { c.mu.Lock(); defer c.mu.Unlock(); return c.changed }

// apply is a tracker apply: the running game changed.
func (c *cab) apply(fn func(r *Running)) {
	c.record(func() {
		fn(&c.run)
		close(c.applied)
		c.applied = make(chan struct{})
	})
}

// start launches game now.
func (c *cab) start(game string) {
	n := c.now()
	c.apply(func(r *Running) {
		*r = Running{Playing: true, BootID: n.BootID, From: n.Boot, Name: game, System: "snes", Rom: "/userdata/roms/snes/" + game + ".sfc",
			LastBootID: r.LastBootID, LastFrom: r.LastFrom, LastEnd: r.LastEnd}
	})
}

// stop ends the running game now (the player quit).
func (c *cab) stop() {
	n := c.now()
	c.apply(func(r *Running) {
		*r = Running{LastBootID: r.BootID, LastFrom: r.From, LastEnd: n.Boot}
	})
}

// reboot starts a new boot now with the wall clock skewed and set or not.
func (c *cab) reboot(id string, skew time.Duration, synced bool) {
	c.record(func() {
		c.bootID, c.bootAt, c.skew, c.synced = id, c.clk.Now(), skew, synced
		c.run = Running{}
	})
}

func (c *cab) setClock(skew time.Duration, synced bool) {
	c.record(func() { c.skew, c.synced = skew, synced })
}

type screen struct{ c *cab }

func (s screen) OverGame(ctx context.Context, text string) error {
	c := s.c
	c.mu.Lock()
	up := c.raUp && c.run.Playing
	c.mu.Unlock()
	if !up {
		return context.DeadlineExceeded
	}
	c.record(func() { c.shown = append(c.shown, text) })
	return nil
}

func (s screen) Notify(ctx context.Context, text string) error {
	s.c.record(func() { s.c.notes = append(s.c.notes, text) })
	return nil
}

type ender struct{ c *cab }

func (e ender) Plan(ctx context.Context, g Running) SavePlan {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	return e.c.plan
}

func (e ender) End(ctx context.Context, g Running, save bool) (Ending, error) {
	c := e.c
	c.mu.Lock()
	keeps, plan := c.endKeeps, c.plan
	c.mu.Unlock()
	c.record(func() { c.ends = append(c.ends, endCall{Game: g.Name, Save: save}) })
	if !keeps {
		c.stop()
	}
	if save && plan.Saves() {
		return Ending{Saved: true}, nil
	}
	if save {
		return Ending{SaveNote: plan.String()}, nil
	}
	return Ending{}, nil
}

// to moves the real time to t and runs a step (e.step is the loop's body).
func (c *cab) to(e *Enforcer, t time.Time) Status {
	c.t.Helper()
	if d := t.Sub(c.clk.Now()); d > 0 {
		c.clk.Advance(d)
	}
	e.step(context.Background())
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// awaitShown waits for a message over the game containing want.
func (c *cab) awaitShown(want string) {
	c.t.Helper()
	cabinettest.Await(c.t, "over the game: "+want, c.wake, func() (bool, string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return slices.ContainsFunc(c.shown, func(s string) bool { return strings.Contains(s, want) }), strings.Join(c.shown, " | ")
	})
}

// awaitNote waits for an ES notification containing want.
func (c *cab) awaitNote(want string) {
	c.t.Helper()
	cabinettest.Await(c.t, "notification: "+want, c.wake, func() (bool, string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return slices.ContainsFunc(c.notes, func(s string) bool { return strings.Contains(s, want) }), strings.Join(c.notes, " | ")
	})
}

// lastEnd is the last End call, and how many there were.
func (c *cab) lastEnd() (endCall, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ends) == 0 {
		return endCall{}, 0
	}
	return c.ends[len(c.ends)-1], len(c.ends)
}

// eventsOf are the events of a kind so far.
func (c *cab) eventsOf(kind string) []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Event
	for _, e := range c.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (c *cab) playing() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.run.Playing }

// rulesOf parses keys (without the prefix) over the defaults, failing on an error.
func rulesOf(t *testing.T, kv ...string) Rules {
	t.Helper()
	v := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		v[Prefix+kv[i]] = kv[i+1]
	}
	r, errs := Parse(v)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return r
}
