package household

import (
	"time"

	"github.com/batocera-cabinet/cabinet/hook/playday"
)

// State is sensor.batocera_limit_state.
type State string

// The states.
const (
	StateOff     State = "off"     // rules off
	StateOK      State = "ok"      // play allowed, no warning due
	StateWarning State = "warning" // within the first warning point of the end
	StateTimeUp  State = "time_up" // today's time (or the game's session) is used up
	StateBedtime State = "bedtime" // inside the bedtime window
	StatePaused  State = "paused"  // a parent paused play
)

// End names what ends the running game first.
type End string

// What ends a game.
const (
	EndNone    End = ""
	EndDaily   End = "daily"
	EndSession End = "session"
	EndBedtime End = "bedtime"
	EndPaused  End = "paused"
)

// Status is what the rules say at one moment.
type Status struct {
	Enabled bool
	State   State
	// Profile is whose time and rules these are ("" the cabinet's): the running game's player,
	// else the player now.
	Profile string
	// Player is the player chosen now ("" none): whose the next game is.
	Player string
	// Day is the play day counted (a local date); ClockTrusted says the
	// wall clock placed it (else it is the last day the cabinet knew).
	Day          string
	Weekday      time.Weekday
	ClockTrusted bool
	// Limit is today's limit in minutes (-1: none), Bonus the extra minutes
	// granted today, Used the time played today.
	Limit int
	Bonus int
	Used  time.Duration
	// Left is today's time left (-1: no daily limit).
	Left time.Duration
	// SessionLeft is the running game's time left by session_minutes (-1:
	// none, or no game).
	SessionLeft time.Duration
	// Bedtime is the window (nil: none); InBedtime says it is on now
	// (only with a trusted clock); UntilBedtime is the time to its start
	// (-1: none or unknown).
	Bedtime      *Window
	InBedtime    bool
	UntilBedtime time.Duration
	Paused       bool
	// Remaining is the time until the running game (or one started now)
	// must end, and EndBy what ends it (Remaining -1, EndBy "": nothing).
	Remaining time.Duration
	EndBy     End
	// Refusal says why a game launched now is ended right away ("":
	// allowed); NextPlay is when play is possible again (zero: unknown, or
	// a parent must act).
	Refusal  string
	NextPlay time.Time
	// Playing says a game is being counted.
	Playing bool
}

// Evaluate applies the rules to the ledger at m (its Play observed at m,
// the running game's time already counted in it). running is that game's
// span on this boot's clock, for session_minutes (nil: none). loc is the
// local time zone days and bedtime are counted in.
func Evaluate(r Rules, l Ledger, m playday.Moment, running *playday.Span, loc *time.Location) Status {
	st := Status{Enabled: r.Enabled, State: StateOff, Day: l.Play.Day, ClockTrusted: l.Play.Trusted && m.Synced,
		Limit: -1, Left: -1, SessionLeft: -1, UntilBedtime: -1, Remaining: -1, Paused: l.Paused, Bedtime: r.Bedtime}
	day, ok := parseDay(l.Play.Day, loc)
	if !ok {
		day = m.Wall.In(loc)
	}
	st.Weekday = day.Weekday()
	st.Used = time.Duration(playday.Played(l.Play, nil, loc)) * time.Second
	st.Playing = l.Game != nil && !l.Game.Refused
	st.Limit = r.DayLimit(st.Weekday)
	if l.TodayDay == st.Day && l.TodayDay != "" && l.TodayLimit >= 0 {
		st.Limit = l.TodayLimit
	}
	if l.BonusDay == st.Day && l.BonusDay != "" {
		st.Bonus = l.Bonus
	}
	if st.Limit >= 0 {
		st.Left = max(0, time.Duration(st.Limit+st.Bonus)*time.Minute-st.Used)
	}
	if running != nil && r.Session > 0 {
		st.SessionLeft = max(0, time.Duration(r.Session)*time.Minute-(running.To-running.From))
	}
	if r.Bedtime != nil && st.ClockTrusted {
		now := m.Wall.In(loc)
		st.InBedtime = r.Bedtime.contains(now.Hour()*60 + now.Minute())
		if !st.InBedtime {
			st.UntilBedtime = nextAt(now, r.Bedtime.From, loc).Sub(now)
		}
	}
	if !r.Enabled {
		// "Pause play now" works with the rules off too.
		if st.Paused {
			st.State, st.Remaining, st.EndBy = StatePaused, 0, EndPaused
			st.Refusal, st.NextPlay = refusal(r, st, m, loc)
		}
		return st
	}
	// What ends a game first.
	set := func(d time.Duration, by End) {
		if d >= 0 && (st.Remaining < 0 || d < st.Remaining) {
			st.Remaining, st.EndBy = d, by
		}
	}
	set(st.Left, EndDaily)
	set(st.SessionLeft, EndSession)
	set(st.UntilBedtime, EndBedtime)
	switch {
	case st.Paused:
		st.Remaining, st.EndBy = 0, EndPaused
	case st.InBedtime:
		st.Remaining, st.EndBy = 0, EndBedtime
	}
	switch {
	case st.Paused:
		st.State = StatePaused
	case st.InBedtime:
		st.State = StateBedtime
	case st.Left == 0 || st.SessionLeft == 0:
		st.State = StateTimeUp
	case st.Remaining >= 0 && len(r.WarnAt) > 0 && st.Remaining <= time.Duration(r.WarnAt[0])*time.Minute:
		st.State = StateWarning
	default:
		st.State = StateOK
	}
	st.Refusal, st.NextPlay = refusal(r, st, m, loc)
	return st
}

