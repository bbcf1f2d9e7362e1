package household

import (
	"testing"
	"time"
)

// TestClocks: what the wall clock does never resets a day or counts play
// twice. A Pi without a clock chip boots in 2000 (the last known day's
// remaining minutes apply) and NTP then jumps it days ahead; a clock hours
// off is put right by NTP; a clock set back by hand escapes nothing.
func TestClocks(t *testing.T) {
	rules := rulesOf(t, "enabled", "1", "minutes.daily", "60", "bedtime", "21:00-07:00")
	t.Run("no clock chip, then NTP days ahead", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rules)
		e := c.enforcer()
		c.to(e, at(2027, 3, 22, 16, 0))
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		c.to(e, at(2027, 3, 22, 16, 50))
		c.stop()
		wantState(t, c.to(e, at(2027, 3, 22, 16, 51)), StateWarning, 10*time.Minute)
		// Two days later the Pi boots with its clock in 2000, unset: the
		// last known day's ten minutes apply, bedtime waits.
		c.clk.Advance(2 * 24 * time.Hour)
		c.reboot("boot2", at(2000, 1, 1, 0, 0).Sub(c.clk.Now()), false)
		st := c.to(e, at(2027, 3, 24, 22, 0))
		wantState(t, st, StateWarning, 10*time.Minute)
		if st.Day != "2027-03-22" || st.ClockTrusted || st.InBedtime {
			t.Fatalf("untrusted clock: %+v", st)
		}
		c.start("Zelda")
		c.to(e, at(2027, 3, 24, 22, 0))
		c.awaitShown("10 minutes of play left today.")
		wantState(t, c.to(e, at(2027, 3, 24, 22, 10)), StateTimeUp, 0)
		if _, n := c.lastEnd(); n != 1 {
			t.Fatalf("%d ends, want the game ended at the last day's limit", n)
		}
		// NTP sets the clock, 27 years ahead: a new day (the 24th), no
		// play of it counted yet, and bedtime applies.
		c.setClock(0, true)
		st = c.to(e, at(2027, 3, 24, 22, 11))
		wantState(t, st, StateBedtime, 50*time.Minute)
		if st.Day != "2027-03-24" || !st.ClockTrusted {
			t.Fatalf("after NTP: %+v", st)
		}
	})
	t.Run("NTP puts a clock hours off right", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rules)
		c.reboot("boot1", -3*time.Hour, true) // a clock chip three hours slow
		e := c.enforcer()
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		wantState(t, c.to(e, at(2027, 3, 22, 16, 20)), StateOK, 40*time.Minute)
		c.setClock(0, true) // NTP steps it three hours ahead
		wantState(t, c.to(e, at(2027, 3, 22, 16, 30)), StateOK, 30*time.Minute)
		wantState(t, c.to(e, at(2027, 3, 22, 17, 0)), StateTimeUp, 0)
	})
	t.Run("set back by hand", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rules)
		e := c.enforcer()
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		wantState(t, c.to(e, at(2027, 3, 22, 16, 40)), StateOK, 20*time.Minute)
		c.setClock(-24*time.Hour, true) // yesterday: the kernel still says set
		st := c.to(e, at(2027, 3, 22, 16, 41))
		wantState(t, st, StateOK, 19*time.Minute)
		if st.Day != "2027-03-22" {
			t.Fatalf("the day went back to %s", st.Day)
		}
		wantState(t, c.to(e, at(2027, 3, 22, 17, 0)), StateTimeUp, 0)
		if end, n := c.lastEnd(); n != 1 || !end.Save {
			t.Fatalf("ends %d %+v: the game must end at the limit", n, end)
		}
		// And a reboot with the clock still a day back: no new day.
		c.clk.Advance(time.Hour)
		c.reboot("boot2", -24*time.Hour, true)
		st = c.to(e, at(2027, 3, 22, 18, 5))
		wantState(t, st, StateTimeUp, 0)
		c.start("Mario")
		c.to(e, at(2027, 3, 22, 18, 6))
		c.awaitNote("Mario can't start now. Time is up for today.")
	})
}

// TestRestart: the daemon killed (kill -9: nothing flushed) and started
// again while a game runs gives no time back, and a game that ended while
// it was down counts up to its logged end.
func TestRestart(t *testing.T) {
	rules := rulesOf(t, "enabled", "1", "minutes.daily", "60")
	c := newCab(t, at(2027, 3, 22, 16, 0), rules)
	e := c.enforcer()
	c.start("Zelda")
	c.to(e, at(2027, 3, 22, 16, 0))
	c.to(e, at(2027, 3, 22, 16, 20)) // written (a decision or 30 s since the last write)
	// Killed at 16:20; a new daemon at 16:35: the game ran all along.
	e2 := c.enforcer()
	wantState(t, c.to(e2, at(2027, 3, 22, 16, 35)), StateOK, 25*time.Minute)
	// Killed again; the game ends at 16:40 while no daemon runs; the next
	// one starts at 16:50.
	e3 := c.enforcer()
	c.clk.Advance(5 * time.Minute)
	c.stop()
	wantState(t, c.to(e3, at(2027, 3, 22, 16, 50)), StateOK, 20*time.Minute)
	// A reboot (power cut at 16:50): the day's time stays.
	c.reboot("boot2", 0, true)
	e4 := c.enforcer()
	wantState(t, c.to(e4, at(2027, 3, 22, 17, 0)), StateOK, 20*time.Minute)
}

