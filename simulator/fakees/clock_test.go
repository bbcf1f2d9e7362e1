package fakees

import (
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestConcurrentAPI hammers the fake on the real clock while games start
// and stop, for the race detector.
func TestConcurrentAPI(t *testing.T) {
	e := newEnv(t, Config{Library: library.Fixture(""), Clock: clock.Real{},
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
		cabinettest.Await(t, "game played", nil, func() bool { return played() == 3+i+1 })
		cabinettest.Await(t, "UI back", nil, func() bool { e.srv.mu.Lock(); defer e.srv.mu.Unlock(); return e.srv.phase == phaseIdle })
	}
	close(stop)
	wg.Wait()
	if n := played(); n != 3+20 {
		t.Errorf("playcount %d, want 23", n)
	}
}
