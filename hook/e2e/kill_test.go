package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestKill9MidCommit: hook processes SIGKILLed at random moments of their
// short life (opening the store, in the fsynced commit, spooling,
// publishing), 100 times, four at a time. Afterwards the store opens
// without being quarantined, the next hook works, and no session that was
// logged before is lost: each is still in the history and on the broker.
func TestKill9MidCommit(t *testing.T) {
	cabinettest.Long(t, "100 hooks SIGKILLed mid-run")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 0}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		c.fire("start")
		for i := 0; i < 3; i++ {
			name := fmt.Sprintf("Before %d", i)
			c.fire("game-start", "/userdata/roms/nes/"+strings.ReplaceAll(name, " ", "_")+".nes", name, name)
			c.fire("game-end")
		}
		c.flushFinal()
		c.waitSessionEvents("session_end", 3)
		c.waitQuiet()
		before := c.storeSessions()
		if len(before) != 3 {
			t.Fatalf("history before the kills: %q, want 3 sessions", before)
		}

		c.repeatsOK = "a hook killed between the broker's PUBACK and its delivery mark"
		killed, finished, maxDelay := c.killHooks(100, 4, 2*c.hook("screensaver-stop").Took)
		t.Logf("%s: 100 hooks, %d SIGKILLed mid-run, %d finished first (kill delay uniform in 0..%v at the end)",
			kind, killed, finished, maxDelay.Round(time.Millisecond))

		// The next hook finds a working store and publishes.
		c.waitQuiet()
		c.fire("screensaver-start", "slideshow")
		c.waitState("screensaver/attributes", `{"type":"slideshow"}`)
		c.flushFinal()
		c.waitQuiet()

		after := c.storeSessions()
		for _, s := range before {
			if !contains(after, s) {
				t.Errorf("session %q was logged before the kills and is gone: history %q", s, after)
			}
		}
		onBroker := map[string]int{}
		for _, e := range ofType(events(c.scenarioCapture(), c.topic("game_session")), "session_end") {
			onBroker[e.SessionID]++
		}
		dup := 0
		for _, s := range after {
			id, _, _ := strings.Cut(s, " ")
			switch n := onBroker[id]; {
			case n == 0:
				t.Errorf("logged session %q never reached the broker", s)
			case n > 1:
				dup++ // killed between the broker's PUBACK and the delivery mark
			}
		}
		t.Logf("%s: %d sessions in the history, %d of them published twice (QoS 1 redelivery after a kill)", kind, len(after), dup)
		for _, l := range c.logLines() {
			if strings.Contains(l.Message, "damaged") || strings.Contains(l.Message, "unreadable") || l.Message == "event lost: neither the store nor the spool could take it" {
				t.Errorf("log: %s", l.raw)
			}
		}
		c.checkOutboxDrained()
		if tmp, _ := filepath.Glob(filepath.Join(c.state, "spool", ".tmp-*")); len(tmp) != 0 {
			t.Logf("%d spool temp files left by killed writers (dropped after a minute)", len(tmp))
		}
	})
}

// killHooks runs n hook processes directly, par at a time, each SIGKILLed
// after a random delay in [0, maxDelay) unless it exited first. maxDelay
// follows the outcomes so that about half the hooks die: their length
// varies with the load and the broker.
func (c *cabinet) killHooks(n, par int, maxDelay time.Duration) (killed, finished int, last time.Duration) {
	c.t.Helper()
	events := [][]string{
		{"game-start", "/userdata/roms/nes/Kill_Game.nes", "Kill_Game", "Kill Game"},
		{"sleep"}, {"wake"},
		{"--source", "configgen", "gameStop", "nes", "libretro", "fceumm", "/userdata/roms/nes/Kill_Game.nes"},
		{"game-end"},
		{"screensaver-start", "dim"}, {"screensaver-stop"},
	}
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		args := append([]string{"hook"}, events[i%len(events)]...)
		sem <- struct{}{}
		mu.Lock()
		delay := time.Duration(rand.Int64N(int64(maxDelay)))
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			cmd := exec.Command(cabinetBin, args...)
			cmd.Env = append(os.Environ(), "CABINET_CONFIG="+c.conf)
			if err := cmd.Start(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(delay):
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
			}
			mu.Lock()
			defer mu.Unlock()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				killed++
				maxDelay = maxDelay * 21 / 20
			} else if err == nil {
				finished++
				maxDelay = maxDelay * 19 / 20
			} else {
				errs = append(errs, fmt.Errorf("hook %q: %v", args, err))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		c.t.Errorf("kill run: %v", err)
	}
	return killed, finished, maxDelay
}
