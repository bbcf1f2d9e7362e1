package household

import (
	"strings"
	"testing"
	"time"
)

// TestProfileRules: a profile takes the cabinet's rules it does not set; names that read as a
// rule, or are listed twice, are refused with why; a key of a profile not listed is reported.
func TestProfileRules(t *testing.T) {
	r := rulesOf(t, "enabled", "1", "minutes.daily", "90", "bedtime", "21:00-07:00", "profiles", "alice, Bob",
		"profile.alice.minutes.daily", "30", "profile.bob.pad", "0A:1B:2C:3D:4E:5F", "profile.bob.warn_at", "10")
	alice, bob, none := r.For("alice"), r.For("bob"), r.For("")
	if alice.Daily != 30 || alice.Bedtime == nil || !alice.Enabled || bob.Daily != 90 || len(bob.WarnAt) != 1 || none.Daily != 90 {
		t.Errorf("alice %+v, bob %+v, none %+v", alice, bob, none)
	}
	if p, _ := r.Profile("bob"); p.Pad != "0a:1b:2c:3d:4e:5f" {
		t.Errorf("bob's pad %q", p.Pad)
	}
	if got := strings.Join(r.ProfileNames(), ","); got != "alice,bob" {
		t.Errorf("profiles %s", got)
	}
	for _, tc := range []struct{ v, why string }{
		{"alice,bedtime", `"bedtime" is the name of a rule`},
		{"alice,alice", "listed twice"},
		{"al ice", "1 to 32 of a-z"},
		{"a,b,c,d,e,f,g,h,i", "at most 8"},
		{"minutes", `"minutes" is the name of a rule`},
	} {
		if err := Check(ProfilesKey, tc.v); err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: %v, want %q", tc.v, err, tc.why)
		}
	}
	if _, errs := Parse(map[string]string{ProfilesKey: "alice", ProfilePrefix + "carol.minutes.daily": "5"}); len(errs) != 1 ||
		!strings.Contains(errs[0].Error(), `no profile "carol"`) {
		t.Errorf("a key of a profile not listed: %v", errs)
	}
}

// TestProfilesCount: each player's time is their own, under their own rules; the player is fixed
// at the launch — choosing another one mid-game neither stops the game's count nor escapes its
// limit; extra time goes to whoever's time it is.
func TestProfilesCount(t *testing.T) {
	c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "1", "minutes.daily", "60", "profiles", "alice,bob",
		"profile.alice.minutes.daily", "20", "warn_at", ""))
	e := c.enforcer()
	if _, err := e.SetPlayer("carol", "test"); err == nil || !strings.Contains(err.Error(), "alice, bob") {
		t.Errorf("an unknown player: %v", err)
	}
	if st, err := e.SetPlayer("alice", "test"); err != nil || st.Profile != "alice" || st.Limit != 20 {
		t.Fatalf("alice chosen: %+v %v", st, err)
	}
	c.start("Zelda")
	c.to(e, at(2027, 3, 22, 16, 0))
	// Bob takes the pad mid-game: Zelda is still Alice's, under her 20 minutes.
	if _, err := e.SetPlayer("bob", "test"); err != nil {
		t.Fatal(err)
	}
	st := c.to(e, at(2027, 3, 22, 16, 10))
	if st.Profile != "alice" || st.Used != 10*time.Minute || st.Limit != 20 {
		t.Errorf("mid-game after choosing bob: %+v", st)
	}
	c.to(e, at(2027, 3, 22, 16, 20))
	if end, n := c.lastEnd(); n != 1 || end.Game != "Zelda" {
		t.Fatalf("ends %d %+v: Alice's game ended at her limit", n, end)
	}
	if ev := c.eventsOf(EventReached); len(ev) != 1 || ev[0].Profile != "alice" {
		t.Errorf("reached %+v", ev)
	}
	// Now Bob: his own 60 minutes, none used.
	st = c.to(e, at(2027, 3, 22, 16, 21))
	if st.Profile != "bob" || st.Used != 0 || st.Limit != 60 {
		t.Errorf("bob after alice's game: %+v", st)
	}
	c.start("Mario")
	c.to(e, at(2027, 3, 22, 16, 21))
	if st, err := e.Grant(15, "test"); err != nil || st.Profile != "bob" || st.Bonus != 15 {
		t.Errorf("extra time during bob's game: %+v %v", st, err)
	}
	st = c.to(e, at(2027, 3, 22, 16, 51))
	if st.Used != 30*time.Minute || st.Left != 45*time.Minute {
		t.Errorf("bob after 30 minutes: %+v", st)
	}
	c.stop()
	c.to(e, at(2027, 3, 22, 16, 52))
	// Alice again: still out of time (and the extra time was Bob's).
	if _, err := e.SetPlayer("alice", "test"); err != nil {
		t.Fatal(err)
	}
	if st := e.Status(); st.Profile != "alice" || st.Left != 0 || st.Bonus != 0 {
		t.Errorf("alice after bob: %+v", st)
	}
	// A restart keeps the player and the accounts.
	if st := c.enforcer().Status(); st.Profile != "alice" || st.Used != 20*time.Minute {
		t.Errorf("after a restart: %+v", st)
	}
}
