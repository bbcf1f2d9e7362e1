package clock

import (
	"testing"
	"time"
)

var start = time.Date(2030, time.June, 1, 12, 0, 0, 0, time.UTC)

func TestFakeStartTime(t *testing.T) {
	var zero Fake
	if got := zero.Now(); !got.Equal(epoch) || got.IsZero() {
		t.Errorf("zero Fake Now() = %v, want %v", got, epoch)
	}
	f := NewFake(start)
	if got := f.Now(); !got.Equal(start) {
		t.Errorf("NewFake(start).Now() = %v, want %v", got, start)
	}
	f.Advance(90 * time.Second)
	if got := f.Since(start); got != 90*time.Second {
		t.Errorf("Since(start) after Advance(90s) = %v, want 90s", got)
	}
}

func TestFakeTimerFiresOnceAtDeadline(t *testing.T) {
	tests := []struct {
		name  string
		d     time.Duration
		steps []time.Duration // advances, in order
		fires int             // index of the step after which it fires
	}{
		{"exact", 10 * time.Second, []time.Duration{10 * time.Second, time.Hour}, 0},
		{"just before then at", 10 * time.Second, []time.Duration{10*time.Second - 1, 1, time.Hour}, 1},
		{"overshoot", 10 * time.Second, []time.Duration{time.Second, time.Minute, time.Hour}, 1},
		{"zero delay", 0, []time.Duration{0, time.Hour}, 0},
		{"negative delay", -time.Second, []time.Duration{0, time.Hour}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFake(start)
			_, ch := f.NewTimer(tt.d)
			for i, step := range tt.steps {
				f.Advance(step)
				got, ok := poll(ch)
				if ok != (i == tt.fires) {
					t.Fatalf("after step %d (now +%v): fired = %v, want %v", i, f.Since(start), ok, i == tt.fires)
				}
				if want := start.Add(max(tt.d, 0)); ok && !got.Equal(want) {
					t.Errorf("fired with %v, want deadline %v", got, want)
				}
			}
			if n := f.Pending(); n != 0 {
				t.Errorf("Pending() after firing = %d, want 0", n)
			}
		})
	}
}

func TestFakeTimerStop(t *testing.T) {
	tests := []struct {
		name     string
		advance  time.Duration // before Stop
		receive  bool          // receive the firing before Stop
		wantStop bool
	}{
		{"before deadline", 5 * time.Second, false, true},
		{"fired, not received", 10 * time.Second, false, true}, // Go 1.23+: value is discarded
		{"fired and received", 10 * time.Second, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFake(start)
			tm, ch := f.NewTimer(10 * time.Second)
			f.Advance(tt.advance)
			if tt.receive {
				if _, ok := poll(ch); !ok {
					t.Fatal("timer did not fire at its deadline")
				}
			}
			if got := tm.Stop(); got != tt.wantStop {
				t.Errorf("Stop() = %v, want %v", got, tt.wantStop)
			}
			if got := tm.Stop(); got {
				t.Errorf("second Stop() = %v, want false", got)
			}
			f.Advance(time.Hour)
			if v, ok := poll(ch); ok {
				t.Errorf("received %v after Stop, want nothing", v)
			}
			if n := f.Pending(); n != 0 {
				t.Errorf("Pending() after Stop = %d, want 0", n)
			}
		})
	}
}

func TestFakeTimerReset(t *testing.T) {
	tests := []struct {
		name      string
		advance   time.Duration // before Reset
		receive   bool
		wantReset bool
	}{
		{"pending", 5 * time.Second, false, true},
		{"fired, not received", 10 * time.Second, false, true},
		{"fired and received", 10 * time.Second, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFake(start)
			tm, ch := f.NewTimer(10 * time.Second)
			f.Advance(tt.advance)
			if tt.receive {
				poll(ch)
			}
			if got := tm.Reset(time.Minute); got != tt.wantReset {
				t.Errorf("Reset() = %v, want %v", got, tt.wantReset)
			}
			resetAt := f.Now()
			f.Advance(time.Minute - 1)
			if v, ok := poll(ch); ok {
				t.Fatalf("received %v before the reset deadline (stale value?)", v)
			}
			f.Advance(1)
			got, ok := poll(ch)
			if want := resetAt.Add(time.Minute); !ok || !got.Equal(want) {
				t.Errorf("after reset deadline got (%v, %v), want (%v, true)", got, ok, want)
			}
		})
	}
}

func TestFakeAdvanceFiresInDeadlineOrder(t *testing.T) {
	f := NewFake(start)
	var got []string
	at := map[string]time.Time{}
	arm := func(name string, d time.Duration) {
		f.AfterFunc(d, func() {
			got = append(got, name)
			at[name] = f.Now()
		})
	}
	arm("30s", 30*time.Second)
	arm("10s-first", 10*time.Second)
	arm("20s", 20*time.Second)
	arm("10s-second", 10*time.Second) // ties fire in arming order
	arm("later", 2*time.Minute)

	f.Advance(time.Minute)
	want := []string{"10s-first", "10s-second", "20s", "30s"}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fired[%d] = %q, want %q (all: %v)", i, got[i], want[i], got)
		}
	}
	if want := start.Add(20 * time.Second); !at["20s"].Equal(want) {
		t.Errorf("Now() inside the 20s callback = %v, want its deadline %v", at["20s"], want)
	}
	if n := f.Pending(); n != 1 {
		t.Errorf("Pending() = %d, want 1 (the 2m timer)", n)
	}
}

func TestFakeAdvanceToNext(t *testing.T) {
	f := NewFake(start)
	if got := f.AdvanceToNext(); got != 0 || !f.Now().Equal(start) {
		t.Fatalf("AdvanceToNext with nothing pending = %v, now %v; want 0, %v", got, f.Now(), start)
	}
	_, ch7 := f.NewTimer(7 * time.Second)
	_, ch5 := f.NewTimer(5 * time.Second)
	steps := []struct {
		want  time.Duration
		fired <-chan time.Time
	}{{5 * time.Second, ch5}, {2 * time.Second, ch7}, {0, nil}}
	for i, s := range steps {
		if got := f.AdvanceToNext(); got != s.want {
			t.Errorf("step %d: AdvanceToNext() = %v, want %v", i, got, s.want)
		}
		if s.fired != nil {
			if _, ok := poll(s.fired); !ok {
				t.Errorf("step %d: timer due at the jump did not fire", i)
			}
		}
	}
}

func TestFakeAdvanceToNeverGoesBackwards(t *testing.T) {
	f := NewFake(start)
	ran := false
	f.AfterFunc(0, func() { ran = true })
	f.AdvanceTo(start.Add(-time.Hour))
	if !f.Now().Equal(start) {
		t.Errorf("AdvanceTo(past) moved time to %v, want %v", f.Now(), start)
	}
	if !ran {
		t.Error("AdvanceTo(past) did not fire the AfterFunc already due")
	}
	defer func() {
		if recover() == nil {
			t.Error("Advance(-1) did not panic")
		}
	}()
	f.Advance(-1)
}
