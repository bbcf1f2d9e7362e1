package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// eventWindow is how long the outbox keeps a time-sensitive event
// (session_start, cabinet events) for delivery (outbox.Options.EventWindow).
const eventWindow = 60 * time.Second

// TestBrokerDownFor100Events: the broker is down while the cabinet lives
// through 100 hook runs (sessions, screensaver, sleep/wake), then comes
// back on the same port and one more event fires. Afterwards the broker
// holds the latest states and every logged session_end, in order, exactly
// once; the session_start and cabinet events of the first part, older than
// the outbox's event window by then, never arrive late, while those of the
// last seconds do.
func TestBrokerDownFor100Events(t *testing.T) {
	cabinettest.Long(t, "100 hook runs with the broker down")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{Stopped: true})
		opts := cabinetOptions{MinSessionSeconds: 0}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		runs := 0
		fire := func(ev string, args ...string) { c.fire(ev, args...); runs++ }
		session := func(name string) {
			rom := "/userdata/roms/snes/" + name + ".sfc"
			fire("game-start", esevents.GameStartArgs(rom, name)...)
			c.configgen(esevents.GameStart, "snes", "libretro", "snes9x", rom)
			c.configgen(esevents.GameStop, "snes", "libretro", "snes9x", rom)
			fire("game-end")
			runs += 2
		}
		idle := func() {
			fire("screensaver-start", "dim")
			fire("sleep")
			c.firer.Fire("screensaver-stop")
			fire("wake")
			runs++
		}

		// Part A: everything time-sensitive here will be too old.
		fire("start")
		var played []string
		for i := 0; i < 6; i++ {
			played = append(played, fmt.Sprintf("Old Game %d", i))
			session(played[len(played)-1])
		}
		for runs < 64 {
			idle()
		}
		c.waitQuiet()
		oldEnd := time.Now()
		t.Logf("%s: waiting out the %v event window", kind, eventWindow)
		// Real time has to pass here (the events age in the binary's own
		// clock): a part of the scenario, not a wait for something to happen.
		play(time.Until(oldEnd.Add(eventWindow + time.Second)))

		// Part B: recent; its time-sensitive events are still deliverable.
		recentStart := time.Now()
		for runs < 92 {
			idle()
		}
		played = append(played, "New Game")
		session("New Game")
		for runs < 100 {
			fire("screensaver-start", "dim")
			if runs < 100 {
				fire("screensaver-stop")
			}
		}
		c.waitQuiet()
		if n := len(c.broker.Capture()); n != 0 {
			t.Fatalf("the broker was down but recorded %d messages", n)
		}

		b.Start(t)
		fire("wake") // the one more event, 101st run
		c.waitDelivered("every logged session on the broker", func() (bool, string) {
			n := len(ofType(c.sessionEvents(), "session_end"))
			return n >= len(played), fmt.Sprintf("%d of %d session_end", n, len(played))
		})
		c.waitQuiet()
		t.Logf("%d hook runs with the broker down", runs-1)

		var gotEnds []string
		seen := map[string]int{}
		for _, e := range ofType(c.sessionEvents(), "session_end") {
			gotEnds = append(gotEnds, e.Game)
			seen[e.SessionID]++
		}
		if strings.Join(gotEnds, "|") != strings.Join(played, "|") {
			t.Errorf("session_end in arrival order %q, want %q", gotEnds, played)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("session %s delivered %d times", id, n)
			}
		}
		c.checkStates(map[string]string{
			"now_playing": "Idle", "playing": "OFF", "last_session": "New Game",
			"activity": "menu", "screensaver": "OFF", "status": "online",
		})
		st := c.checkOutboxDrained()
		t.Logf("outbox after the outage: %+v", st)

		for _, e := range ofType(c.sessionEvents(), "session_start") {
			if e.Game != "New Game" {
				t.Errorf("late session_start of part A: %s", e.raw)
			}
		}
		if n := len(ofType(c.sessionEvents(), "session_start")); n != 1 {
			t.Errorf("%d session_start of part B, want 1 (it is within the window)", n)
		}
		var recent []string
		for _, e := range c.cabinetEvents() {
			at, err := time.Parse(time.RFC3339, e.At)
			if err != nil || at.Before(recentStart.Add(-time.Second)) {
				t.Errorf("late cabinet event of part A: %s", e.raw)
				continue
			}
			recent = append(recent, e.EventType)
		}
		if !contains(recent, "sleep") || !contains(recent, "wake") {
			t.Errorf("cabinet events of part B %v, want its sleep and wake", recent)
		}
		if st.Expired == 0 {
			t.Errorf("outbox expired no event, want part A's dropped: %+v", st)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
