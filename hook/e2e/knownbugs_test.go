package e2e

import (
	"os"
	"testing"
	"time"
)

// knownBugsEnv runs the tests of bugs not fixed yet instead of skipping them.
const knownBugsEnv = "CABINET_E2E_KNOWN_BUGS"

func knownBugs() bool { return os.Getenv(knownBugsEnv) == "1" }

// TestBackToBackSessions: a player starts the wrong game, quits it after a
// few seconds and starts another. Both launches are live events Home
// Assistant automations wait for, so each gets its session_start; only the
// second is long enough to be logged.
//
// Known bug: the tracker treats any session_start within its 10 s
// DuplicateWindow of another one as the same event (hook/tracker/emit.go
// State.sent compares only the type and the time), so the second launch's
// session_start is never published. Set CABINET_E2E_KNOWN_BUGS=1 to run.
func TestBackToBackSessions(t *testing.T) {
	if !knownBugs() {
		t.Skipf("known bug: a second session_start within 10 s of another is dropped (hook/tracker/emit.go State.sent); set %s=1 to run", knownBugsEnv)
	}
	eachBroker(t, func(t *testing.T, kind brokerKind) {
		b := startBroker(t, kind, brokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 1}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		c.fire("start")
		c.launch(marioPath, marioStem, 300*time.Millisecond, nil)
		c.launch(smbPath, smbName, 1500*time.Millisecond, func() { c.waitState("now_playing", smbName) })
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