// TestPause: pausing saves and quits the running game and ends launches
// until it is off, with the rules off too.
func TestPause(t *testing.T) {
	c := newCab(t, at(2027, 3, 22, 16, 0), Default())
	e := c.enforcer()
	c.start("Zelda")
	wantState(t, c.to(e, at(2027, 3, 22, 16, 0)), StateOff, -1)
	if _, err := e.Pause(true, "test"); err != nil {
		t.Fatal(err)
	}
	wantState(t, c.to(e, at(2027, 3, 22, 16, 1)), StatePaused, -1)
	if end, n := c.lastEnd(); n != 1 || !end.Save {
		t.Fatalf("ends %d %+v: want the game saved and quit", n, end)
	}
	c.awaitNote("Zelda was saved and closed. Play is paused. It can start again once a grown-up turns the pause off.")
	c.start("Mario")
	c.to(e, at(2027, 3, 22, 16, 2))
	c.awaitNote("Mario can't start now. Play is paused.")
	if _, err := e.Pause(false, "test"); err != nil {
		t.Fatal(err)
	}
	c.start("Mario")
	wantState(t, c.to(e, at(2027, 3, 22, 16, 3)), StateOff, -1)
	if _, n := c.lastEnd(); n != 2 {
		t.Fatalf("%d ends after the pause was lifted, want 2", n)
	}
}

// TestAtLimit: warn_only keeps the game and repeats "time is up" every
// five minutes (one reached event); quit closes without saving; a session
// limit ends one game while the day has time; a refused launch that keeps
// running (ES did not list it yet) is ended again.
func TestAtLimit(t *testing.T) {
	t.Run("warn_only", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "1", "minutes.daily", "30", "at_limit", "warn_only"))
		e := c.enforcer()
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		c.awaitShown("30 minutes of play left today.")
		c.to(e, at(2027, 3, 22, 16, 25))
		c.awaitShown("5 minutes of play left today.")
		wantState(t, c.to(e, at(2027, 3, 22, 16, 30)), StateTimeUp, 0)
		c.awaitShown("Time is up for today.")
		c.to(e, at(2027, 3, 22, 16, 36))
		if _, n := c.lastEnd(); n != 0 || !c.playing() {
			t.Fatal("warn_only ended the game")
		}
		if n := len(c.eventsOf(EventReached)); n != 1 {
			t.Fatalf("%d reached events", n)
		}
	})
	t.Run("quit", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "1", "minutes.daily", "30", "at_limit", "quit"))
		e := c.enforcer()
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		c.to(e, at(2027, 3, 22, 16, 15))
		c.awaitShown("15 minutes of play left today: save your game now, it will be closed.")
		c.to(e, at(2027, 3, 22, 16, 30))
		if end, n := c.lastEnd(); n != 1 || end.Save {
			t.Fatalf("ends %d %+v: want a quit without a save", n, end)
		}
	})
	t.Run("session", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "1", "minutes.daily", "120", "session_minutes", "45"))
		e := c.enforcer()
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		c.awaitShown("45 minutes left for this game.")
		c.to(e, at(2027, 3, 22, 16, 40))
		c.awaitShown("5 minutes left for this game: the game will be saved and closed.")
		c.to(e, at(2027, 3, 22, 16, 45))
		if end, n := c.lastEnd(); n != 1 || !end.Save {
			t.Fatalf("ends %d %+v", n, end)
		}
		c.awaitNote("Time is up for this game. Zelda was saved and closed. Another game can start now.")
		c.start("Mario")
		wantState(t, c.to(e, at(2027, 3, 22, 16, 46)), StateOK, 74*time.Minute)
	})
	t.Run("standalone emulator", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "1", "minutes.daily", "30"))
		c.plan = SaveUnknown
		e := c.enforcer()
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		c.to(e, at(2027, 3, 22, 16, 15))
		c.awaitShown("15 minutes of play left today: save your game now, it will be closed.")
		c.to(e, at(2027, 3, 22, 16, 30))
		c.awaitNote("Zelda was closed (not saved: the emulator cannot save on command).")
	})
	t.Run("a refused launch that keeps running", func(t *testing.T) {
		c := newCab(t, at(2027, 3, 22, 16, 0), rulesOf(t, "enabled", "1", "minutes.daily", "0"))
		c.endKeeps = true
		e := c.enforcer()
		c.start("Zelda")
		c.to(e, at(2027, 3, 22, 16, 0))
		c.to(e, at(2027, 3, 22, 16, 0).Add(time.Second))
		c.to(e, at(2027, 3, 22, 16, 0).Add(retryEnd+time.Second))
		if _, n := c.lastEnd(); n != 2 {
			t.Fatalf("%d ends, want it ended again after %v", n, retryEnd)
		}
		if n := len(c.eventsOf(EventRefused)); n != 1 {
			t.Fatalf("%d refused events, want 1", n)
		}
	})
}
