package e2e

import (
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestBackToBackSessions: a player starts the wrong game, quits it after a
// few seconds and starts another. Both launches are live events Home
// Assistant automations wait for, so each gets its session_start; only the
// second is long enough to be logged.
// (The tracker once took any session_start within its 10 s duplicate
// window of another for a repeat.)
func TestBackToBackSessions(t *testing.T) {
	cabinettest.Long(t, "two sessions with the 10 s duplicate window between them")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		// 3 s keeps the 300 ms game short even when a loaded machine
		// stretches what the hooks measure.
		opts := cabinetOptions{MinSessionSeconds: 3}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		c.fire("start")
		c.launch(marioPath, marioStem, 300*time.Millisecond, nil)
		c.launch(smbPath, smbName, 4500*time.Millisecond, func() { c.waitState("now_playing", smbName) })
		c.waitSessionEvents("session_end", 1)
		c.waitQuiet()

		evs := c.sessionEvents()
		starts := ofType(evs, "session_start")
		if len(starts) != 2 {
			t.Fatalf("session events %v, want a session_start for each launch:\n%s", types(evs), describe(c.scenarioCapture()))
		}
		if starts[0].Game != marioStem || starts[1].Game != smbName {
			t.Errorf("session_start games %q, %q; want %q, %q", starts[0].Game, starts[1].Game, marioStem, smbName)
		}
		if ends := ofType(evs, "session_end"); len(ends) != 1 || ends[0].SessionID != starts[1].SessionID {
			t.Errorf("session_end %v, want one, for %s", ends, starts[1].SessionID)
		}
	})
}

// TestDelayedFlushNotLost: the session that ends becomes final 3 s later,
// and the game-end hook starts a detached `cabinet hook --flush-after` to
// log it then. A flusher from an earlier outcome may still hold flush.lock
// at that moment, past its last flush and about to exit (it is slow to
// exit when its own publish is slow); the test plays that flusher by
// holding the lock while the game ends.
// (runFlusher once returned at once when flush.lock was busy, and the old
// flusher never looked again: the session stayed unlogged, now_playing
// showing the game, until the next ES event.)
func TestDelayedFlushNotLost(t *testing.T) {
	cabinettest.Long(t, "a session through a held flush lock")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 1}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		c.fire("start")
		c.launch(smbPath, smbName, 1500*time.Millisecond, func() {
			c.waitState("now_playing", smbName)
			c.holdFlushLock() // the old flusher, about to exit
		})
		c.releaseFlushLock()
		ends := c.waitSessionEvents("session_end", 1)
		if ends[0].Game != smbName {
			t.Errorf("session_end %s, want %s", ends[0].raw, smbName)
		}
		c.waitState("now_playing", "Idle")
	})
}