// refusal is why a game started now would be ended, and when play is
// possible again.
func refusal(r Rules, st Status, m playday.Moment, loc *time.Location) (string, time.Time) {
	minStart := time.Duration(r.MinStart) * time.Minute
	now := m.Wall.In(loc)
	switch {
	case st.Paused:
		return "Play is paused. It can start again once a grown-up turns the pause off.", time.Time{}
	case st.InBedtime:
		next := nextAt(now, r.Bedtime.To, loc)
		return "It's bedtime: games are back at " + clockText(r.Bedtime.To) + ".", next
	case st.Left >= 0 && (st.Left == 0 || st.Left < minStart):
		if st.Limit == 0 && st.Bonus == 0 {
			return "No games today." + tomorrowText(r, st, m, loc), nextPlay(r, st, m, loc)
		}
		return "Time is up for today." + tomorrowText(r, st, m, loc), nextPlay(r, st, m, loc)
	case st.UntilBedtime >= 0 && st.UntilBedtime < max(minStart, time.Minute):
		next := nextAt(now, r.Bedtime.To, loc)
		return "It's nearly bedtime: games are back at " + clockText(r.Bedtime.To) + ".", next
	}
	return "", time.Time{}
}

// nextPlay is when play is possible again after today's time is used up:
// the next day with minutes (within a week), after that morning's bedtime.
// Zero without a trusted clock (the day then moves on only once it is set).
func nextPlay(r Rules, st Status, m playday.Moment, loc *time.Location) time.Time {
	if !st.ClockTrusted {
		return time.Time{}
	}
	d, ok := parseDay(st.Day, loc)
	if !ok {
		return time.Time{}
	}
	for i := 1; i <= 7; i++ {
		next := time.Date(d.Year(), d.Month(), d.Day()+i, 0, 0, 0, 0, loc)
		if r.DayLimit(next.Weekday()) == 0 {
			continue
		}
		if b := r.Bedtime; b != nil && b.contains(0) {
			next = time.Date(next.Year(), next.Month(), next.Day(), b.To/60, b.To%60, 0, 0, loc)
		}
		return next
	}
	return time.Time{}
}

// tomorrowText says when play is possible again, for the messages.
func tomorrowText(r Rules, st Status, m playday.Moment, loc *time.Location) string {
	next := nextPlay(r, st, m, loc)
	if next.IsZero() {
		if st.ClockTrusted {
			return ""
		}
		return " Play again tomorrow."
	}
	d, _ := parseDay(st.Day, loc)
	t := next.In(loc)
	hm := clockText(t.Hour()*60 + t.Minute())
	switch {
	case sameDate(t, d.AddDate(0, 0, 1)) && hm == "00:00":
		return " Play again tomorrow."
	case sameDate(t, d.AddDate(0, 0, 1)):
		return " Play again tomorrow from " + hm + "."
	case hm == "00:00":
		return " Play again on " + t.Weekday().String() + "."
	}
	return " Play again on " + t.Weekday().String() + " from " + hm + "."
}

func sameDate(a, b time.Time) bool {
	return a.Year() == b.Year() && a.Month() == b.Month() && a.Day() == b.Day()
}

// nextAt is the next moment after now (or now) whose wall time is minute
// min of the day, in loc. A minute a daylight-saving change skips is
// normalized by time.Date (02:30 on a spring-forward day is 03:30).
func nextAt(now time.Time, min int, loc *time.Location) time.Time {
	t := time.Date(now.Year(), now.Month(), now.Day(), min/60, min%60, 0, 0, loc)
	if t.Before(now) {
		t = time.Date(now.Year(), now.Month(), now.Day()+1, min/60, min%60, 0, 0, loc)
	}
	return t
}

func clockText(min int) string { return Window{From: min}.String()[:5] }

func parseDay(day string, loc *time.Location) (time.Time, bool) {
	t, err := time.ParseInLocation(time.DateOnly, day, loc)
	return t, err == nil
}
