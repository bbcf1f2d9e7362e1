package household

import (
	"testing"
	"time"
)

// weekRules: 90 minutes a day, 60 on Mondays, none on Saturdays, bedtime
// from 21:00 to 07:00, the default warnings, save then quit.
func weekRules(t *testing.T) Rules {
	return rulesOf(t, "enabled", "1", "minutes.daily", "90", "minutes.mon", "60", "minutes.sat", "0", "bedtime", "21:00-07:00")
}

func wantState(t *testing.T, st Status, state State, left time.Duration) {
	t.Helper()
	if st.State != state || left >= -1 && st.Left != left {
		t.Fatalf("state %s, %v left today (used %v on %s, limit %d +%d); want %s, %v left", st.State, st.Left, st.Used, st.Day, st.Limit, st.Bonus, state, left)
	}
}

// TestWeek runs a week of play on the fake clock in Paris, where the last
// Sunday of March loses an hour: weekday limits, warnings at 15, 5 and 1
// minutes, save then quit at the limit, refused launches, extra time that
// lapses at midnight, bedtime across midnight and across the
// daylight-saving change.
func TestWeek(t *testing.T) {
	c := newCab(t, at(2027, 3, 22, 15, 0), weekRules(t)) // a Monday
	e := c.enforcer()
	wantState(t, c.to(e, at(2027, 3, 22, 15, 0)), StateOK, time.Hour)

	// Monday: 60 minutes. The start says so over the game.
	wantState(t, c.to(e, at(2027, 3, 22, 16, 0)), StateOK, time.Hour)
	c.start("Zelda")
	wantState(t, c.to(e, at(2027, 3, 22, 16, 0)), StateOK, time.Hour)
	c.awaitShown("60 minutes of play left today.")
	wantState(t, c.to(e, at(2027, 3, 22, 16, 30)), StateOK, 30*time.Minute)
	for _, w := range []struct {
		at   time.Time
		text string
	}{
		{at(2027, 3, 22, 16, 45), "15 minutes of play left today: the game will be saved and closed."},
		{at(2027, 3, 22, 16, 55), "5 minutes of play left today"},
		{at(2027, 3, 22, 16, 59), "1 minute of play left today"},
	} {
		if st := c.to(e, w.at); st.State != StateWarning {
			t.Fatalf("%v: state %s", w.at, st.State)
		}
		c.awaitShown(w.text)
	}
	if n := len(c.eventsOf(EventWarned)); n != 3 {
		t.Fatalf("%d warned events, want 3", n)
	}
	// The limit: saved, then quit; the notification says when play is back.
	wantState(t, c.to(e, at(2027, 3, 22, 17, 0)), StateTimeUp, 0)
	if end, n := c.lastEnd(); n != 1 || !end.Save || end.Game != "Zelda" {
		t.Fatalf("ends %d, last %+v: want Zelda saved", n, end)
	}
	c.awaitNote("Zelda was saved and closed. Time is up for today. Play again tomorrow from 07:00.")
	if ev := c.eventsOf(EventReached); len(ev) != 1 || ev[0].Game != "Zelda" {
		t.Fatalf("reached events %+v", ev)
	}
	wantState(t, c.to(e, at(2027, 3, 22, 17, 1)), StateTimeUp, 0)

	// A launch with no time left is ended at once, and not counted.
	c.start("Mario")
	st := c.to(e, at(2027, 3, 22, 17, 30))
	if end, n := c.lastEnd(); n != 2 || end.Save || end.Game != "Mario" {
		t.Fatalf("ends %d, last %+v: want Mario ended without a save", n, end)
	}
	c.awaitNote("Mario can't start now. Time is up for today. Play again tomorrow from 07:00.")
	if len(c.eventsOf(EventRefused)) != 1 {
		t.Fatal("no refused event")
	}
	wantState(t, c.to(e, at(2027, 3, 22, 17, 31)), StateTimeUp, 0)
	if st.Used != time.Hour {
		t.Fatalf("used %v after the refused launch, want 1h", st.Used)
	}

	// Extra time from the phone: 15 minutes, then the limit again.
	if _, err := e.Grant(15, "test"); err != nil {
		t.Fatal(err)
	}
	if ev := c.eventsOf(EventExtended); len(ev) != 1 || ev[0].Minutes != 15 {
		t.Fatalf("extended events %+v", ev)
	}
	wantState(t, c.to(e, at(2027, 3, 22, 17, 35)), StateWarning, 15*time.Minute)
	c.start("Mario")
	c.to(e, at(2027, 3, 22, 17, 35))
	c.awaitShown("15 minutes of play left today.")
	c.to(e, at(2027, 3, 22, 17, 45))
	c.awaitShown("5 minutes of play left today")
	wantState(t, c.to(e, at(2027, 3, 22, 17, 50)), StateTimeUp, 0)
	if end, n := c.lastEnd(); n != 3 || !end.Save {
		t.Fatalf("ends %d, last %+v", n, end)
	}

	// Tuesday: the extra time lapsed at midnight; 90 minutes.
	st = c.to(e, at(2027, 3, 23, 0, 0).Add(time.Second))
	wantState(t, st, StateBedtime, 90*time.Minute)
	if st.Bonus != 0 || st.Day != "2027-03-23" || st.Weekday != time.Tuesday {
		t.Fatalf("Tuesday: %+v", st)
	}
	// Played until bedtime: the warnings count down to 21:00.
	wantState(t, c.to(e, at(2027, 3, 23, 20, 50)), StateWarning, 90*time.Minute)
	c.start("Tetris")
	c.to(e, at(2027, 3, 23, 20, 50))
	c.awaitShown("Bedtime in 10 minutes.")
	c.to(e, at(2027, 3, 23, 20, 55))
	c.awaitShown("Bedtime in 5 minutes: the game will be saved and closed.")
	wantState(t, c.to(e, at(2027, 3, 23, 21, 0)), StateBedtime, 80*time.Minute)
	if end, n := c.lastEnd(); n != 4 || !end.Save || end.Game != "Tetris" {
		t.Fatalf("ends %d, last %+v", n, end)
	}
	c.awaitNote("Tetris was saved and closed. It's bedtime: games are back at 07:00.")
	// At 22:00, a launch is ended, with when games are back.
	c.start("Tetris")
	c.to(e, at(2027, 3, 23, 22, 0))
	c.awaitNote("Tetris can't start now. It's bedtime: games are back at 07:00.")
	if _, n := c.lastEnd(); n != 5 {
		t.Fatalf("%d ends, want 5", n)
	}
	c.to(e, at(2027, 3, 23, 22, 1))

	// Saturday has no minutes: "no games today", back on Sunday at 07:00
	// (after the night the clocks go forward).
	wantState(t, c.to(e, at(2027, 3, 27, 10, 0)), StateTimeUp, 0)
	c.start("Zelda")
	c.to(e, at(2027, 3, 27, 10, 0))
	c.awaitNote("Zelda can't start now. No games today. Play again tomorrow from 07:00.")
	st = c.to(e, at(2027, 3, 27, 10, 1))
	if want := time.Date(2027, 3, 28, 7, 0, 0, 0, paris); !st.NextPlay.Equal(want) {
		t.Fatalf("next play %v, want %v", st.NextPlay, want)
	}
	// Sunday, a 23-hour day: bedtime still ends at 07:00 local (05:00 UTC).
	wantState(t, c.to(e, at(2027, 3, 28, 6, 59)), StateBedtime, 90*time.Minute)
	st = c.to(e, at(2027, 3, 28, 7, 0))
	wantState(t, st, StateOK, 90*time.Minute)
	if h := at(2027, 3, 28, 7, 0).UTC().Hour(); h != 5 {
		t.Fatalf("07:00 in Paris on the 28th is %02d:00 UTC, want 05:00 (summer time)", h)
	}
	c.start("Zelda")
	c.to(e, at(2027, 3, 28, 7, 0))
	wantState(t, c.to(e, at(2027, 3, 28, 8, 30)), StateTimeUp, 0)
	if end, _ := c.lastEnd(); end.Game != "Zelda" || !end.Save {
		t.Fatalf("Sunday's end %+v", end)
	}
	// Monday 00:00 comes 23 real hours after Sunday's: a new day, 60 minutes.
	st = c.to(e, at(2027, 3, 29, 0, 0).Add(time.Second))
	if st.Day != "2027-03-29" || st.Left != time.Hour {
		t.Fatalf("Monday after the change: %+v", st)
	}
}
