//go:build !release

package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// The playroom's clock, per 10 ms of real time while the demo waits (at
// --speed 1): 3 s while a game runs (300 times real time), 15 s while none
// does, and 100 ms while the daemon acts on ES and RetroArch or waits for
// its ES watcher (3 s on the clock) to see a game start or end.
const (
	nightTick  = 10 * time.Millisecond
	playStep   = 3 * time.Second
	idleStep   = 15 * time.Second
	settleStep = 100 * time.Millisecond
	nightLimit = 30 * time.Second // of real time, for one wait (until)
)

// nightClock is the playroom's clock: a fake clock that run moves on every
// tick, by the tick (real time) or, inside until, by the step given.
type nightClock struct {
	fake  *clock.Fake
	start time.Time
	step  atomic.Int64
}

func (n *nightClock) run(ctx context.Context) {
	t := time.NewTicker(nightTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d := time.Duration(n.step.Load())
		if d == 0 {
			d = nightTick
		}
		n.fake.Advance(d)
	}
}

// stamp is the tracker's moment on the playroom's clock (its wall clock
// set, and a boot clock that started an hour before the evening).
func (n *nightClock) stamp() tracker.Stamp {
	now := n.fake.Now()
	return tracker.Stamp{At: now, Boot: time.Hour + now.Sub(n.start), BootID: "playroom-boot"}
}

func (n *nightClock) at() string { return n.fake.Now().Format("15:04:05") }

// until runs the clock by step a tick (0: at real time's pace) until cond
// holds, for at most within on the clock.
func (n *nightClock) until(ctx context.Context, what string, step, within time.Duration, cond func() bool) error {
	n.step.Store(int64(step))
	defer n.step.Store(0)
	by := n.fake.Now().Add(within)
	deadline := time.Now().Add(nightLimit)
	for !cond() {
		if n.fake.Now().After(by) || time.Now().After(deadline) {
			return fmt.Errorf("%s did not happen by %s", what, by.Format("15:04:05"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(nightTick):
		}
	}
	return nil
}
