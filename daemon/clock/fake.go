package clock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// epoch is where a zero Fake starts. A fixed instant keeps tests
// deterministic, and a non-zero one keeps Now().IsZero() false, which daemon
// code uses to mean "never happened".
var epoch = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)

// Fake is a Clock whose time only moves when Advance, AdvanceTo or
// AdvanceToNext is called. Those calls fire, in deadline order, every timer,
// ticker and AfterFunc that falls due; ties fire in the order they were armed.
// The zero value starts at a fixed instant (2024-01-01 UTC) and is ready to
// use; NewFake starts elsewhere. A Fake is safe for concurrent use.
//
// AfterFunc callbacks run synchronously, on the goroutine that advances the
// clock, with no lock held. Unlike the stdlib's own goroutine, that means
// every due callback has finished when Advance returns, so the test can
// check its effects without waiting. Because no lock is held, a callback may
// call the clock freely: Now, Reset its own timer, AfterFunc again, Stop
// another timer, even Advance. A callback that blocks, blocks Advance.
//
// Channel timers and tickers have a buffer of 1 and drop a firing when it is
// full, as the stdlib does for slow receivers. Stop and Reset discard a value
// nobody received, matching Go 1.23+ timers.
type Fake struct {
	mu      sync.Mutex
	started bool // now has been set, by NewFake or by the first use
	now     time.Time
	seq     uint64              // arming order, to fire deadline ties FIFO
	pending map[*event]struct{} // armed timers, tickers and AfterFuncs
	changed chan struct{}       // closed and replaced whenever pending changes
}

var _ Clock = (*Fake)(nil)

// NewFake returns a Fake whose time starts at start.
func NewFake(start time.Time) *Fake {
	return &Fake{started: true, now: start}
}

// initLocked gives a zero Fake its start time on first use.
func (f *Fake) initLocked() {
	if !f.started {
		f.now, f.started = epoch, true
	}
}

// Now returns the fake's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initLocked()
	return f.now
}

// Since returns the fake time elapsed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// Pending returns how many timers, tickers and AfterFuncs are armed. A
// stopped ticker is not pending; a running one always is.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// BlockUntil returns nil once at least n timers, tickers and AfterFuncs are
// pending, or ctx's error if it ends first. It is how a test waits for the
// code under test to reach its wait before advancing time: it wakes on every
// arm and disarm, never by polling.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		have := len(f.pending)
		if have >= n {
			f.mu.Unlock()
			return nil
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		changed := f.changed
		f.mu.Unlock()

		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("clock: wait for %d pending timers (have %d): %w", n, have, ctx.Err())
		}
	}
}

// Advance moves time forward by d, firing everything that falls due on the
// way. It panics if d < 0: fake time never runs backwards.
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		panic("clock: Fake.Advance with negative duration")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initLocked()
	f.runLocked(f.now.Add(d))
}

// AdvanceTo moves time forward to t, firing everything that falls due on
// the way. A t at or before the current time only fires what is already due;
// it does not move time backwards, because with several goroutines advancing
// the clock, t may legitimately have passed already.
func (f *Fake) AdvanceTo(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initLocked()
	f.runLocked(t)
}

// AdvanceToNext jumps to the earliest pending deadline, fires what falls due
// there, and returns how far time moved. With nothing pending it does
// nothing and returns 0; Pending tells that apart from a timer already due.
func (f *Fake) AdvanceToNext() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initLocked()
	e := f.nextLocked()
	if e == nil {
		return 0
	}
	start := f.now
	f.runLocked(e.when)
	return f.now.Sub(start)
}

// runLocked fires, earliest first, every event due at or before target (or
// now, if target has passed), then sets the time to target. It is called and
// returns with f.mu held, but
// releases it around each AfterFunc callback so that the callback can use
// the clock. The next event is looked up afresh after every firing, so
// anything a callback arms, resets or stops is taken into account.
func (f *Fake) runLocked(target time.Time) {
	if target.Before(f.now) {
		target = f.now
	}
	for {
		e := f.nextLocked()
		if e == nil || e.when.After(target) {
			break
		}
		// An AfterFunc armed with d <= 0 is due before now; firing it must
		// not move time backwards.
		if e.when.After(f.now) {
			f.now = e.when
		}
		if e.fn == nil {
			f.sendLocked(e)
			continue
		}
		f.removeLocked(e)
		fn := e.fn
		f.mu.Unlock()
		fn()
		f.mu.Lock()
	}
	if target.After(f.now) {
		f.now = target
	}
}

// nextLocked returns the pending event with the earliest deadline, ties
// broken by arming order, or nil. A linear scan is enough: a test has a
// handful of timers, and it keeps Reset and Stop trivial.
func (f *Fake) nextLocked() *event {
	var next *event
	for e := range f.pending {
		if next == nil || e.when.Before(next.when) || (e.when.Equal(next.when) && e.seq < next.seq) {
			next = e
		}
	}
	return next
}

// notifyLocked wakes every BlockUntil waiting on the current change channel.
func (f *Fake) notifyLocked() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}
