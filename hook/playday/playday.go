// Package playday keeps the figure behind sensor.batocera_play_time_today:
// the seconds of logged play since local midnight, and the week's most
// played games.
//
// Boxes without a clock chip boot with the wall clock in the past and jump
// when NTP sets it, so the wall clock alone would move play into the wrong
// day, or reset the figure when the jump crosses a date. The boot clock
// (CLOCK_BOOTTIME) is the guide: this boot's play is kept as spans on it,
// and placed on the calendar only through a wall clock the kernel says is
// set. Until then the figure keeps adding to the last day the cabinet knew
// and never resets; once the clock is set, this boot's play lands on the
// real day (a day change resets the figure then, not at the jump's false
// dates).
package playday

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Bounds of the kept state, whatever happens.
const (
	maxSpans    = 256 // this boot's logged sessions (merged when they touch)
	maxWeekDays = 7
	maxDayGames = 64 // games kept per day; the least played go first
	// jump is how far the wall clock may move against the boot clock before
	// it counts as set anew (NTP's slewing moves it by milliseconds).
	jump = 2 * time.Minute
)

// Moment is an instant on both clocks, and whether the wall clock is set
// (the kernel's NTP status, see bootclock.Synced).
type Moment struct {
	Wall   time.Time
	Boot   time.Duration
	BootID string
	Synced bool
}

// Span is played time on one boot's clock.
type Span struct {
	From time.Duration `json:"f"`
	To   time.Duration `json:"t"`
}

// DayGames is one day's play per game, in seconds.
type DayGames struct {
	Day   string           `json:"d"`
	Games map[string]int64 `json:"g,omitempty"`
}

// State is what is kept between runs (Encode/Decode, in the store).
type State struct {
	V int `json:"v"`
	// Day is the local date ("2006-01-02") the figure belongs to.
	Day string `json:"day,omitempty"`
	// Before is the play on Day from other boots, in seconds.
	Before int64 `json:"before,omitempty"`
	// BootID is the boot the spans belong to.
	BootID string `json:"bid,omitempty"`
	// Trusted says this boot's wall clock has been seen set; Offset is then
	// wall minus boot clock, which places the spans on the calendar.
	Trusted bool          `json:"trusted,omitempty"`
	Offset  time.Duration `json:"off,omitempty"`
	// Back says this boot's set clock was seen showing a day before Day (set
	// back by hand, or a clock chip that lost time): until it shows Day again
	// it places nothing, and this boot's play counts on Day.
	Back  bool   `json:"back,omitempty"`
	Spans []Span `json:"spans,omitempty"`
	// Week is the play per game of the last days, oldest first.
	Week []DayGames `json:"week,omitempty"`
}

const version = 1

// Decode reads a kept state; nothing kept is a blank state.
func Decode(b []byte) (State, error) {
	if len(b) == 0 {
		return State{V: version}, nil
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{V: version}, fmt.Errorf("play time today: kept state unreadable, starting again: %w", err)
	}
	if st.V != version {
		return State{V: version}, fmt.Errorf("play time today: kept state version %d, want %d; starting again", st.V, version)
	}
	if st.Before < 0 || len(st.Spans) > maxSpans || len(st.Week) > maxWeekDays {
		return State{V: version}, fmt.Errorf("play time today: kept state out of bounds; starting again")
	}
	return st, nil
}

// Encode is the state as kept.
func Encode(st State) []byte {
	st.V = version
	b, _ := json.Marshal(st)
	return b
}

func dayOf(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }

// window is Day's local midnight and the next one.
func window(day string, loc *time.Location) (time.Time, time.Time, bool) {
	t, err := time.ParseInLocation(time.DateOnly, day, loc)
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	return t, t.AddDate(0, 0, 1), true
}

