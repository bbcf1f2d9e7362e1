package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestTwentyHooksAtOnce: ES starts hooks without waiting, so a game launch
// out of a dim screensaver with a restless player makes many binaries race
// for the store. The losers spool their events; after the next event and
// the delayed flush nothing is lost: the session is logged once, the
// cabinet events are out, the states are right, and the spool and the
// outbox are empty.
func TestTwentyHooksAtOnce(t *testing.T) {
	cabinettest.Long(t, "twenty hook processes at once")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 1}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		c.fire("start")
		c.waitState("activity", "menu")
		c.waitQuiet()

		// 20 binaries at once: ES's game-start, the configgen script, and 18
		// screensaver/sleep/wake hooks (whose order among themselves does
		// not change the outcome once the game has ended).
		noise := []string{"screensaver-start", "sleep", "screensaver-stop", "wake"}
		cgDone := make(chan error, 1)
		c.firer.Fire("game-start", esevents.GameStartArgs(smbPath, smbName)...)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cgDone <- c.cg.Run(ctx, esevents.GameStart, "nes", "libretro", "fceumm", smbPath)
		}()
		for i := 0; i < 18; i++ {
			ev := noise[i%len(noise)]
			if ev == "screensaver-start" {
				c.firer.Fire(ev, "dim")
			} else {
				c.firer.Fire(ev)
			}
		}
		if err := <-cgDone; err != nil {
			t.Fatalf("configgen gameStart: %v", err)
		}
		c.waitScripts()
		spooled := 0
		for _, l := range c.logLines() {
			if l.Message == "event spooled" {
				spooled++
			}
		}
		t.Logf("20 hooks at once: %d found the store busy and spooled their event", spooled)

		// The session is timed from the hooks' own stamps, which a loaded
		// machine takes up to a second or more after the burst began: play
		// on from the moment every hook is done, comfortably past the
		// 1 s minimum.
		play(1500 * time.Millisecond)
		c.configgen(esevents.GameStop, "nes", "libretro", "fceumm", smbPath)
		c.fire("game-end") // the event that follows; the delayed flush logs the session
		c.waitSessionEvents("session_end", 1)
		c.waitQuiet()

		c.checkStates(map[string]string{
			"now_playing": "Idle", "playing": "OFF", "last_session": smbName,
			"activity": "menu", "screensaver": "OFF", "status": "online",
		})
		evs := c.sessionEvents()
		starts, ends := ofType(evs, "session_start"), ofType(evs, "session_end")
		if len(starts) != 1 || len(ends) != 1 || ends[0].Game != smbName {
			t.Errorf("session events, want one start and one end of %q:\n%s", smbName, describe(c.scenarioCapture()))
		} else if starts[0].SessionID != ends[0].SessionID {
			t.Errorf("session_start id %s, session_end id %s: want one id per session", starts[0].SessionID, ends[0].SessionID)
		}
		cab := map[string]int{}
		for _, e := range c.cabinetEvents() {
			cab[e.EventType]++
		}
		if cab["sleep"] == 0 || cab["wake"] == 0 || cab["quit"]+cab["reboot"]+cab["shutdown"] != 0 {
			t.Errorf("cabinet events %v, want sleep and wake and no quit", types(c.cabinetEvents()))
		}
		if left := c.spoolFiles(); len(left) != 0 {
			t.Errorf("spool still holds %d events: %v", len(left), left)
		}
		c.checkOutboxDrained()
	})
}

// checkOutboxDrained opens the store (nothing may run) and checks that no
// message waits for delivery, nothing went to the spool's bad/ folder and
// no store was quarantined.
func (c *cabinet) checkOutboxDrained() store.Stats {
	c.t.Helper()
	c.waitQuiet()
	st := c.outboxStats()
	if st.QueueDepth != 0 || st.Undelivered != 0 {
		c.t.Errorf("outbox not drained: %+v", st)
	}
	if bad, _ := filepath.Glob(filepath.Join(c.state, "spool/bad/*")); len(bad) != 0 {
		c.t.Errorf("spool/bad holds %v", bad)
	}
	if d := c.damaged(); len(d) != 0 {
		c.t.Errorf("store quarantined: %v", d)
	}
	return st
}

// outboxStats reads the store's figures while no hook runs.
func (c *cabinet) outboxStats() store.Stats {
	c.t.Helper()
	s, err := store.Open(filepath.Join(c.state, "cabinet.db"), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		c.t.Fatalf("open the store: %v", err)
	}
	defer s.Close()
	if s.Quarantined != "" {
		c.t.Errorf("opening the store quarantined it: %s", s.Quarantined)
	}
	st, err := s.Stats()
	if err != nil {
		c.t.Fatalf("store stats: %v", err)
	}
	return st
}

// storeSessions lists the session history, oldest first, while no hook runs.
func (c *cabinet) storeSessions() []string {
	c.t.Helper()
	s, err := store.Open(filepath.Join(c.state, "cabinet.db"), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		c.t.Fatalf("open the store: %v", err)
	}
	defer s.Close()
	ss, err := s.Sessions(store.Query{})
	if err != nil {
		c.t.Fatalf("store sessions: %v", err)
	}
	out := make([]string, 0, len(ss))
	for i := len(ss) - 1; i >= 0; i-- {
		out = append(out, fmt.Sprintf("%s %s %d", ss[i].ID, ss[i].Game, ss[i].Duration/time.Second))
	}
	return out
}
