package clock

import (
	"context"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// testContext returns a context that ends at cabinettest.Deadline.
func testContext(t *testing.T) context.Context { return cabinettest.Context(t) }

// poll reports what is buffered on ch without waiting. Fake delivers every
// due value before Advance returns, so an empty channel here is a real miss.
func poll(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

// finishes runs fn on its own goroutine and fails the test if it has not
// returned by cabinettest.Deadline, so a deadlock shows as a failure, not a hang.
func finishes(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("%s did not return within %v: deadlock?", what, cabinettest.Deadline)
	}
}

// awaitTime waits for a value from a real timer or ticker channel.
func awaitTime(t *testing.T, what string, ch <-chan time.Time) time.Time {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("%s: nothing received within %v", what, cabinettest.Deadline)
		return time.Time{}
	}
}

func TestRealTimerFires(t *testing.T) {
	var c Clock = Real{}
	start := c.Now()
	_, ch := c.NewTimer(time.Millisecond)
	got := awaitTime(t, "timer", ch)
	if got.Before(start.Add(time.Millisecond)) {
		t.Errorf("timer fired at %v, want at least 1ms after %v", got, start)
	}
	if since := c.Since(start); since < time.Millisecond {
		t.Errorf("Since(start) = %v, want >= 1ms", since)
	}
}

func TestRealTimerStopAndReset(t *testing.T) {
	tm, ch := Real{}.NewTimer(time.Hour)
	if got := tm.Stop(); !got {
		t.Errorf("Stop on a pending timer = %v, want true", got)
	}
	if got := tm.Stop(); got {
		t.Errorf("second Stop = %v, want false", got)
	}
	if got := tm.Reset(time.Millisecond); got {
		t.Errorf("Reset of a stopped timer = %v, want false", got)
	}
	awaitTime(t, "reset timer", ch)
}

func TestRealTickerAndAfterFunc(t *testing.T) {
	tk, ch := Real{}.NewTicker(time.Millisecond)
	defer tk.Stop()
	first := awaitTime(t, "first tick", ch)
	if second := awaitTime(t, "second tick", ch); !second.After(first) {
		t.Errorf("second tick %v not after first %v", second, first)
	}

	ran := make(chan struct{})
	Real{}.AfterFunc(time.Millisecond, func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("AfterFunc did not run within %v", cabinettest.Deadline)
	}
}

func TestOr(t *testing.T) {
	fake := NewFake(epoch)
	tests := []struct {
		name string
		in   Clock
		want Clock
	}{
		{"nil is Real", nil, Real{}},
		{"Real stays", Real{}, Real{}},
		{"Fake stays", fake, fake},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Or(tt.in); got != tt.want {
				t.Errorf("Or(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
