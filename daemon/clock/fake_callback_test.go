package clock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestFakeTickerFiresPerPeriod(t *testing.T) {
	f := NewFake(start)
	_, ch := f.NewTicker(time.Second)
	// Callbacks between the ticks drain the channel, so each tick that
	// Advance(4s) passes must be seen: one firing per period, in order.
	var got []time.Time
	for _, at := range []time.Duration{1500, 2500, 3500} {
		f.AfterFunc(at*time.Millisecond, func() {
			if v, ok := poll(ch); ok {
				got = append(got, v)
			}
		})
	}
	f.Advance(4 * time.Second)
	want := []time.Time{start.Add(time.Second), start.Add(2 * time.Second), start.Add(3 * time.Second)}
	if len(got) != len(want) {
		t.Fatalf("callbacks received %v, want %v", got, want)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("tick %d = %v, want %v", i, got[i], want[i])
		}
	}
	if v, ok := poll(ch); !ok || !v.Equal(start.Add(4*time.Second)) {
		t.Errorf("buffered tick = (%v, %v), want (%v, true)", v, ok, start.Add(4*time.Second))
	}
}

func TestFakeTickerDropsWhenFull(t *testing.T) {
	f := NewFake(start)
	tk, ch := f.NewTicker(time.Second)
	f.Advance(5 * time.Second) // five ticks, nobody reading
	if n := len(ch); n != 1 {
		t.Fatalf("len(ch) = %d, want 1: the buffer holds one tick", n)
	}
	if v, _ := poll(ch); !v.Equal(start.Add(time.Second)) {
		t.Errorf("kept tick %v, want the first, %v; later ones drop", v, start.Add(time.Second))
	}
	f.Advance(time.Second)
	if v, ok := poll(ch); !ok || !v.Equal(start.Add(6*time.Second)) {
		t.Errorf("next tick = (%v, %v), want (%v, true): period must not drift", v, ok, start.Add(6*time.Second))
	}

	tk.Reset(10 * time.Second)
	f.Advance(9 * time.Second)
	if v, ok := poll(ch); ok {
		t.Errorf("tick %v before the reset period passed", v)
	}
	f.Advance(time.Second)
	if _, ok := poll(ch); !ok {
		t.Error("no tick one reset period after Reset")
	}

	f.Advance(10 * time.Second) // leave a tick buffered, then stop
	tk.Stop()
	f.Advance(time.Hour)
	if v, ok := poll(ch); ok {
		t.Errorf("received %v after Stop, want nothing (stale ticks are dropped)", v)
	}
	if n := f.Pending(); n != 0 {
		t.Errorf("Pending() after Stop = %d, want 0", n)
	}
}

func TestFakeAfterFunc(t *testing.T) {
	tests := []struct {
		name     string
		stopAt   time.Duration // Stop after this much advance; < 0 never
		wantStop bool
		wantRuns int
	}{
		{"runs once", -1, false, 1},
		{"stopped before", 5 * time.Second, true, 0},
		{"stopped after", 10 * time.Second, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFake(start)
			runs := 0
			tm := f.AfterFunc(10*time.Second, func() { runs++ })
			if tt.stopAt >= 0 {
				f.Advance(tt.stopAt)
				if got := tm.Stop(); got != tt.wantStop {
					t.Errorf("Stop() = %v, want %v", got, tt.wantStop)
				}
			}
			f.Advance(time.Hour)
			if runs != tt.wantRuns {
				t.Errorf("callback ran %d times, want %d", runs, tt.wantRuns)
			}
		})
	}
}

func TestFakeCallbacksMayUseTheClock(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *Fake) (got, want int)
	}{
		{"reset itself", func(f *Fake) (int, int) {
			runs := 0
			var tm Timer
			tm = f.AfterFunc(time.Second, func() {
				if runs++; runs < 3 {
					tm.Reset(time.Second)
				}
			})
			f.Advance(time.Minute)
			return runs, 3
		}},
		{"arm another", func(f *Fake) (int, int) {
			runs := 0
			f.AfterFunc(time.Second, func() {
				runs++
				f.AfterFunc(time.Second, func() { runs++ })
			})
			f.Advance(2 * time.Second)
			return runs, 2
		}},
		{"stop another", func(f *Fake) (int, int) {
			other, ch := f.NewTimer(2 * time.Second)
			f.AfterFunc(time.Second, func() { other.Stop() })
			f.Advance(time.Minute)
			fires := 0
			if _, ok := poll(ch); ok {
				fires++
			}
			return fires, 0
		}},
		{"read and advance", func(f *Fake) (int, int) {
			runs := 0
			f.AfterFunc(time.Second, func() {
				_ = f.Now()
				_ = f.Pending()
				f.Advance(time.Second)
			})
			f.AfterFunc(2*time.Second, func() { runs++ })
			f.Advance(time.Second)
			return runs, 1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got, want int
			finishes(t, "Advance", func() { got, want = tt.run(NewFake(start)) })
			if got != want {
				t.Errorf("got %d, want %d", got, want)
			}
		})
	}
}

func TestFakeBlockUntilWaitsForArm(t *testing.T) {
	f := NewFake(start)
	ctx := testContext(t)
	fired := make(chan time.Time)
	for range 3 {
		go func() {
			_, ch := f.NewTimer(time.Minute)
			fired <- <-ch
		}()
	}
	if err := f.BlockUntil(ctx, 3); err != nil {
		t.Fatalf("BlockUntil(3): %v", err)
	}
	f.Advance(time.Minute)
	for i := range 3 {
		select {
		case got := <-fired:
			if want := start.Add(time.Minute); !got.Equal(want) {
				t.Errorf("goroutine %d got %v, want %v", i, got, want)
			}
		case <-ctx.Done():
			t.Fatalf("goroutine %d never saw its timer fire", i)
		}
	}
}

func TestFakeBlockUntilEndsWithContext(t *testing.T) {
	f := NewFake(start)
	if err := f.BlockUntil(context.Background(), 0); err != nil {
		t.Errorf("BlockUntil(0) = %v, want nil at once", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.BlockUntil(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("BlockUntil on a cancelled context = %v, want context.Canceled", err)
	}
}

// TestFakeConcurrentUse is for the race detector: many goroutines arm, reset
// and stop timers while another advances the clock.
func TestFakeConcurrentUse(t *testing.T) {
	f := NewFake(start)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				tm, _ := f.NewTimer(time.Duration(i+j) * time.Millisecond)
				af := f.AfterFunc(time.Millisecond, func() { _ = f.Now() })
				tm.Reset(time.Millisecond)
				tm.Stop()
				af.Stop()
			}
		})
	}
	finishes(t, "concurrent use", func() {
		for range 200 {
			f.Advance(time.Millisecond)
		}
		wg.Wait()
	})
}
