package fakees

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

func TestManualClock(t *testing.T) {
	c := NewManualClock(epoch)
	var got []string
	c.AfterFunc(2*time.Second, func() { got = append(got, "b@"+c.Now().Sub(epoch).String()) })
	c.AfterFunc(time.Second, func() {
		got = append(got, "a@"+c.Now().Sub(epoch).String())
		c.AfterFunc(500*time.Millisecond, func() { got = append(got, "nested@"+c.Now().Sub(epoch).String()) })
	})
	stopped := c.AfterFunc(1500*time.Millisecond, func() { got = append(got, "stopped") })
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop: want true once, then false")
	}
	c.Advance(1700 * time.Millisecond)
	if c.Pending() != 1 {
		t.Errorf("pending %d, want 1", c.Pending())
	}
	c.Advance(time.Second)
	if want := "a@1s nested@1.5s b@2s"; strings.Join(got, " ") != want {
		t.Errorf("ran %q, want %q", strings.Join(got, " "), want)
	}
	if d := c.Now().Sub(epoch); d != 2700*time.Millisecond {
		t.Errorf("now = epoch+%v, want +2.7s", d)
	}
}

// TestConcurrentAPI hammers the fake on the real clock while games start
// and stop, for the race detector.
func TestConcurrentAPI(t *testing.T) {
	e := newEnv(t, Config{Library: library.Fixture(""), Clock: realClock{},
		LaunchDelay: time.Millisecond, ReturnDelay: time.Millisecond, PlayTime: 5 * time.Millisecond})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, p := range []string{"/runningGame", "/isIdle", "/systems", "/systems/all/games", "/systems/nes/games/" + plainID} {
		wg.Add(1)
		go func(p string) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					e.get(p)
				}
			}
		}(p)
	}
	played := func() int { g, _ := e.srv.Library().Game("nes", plainID); return g.PlayCount() }
	for i := 0; i < 20; i++ {
		e.do("POST", "/launch", plainPath)
		if i%2 == 0 {
			// Kill it if it is running yet; the play timer ends it otherwise.
			e.get("/emukill")
		}
		waitFor(t, "game played", func() bool { return played() == 3+i+1 })
		waitFor(t, "UI back", func() bool { e.srv.mu.Lock(); defer e.srv.mu.Unlock(); return e.srv.phase == phaseIdle })
	}
	close(stop)
	wg.Wait()
	if n := played(); n != 3+20 {
		t.Errorf("playcount %d, want 23", n)
	}
}
