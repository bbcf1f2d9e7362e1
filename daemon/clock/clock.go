// Package clock owns the daemon's notion of time. Daemon code that sleeps,
// polls, retries or debounces takes a Clock instead of calling package time
// directly: production passes Real, and tests pass a *Fake, which only moves
// when the test advances it. A test therefore waits for the code under test
// to arm its timers (Fake.BlockUntil) and then moves time on (Fake.Advance)
// instead of sleeping and polling for an effect.
//
// A test drives code that waits like this:
//
//	clk := clock.NewFake(start)
//	go worker.Run(ctx, clk)       // arms, say, a 30s retry timer
//	if err := clk.BlockUntil(ctx, 1); err != nil {
//		t.Fatal(err)              // the worker never reached its wait
//	}
//	clk.Advance(30 * time.Second) // fires it; no sleep, no polling
//
// The shape follows tailscale's tstime.Clock: the methods of package time
// that schedule work, with timers and tickers returned as small interfaces
// plus their channel, because an interface cannot expose time.Timer's C field.
//
// The package does not import "testing": Real is linked into the production
// binary, and Fake is an ordinary type that tests in any package and the
// simulators can share.
package clock

import "time"

// Clock is the subset of package time that the daemon schedules work with.
// Every method follows the semantics of its package time namesake.
//
// It is declared here rather than by each consumer because it is the one
// seam shared by every package that waits: declaring it once keeps Real and
// Fake interchangeable everywhere.
type Clock interface {
	// Now returns the current time, as time.Now.
	Now() time.Time
	// NewTimer returns a one-shot timer and the channel it fires on, as
	// time.NewTimer.
	NewTimer(d time.Duration) (Timer, <-chan time.Time)
	// NewTicker returns a ticker and the channel it ticks on, as
	// time.NewTicker. It panics if d <= 0.
	NewTicker(d time.Duration) (Ticker, <-chan time.Time)
	// AfterFunc calls f once d has elapsed, as time.AfterFunc.
	AfterFunc(d time.Duration, f func()) Timer
	// Since returns the time elapsed since t, as time.Since.
	Since(t time.Time) time.Duration
}

// Timer is a pending NewTimer or AfterFunc event. *time.Timer satisfies it.
type Timer interface {
	// Stop prevents the timer from firing. It reports whether the call
	// stopped the timer before its firing was observed; false means it had
	// already fired (and, for a channel timer, been received) or stopped.
	Stop() bool
	// Reset re-arms the timer to fire after d and reports, like Stop,
	// whether it was still pending. A stale value is never received after
	// Reset returns.
	Reset(d time.Duration) bool
}

// Ticker is a running NewTicker. *time.Ticker satisfies it.
type Ticker interface {
	// Stop turns the ticker off; no tick is received after it returns.
	Stop()
	// Reset stops the ticker and restarts it with period d, counted from
	// now. It panics if d <= 0.
	Reset(d time.Duration)
}

// Real is the stdlib clock. Its zero value is ready to use, so a struct
// holding a Clock field can default to Real{} without a constructor.
type Real struct{}

var _ Clock = Real{}

// Now calls time.Now.
func (Real) Now() time.Time { return time.Now() }

// NewTimer calls time.NewTimer.
func (Real) NewTimer(d time.Duration) (Timer, <-chan time.Time) {
	t := time.NewTimer(d)
	return t, t.C
}

// NewTicker calls time.NewTicker.
func (Real) NewTicker(d time.Duration) (Ticker, <-chan time.Time) {
	t := time.NewTicker(d)
	return t, t.C
}

// AfterFunc calls time.AfterFunc; f runs in its own goroutine.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Since calls time.Since.
func (Real) Since(t time.Time) time.Duration { return time.Since(t) }

// Or returns c, or Real{} when c is nil, so that a dependency struct's
// optional Clock field can be left unset in production code.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}