func overlap(a0, a1, b0, b1 time.Time) int64 {
	from, to := maxTime(a0, b0), minTime(a1, b1)
	if !to.After(from) {
		return 0
	}
	return int64(to.Sub(from) / time.Second)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// onDay is how much of this boot's spans (plus extra, a running session)
// falls on Day: placed through the offset once the clock is trusted, all
// of it before.
func (st State) onDay(loc *time.Location, extra ...Span) int64 {
	spans := append(st.Spans[:len(st.Spans):len(st.Spans)], extra...)
	var n int64
	if !st.Trusted {
		for _, s := range spans {
			n += int64((s.To - s.From) / time.Second)
		}
		return n
	}
	d0, d1, ok := window(st.Day, loc)
	if !ok {
		return 0
	}
	for _, s := range spans {
		n += overlap(time.Unix(0, 0).Add(s.From+st.Offset), time.Unix(0, 0).Add(s.To+st.Offset), d0, d1)
	}
	return n
}

// newBoot folds the old boot's play into Before and starts bootID's.
func (st *State) newBoot(bootID string, loc *time.Location) {
	if st.BootID == bootID {
		return
	}
	st.Before += st.onDay(loc)
	st.BootID, st.Trusted, st.Offset, st.Spans, st.Back = bootID, false, 0, nil, false
}

// setDay moves the figure to day when day is later (a new day: it starts
// again from this boot's play on it). An earlier date is never taken: the
// label came from a clock that was wrong, or the clock was set back.
func (st *State) setDay(day string, loc *time.Location) {
	switch {
	case st.Day == "":
		st.Day = day
	case day > st.Day:
		st.Day, st.Before = day, 0
		d0, _, ok := window(day, loc)
		if ok && st.Trusted {
			// Spans wholly before the new day count for nothing any more.
			kept := st.Spans[:0]
			for _, s := range st.Spans {
				if time.Unix(0, 0).Add(s.To + st.Offset).After(d0) {
					kept = append(kept, s)
				}
			}
			st.Spans = kept
		}
	}
	if n := len(st.Week); n == 0 || st.Week[n-1].Day < st.Day {
		st.Week = append(st.Week, DayGames{Day: st.Day})
		if len(st.Week) > maxWeekDays {
			st.Week = st.Week[len(st.Week)-maxWeekDays:]
		}
	}
}

// Observe brings the state to m: a new boot, the clock being set (or
// jumping), midnight.
func Observe(st State, m Moment, loc *time.Location) State {
	st.Spans = append([]Span(nil), st.Spans...)
	st.Week = cloneWeek(st.Week)
	st.newBoot(m.BootID, loc)
	synced := m.Synced
	if synced && st.Day != "" && dayOf(m.Wall, loc) < st.Day {
		// A set clock showing an earlier day than the one kept was set
		// back: it cannot place play (moving the clock back must not
		// escape a day's count). What it placed stays counted; what
		// follows counts on Day, as before a clock is set.
		if st.Trusted {
			st.Before += st.onDay(loc)
			st.Spans, st.Trusted, st.Offset = nil, false, 0
		}
		st.Back, synced = true, false
	}
	if synced && st.Back {
		// The set-back clock shows Day (or later) again: what this boot
		// played meanwhile was played on Day.
		st.Before += st.onDay(loc)
		st.Spans, st.Back = nil, false
	}
	if synced {
		// The first set clock places this boot's spans. A set clock that
		// jumps later (set back by hand, a second NTP step) keeps what it
		// already counted: the spans so far go into Before as placed.
		off := m.Wall.Sub(time.Unix(0, 0)) - m.Boot
		if st.Trusted && (off-st.Offset > jump || st.Offset-off > jump) {
			st.Before += st.onDay(loc)
			st.Spans = nil
		}
		// The two clocks are read a moment apart and NTP slews: a drift
		// under a second is not news, and keeping the offset keeps the
		// state's bytes, so nothing is written for it.
		if !st.Trusted || off-st.Offset > time.Second || st.Offset-off > time.Second {
			st.Trusted, st.Offset = true, off
		}
	}
	if st.Trusted || st.Day == "" {
		st.setDay(dayOf(m.Wall, loc), loc)
	}
	return st
}

// Add counts a logged session, at m (which Observe is applied to first).
func Add(st State, sess haentities.Session, m Moment, loc *time.Location) State {
	st = Observe(st, m, loc)
	secs := int64(sess.Duration / time.Second)
	if secs <= 0 {
		return st
	}
	switch {
	case sess.BootID != "" && sess.BootID == st.BootID && sess.EndBoot >= sess.Duration:
		st.Spans = addSpan(st.Spans, Span{From: sess.EndBoot - sess.Duration, To: sess.EndBoot})
	default:
		// Another boot's session reaching us late (a hook spooled it): its
		// wall times are all there is.
		if d0, d1, ok := window(st.Day, loc); ok {
			st.Before += overlap(sess.Ended.Add(-sess.Duration), sess.Ended, d0, d1)
		}
	}
	if n := len(st.Week); n > 0 {
		g := haentities.GameLabel(sess) // cleaned and bounded already
		day := &st.Week[n-1]
		if day.Games == nil {
			day.Games = map[string]int64{}
		}
		day.Games[g] += secs
		if len(day.Games) > maxDayGames {
			least, ln := "", int64(-1)
			for k, v := range day.Games {
				if ln < 0 || v < ln || v == ln && k < least {
					least, ln = k, v
				}
			}
			delete(day.Games, least)
		}
	}
	return st
}

// addSpan inserts s in order, merging spans that overlap (a session
// reported twice never counts twice).
func addSpan(spans []Span, s Span) []Span {
	spans = append(spans, s)
	sort.Slice(spans, func(i, j int) bool { return spans[i].From < spans[j].From })
	out := spans[:1]
	for _, x := range spans[1:] {
		last := &out[len(out)-1]
		if x.From <= last.To {
			last.To = max(last.To, x.To)
			continue
		}
		out = append(out, x)
	}
	if len(out) > maxSpans { // the oldest go into Before
		out = out[len(out)-maxSpans:]
	}
	return out
}

func cloneWeek(w []DayGames) []DayGames {
	out := make([]DayGames, len(w))
	for i, d := range w {
		out[i] = DayGames{Day: d.Day}
		if d.Games != nil {
			out[i].Games = make(map[string]int64, len(d.Games))
			for k, v := range d.Games {
				out[i].Games[k] = v
			}
		}
	}
	return out
}

// AddSpan counts time played on this boot's clock, at m (which Observe is
// applied to first); a span reported again, or grown, never counts twice.
func AddSpan(st State, s Span, m Moment, loc *time.Location) State {
	st = Observe(st, m, loc)
	if s.To > s.From {
		st.Spans = addSpan(st.Spans, s)
	}
	return st
}

// Played is the seconds played on Day (after Observe), with running, a
// span still being played, added.
func Played(st State, running *Span, loc *time.Location) int64 {
	var extra []Span
	if running != nil && running.To > running.From {
		extra = append(extra, *running)
	}
	return st.Before + st.onDay(loc, extra...)
}

// Today is the figure at m (after Observe): the logged play on Day plus
// running, the session still being played (from its start on this boot's
// clock to m; nil when none is counted yet).
func Today(st State, m Moment, running *Span, loc *time.Location, top int) haentities.PlayDay {
	f := haentities.PlayDay{Seconds: Played(st, running, loc), Day: st.Day, ClockSet: st.Trusted}
	totals := map[string]int64{}
	first := ""
	if d0, _, ok := window(st.Day, loc); ok {
		first = dayOf(d0.AddDate(0, 0, -(maxWeekDays-1)), loc)
	}
	for _, d := range st.Week {
		if d.Day < first || d.Day > st.Day {
			continue
		}
		for g, s := range d.Games {
			totals[g] += s
			f.WeekS += s
		}
	}
	for g, s := range totals {
		f.Top = append(f.Top, haentities.TopGame{Game: g, Seconds: s})
	}
	sort.Slice(f.Top, func(i, j int) bool {
		if f.Top[i].Seconds != f.Top[j].Seconds {
			return f.Top[i].Seconds > f.Top[j].Seconds
		}
		return f.Top[i].Game < f.Top[j].Game
	})
	if len(f.Top) > top {
		f.Top = f.Top[:top]
	}
	return f
}

// NextMidnight is when the figure next resets by the wall clock at m.
func NextMidnight(m Moment, loc *time.Location) time.Time {
	t := m.Wall.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
}
