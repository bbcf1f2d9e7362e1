package household

import (
	"errors"
	"strings"
	"testing"
)

// TestRequestTime: the player's request raises one time_requested event
// with whose time it is; asking again within ten minutes sends nothing
// more; extra time granted answers it on screen (over the game when one
// runs), a no answers the next one in ES's menus, and a no with nothing
// waiting is refused. How much is left reads as the player sees it.
func TestRequestTime(t *testing.T) {
	c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "1", "minutes.daily", "60", "profiles", "alice,bob",
		"profile.alice.minutes.daily", "20", "warn_at", ""))
	e := c.enforcer()
	if _, err := e.SetPlayer("alice", "test"); err != nil {
		t.Fatal(err)
	}
	c.to(e, at(2027, 3, 22, 16, 0))
	if got := e.TimeLeftText(); got != "alice: 20 minutes of play left today." {
		t.Errorf("time left: %q", got)
	}
	if _, err := e.RequestTime(0); err == nil {
		t.Error("0 minutes asked")
	}
	if _, err := e.RequestTime(MaxAsk + 1); err == nil {
		t.Error("too many minutes asked")
	}
	text, err := e.RequestTime(15)
	if err != nil || text != "Asked a parent for 15 more minutes. The answer will show here." {
		t.Errorf("RequestTime = %q, %v", text, err)
	}
	ev := c.eventsOf(EventTimeRequested)
	if len(ev) != 1 || ev[0].Profile != "alice" || ev[0].Minutes != 15 || ev[0].Game != "" {
		t.Fatalf("time_requested events %+v", ev)
	}
	c.to(e, at(2027, 3, 22, 16, 5))
	if text, _ := e.RequestTime(15); !strings.HasPrefix(text, "Already asked for 15 more minutes") {
		t.Errorf("asked again: %q", text)
	}
	if n := len(c.eventsOf(EventTimeRequested)); n != 1 {
		t.Errorf("%d requests sent, want 1", n)
	}

	// Granted while a game runs: shown over it.
	c.start("Zelda")
	c.to(e, at(2027, 3, 22, 16, 6))
	if st, err := e.Grant(15, "home_assistant"); err != nil || st.Bonus != 15 {
		t.Fatalf("Grant = %+v, %v", st, err)
	}
	c.awaitShown("A parent gave you 15 more minutes.")
	if _, err := e.Deny("home_assistant"); !errors.Is(err, ErrNoRequest) {
		t.Errorf("Deny after the answer = %v, want ErrNoRequest", err)
	}
	c.stop()

	// The next request is answered no, in ES's menus (no game runs).
	c.to(e, at(2027, 3, 22, 16, 30))
	if _, err := e.RequestTime(30); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deny("home_assistant"); err != nil {
		t.Fatal(err)
	}
	c.awaitNote("A parent said no to more time today.")
	// A grant with nothing waiting shows no answer.
	if _, err := e.Grant(15, "home_assistant"); err != nil {
		t.Fatal(err)
	}
	if n := len(c.eventsOf(EventTimeRequested)); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestRequestTimeWithoutLimits: with the limits off there is nothing to ask
// for and no event.
func TestRequestTimeWithoutLimits(t *testing.T) {
	c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "0"))
	e := c.enforcer()
	c.to(e, at(2027, 3, 22, 16, 1))
	if text, err := e.RequestTime(15); err != nil || !strings.Contains(text, "nothing to ask for") {
		t.Errorf("RequestTime = %q, %v", text, err)
	}
	if got := e.TimeLeftText(); got != "There is no play time limit on this cabinet." {
		t.Errorf("time left: %q", got)
	}
	if n := len(c.eventsOf(EventTimeRequested)); n != 0 {
		t.Errorf("%d events", n)
	}
}
