package clock

import "time"

// event is one armed or disarmed timer, ticker or AfterFunc of a Fake. It is
// armed while it is in Fake.pending. Its mutable fields are guarded by the
// owning Fake's mutex; ch, fn and the Fake pointer never change.
type event struct {
	when   time.Time      // next deadline
	seq    uint64         // when it was last armed, for FIFO ties
	period time.Duration  // > 0 for a ticker
	ch     chan time.Time // nil for an AfterFunc
	fn     func()         // nil for a channel timer or ticker
}

// NewTimer returns a one-shot timer that fires on the returned channel once
// the fake time has advanced by d. A d <= 0 delivers at once, as the stdlib
// does, so a receive right after NewTimer(0) does not wait for an Advance.
func (f *Fake) NewTimer(d time.Duration) (Timer, <-chan time.Time) {
	e := &event{ch: make(chan time.Time, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armLocked(e, d)
	return &fakeTimer{f: f, e: e}, e.ch
}

// NewTicker returns a ticker that ticks on the returned channel once per
// period d of fake time. It panics if d <= 0, as time.NewTicker does.
func (f *Fake) NewTicker(d time.Duration) (Ticker, <-chan time.Time) {
	if d <= 0 {
		panic("clock: non-positive interval for Fake.NewTicker")
	}
	e := &event{ch: make(chan time.Time, 1), period: d}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armLocked(e, d)
	return &fakeTicker{f: f, e: e}, e.ch
}

// AfterFunc returns a timer that calls fn once the fake time has advanced by
// d. fn runs synchronously inside the Advance call that makes it due (see
// Fake). A d <= 0 is due at once but still runs on the next Advance, not
// inside AfterFunc: running it here would call fn on the arming goroutine
// before that goroutine even holds the returned Timer.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	e := &event{fn: fn}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armLocked(e, d)
	return &fakeTimer{f: f, e: e}
}

// armLocked schedules e to fire d from now and wakes BlockUntil waiters.
func (f *Fake) armLocked(e *event, d time.Duration) {
	f.initLocked()
	e.when = f.now.Add(d)
	f.seq++
	e.seq = f.seq
	if f.pending == nil {
		f.pending = make(map[*event]struct{})
	}
	f.pending[e] = struct{}{}
	f.notifyLocked()
	if e.fn == nil && !e.when.After(f.now) {
		f.sendLocked(e)
	}
}

// sendLocked fires a channel timer or ticker at the current time. The send
// never blocks: a full buffer means the receiver is slow, and the stdlib
// drops the firing then too. A ticker re-arms one period after its deadline,
// not after now, so that ticks do not drift; a one-shot timer disarms.
func (f *Fake) sendLocked(e *event) {
	select {
	case e.ch <- f.now:
	default:
	}
	if e.period == 0 {
		f.removeLocked(e)
		return
	}
	e.when = e.when.Add(e.period)
	f.seq++
	e.seq = f.seq
}

// removeLocked disarms e and wakes BlockUntil waiters.
func (f *Fake) removeLocked(e *event) {
	delete(f.pending, e)
	f.notifyLocked()
}

// disarmLocked stops e and drains a value nobody received, as Go 1.23+
// timers do so that no stale tick is seen after Stop or Reset. For a one-shot
// timer an undelivered value means its firing was never observed, so it
// still counts as stopped in time, which is what the stdlib reports too.
func (f *Fake) disarmLocked(e *event) bool {
	_, armed := f.pending[e]
	if armed {
		f.removeLocked(e)
	}
	if e.ch != nil {
		select {
		case <-e.ch:
			if e.period == 0 {
				armed = true
			}
		default:
		}
	}
	return armed
}

// fakeTimer is the Timer returned by Fake.NewTimer and Fake.AfterFunc.
type fakeTimer struct {
	f *Fake
	e *event
}

// Stop disarms the timer; it reports whether it was still pending.
func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.disarmLocked(t.e)
}

// Reset re-arms the timer d from now; it reports whether it was pending.
func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	wasPending := t.f.disarmLocked(t.e)
	t.f.armLocked(t.e, d)
	return wasPending
}

// fakeTicker is the Ticker returned by Fake.NewTicker.
type fakeTicker struct {
	f *Fake
	e *event
}

// Stop turns the ticker off and drops an unreceived tick.
func (t *fakeTicker) Stop() {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.f.disarmLocked(t.e)
}

// Reset restarts the ticker with period d from now. It panics if d <= 0, as
// time.Ticker.Reset does.
func (t *fakeTicker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.f.disarmLocked(t.e)
	t.e.period = d
	t.f.armLocked(t.e, d)
}
