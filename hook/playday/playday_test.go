package playday

import (
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

var paris = func() *time.Location {
	l, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		return time.FixedZone("CET", 3600)
	}
	return l
}()

// box is a cabinet's clocks: boot starts at bootWall on the real calendar;
// the wall clock reads real time plus skew.
type box struct {
	bootID   string
	bootWall time.Time // real time at boot
	skew     time.Duration
	synced   bool
}

func (b box) at(real time.Time) Moment {
	return Moment{Wall: real.Add(b.skew), Boot: real.Sub(b.bootWall), BootID: b.bootID, Synced: b.synced}
}

// session is a logged session of d ending at real time end on b.
func (b box) session(game string, end time.Time, d time.Duration) haentities.Session {
	m := b.at(end)
	return haentities.Session{ID: game + end.String(), Game: game, Started: m.Wall.Add(-d), Ended: m.Wall, Duration: d,
		EndBoot: m.Boot, BootID: b.bootID}
}

func day(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, paris)
}

func TestToday(t *testing.T) {
	type step struct {
		at      time.Time
		box     *box
		play    time.Duration // a session of this length ending at at (0: only observe)
		game    string
		running time.Duration // a session running since at-running
		want    int64
		wantDay string
		set     bool
	}
	synced := &box{bootID: "b1", bootWall: day(2026, 12, 2, 8, 0), synced: true}
	// The same box after its clock was set back two days by hand.
	back := &box{bootID: "b1", bootWall: day(2026, 12, 2, 8, 0), skew: -48 * time.Hour, synced: true}
	// A Pi without a clock chip: boots on 1 January 2000, NTP later.
	pi := &box{bootID: "p1", bootWall: day(2026, 12, 3, 18, 0), skew: day(2000, 1, 1, 0, 0).Sub(day(2026, 12, 3, 18, 0))}
	cases := []struct {
		name  string
		steps []step
	}{
		{"a synced day and its midnight", []step{
			{at: day(2026, 12, 2, 9, 0), box: synced, play: 30 * time.Minute, game: "Zelda", want: 1800, wantDay: "2026-12-02", set: true},
			{at: day(2026, 12, 2, 10, 0), box: synced, running: 10 * time.Minute, want: 2400, wantDay: "2026-12-02", set: true},
			{at: day(2026, 12, 2, 23, 50), box: synced, play: 20 * time.Minute, game: "Tetris", want: 3000, wantDay: "2026-12-02", set: true},
			// The session crossing midnight: its 10 minutes before it stay
			// with yesterday.
			{at: day(2026, 12, 3, 0, 10), box: synced, play: 20 * time.Minute, game: "Tetris", want: 600, wantDay: "2026-12-03", set: true},
			{at: day(2026, 12, 3, 1, 0), box: synced, want: 600, wantDay: "2026-12-03", set: true},
		}},
		{"no clock chip: counts on, then lands on the real day", []step{
			{at: day(2026, 12, 2, 20, 0), box: synced, play: time.Hour, game: "Zelda", want: 3600, wantDay: "2026-12-02", set: true},
			// Next day, the Pi boots in 2000: no reset, this boot's play
			// adds to the last day known.
			{at: day(2026, 12, 3, 18, 30), box: pi, play: 20 * time.Minute, game: "Sonic", want: 4800, wantDay: "2026-12-02"},
			// NTP sets the clock: the 20 minutes are today's, yesterday's
			// hour is gone (a real new day), nothing is counted twice.
			{at: day(2026, 12, 3, 18, 40), box: func() *box { b := *pi; b.skew, b.synced = 0, true; return &b }(), want: 1200, wantDay: "2026-12-03", set: true},
		}},
		{"the clock set back never resets", []step{
			{at: day(2026, 12, 2, 9, 0), box: synced, play: time.Hour, game: "Zelda", want: 3600, wantDay: "2026-12-02", set: true},
			// Set back two days: the day stays, and it places nothing
			// (ClockSet false) so what is played now still counts on it.
			{at: day(2026, 12, 2, 10, 0), box: back, want: 3600, wantDay: "2026-12-02"},
			{at: day(2026, 12, 2, 11, 0), box: back, play: 30 * time.Minute, game: "Zelda", want: 5400, wantDay: "2026-12-02"},
			{at: day(2026, 12, 2, 11, 10), box: back, running: 10 * time.Minute, want: 6000, wantDay: "2026-12-02"},
			// The clock put right: what was played meanwhile stays on the day.
			{at: day(2026, 12, 2, 12, 0), box: synced, want: 5400, wantDay: "2026-12-02", set: true},
			{at: day(2026, 12, 3, 0, 30), box: synced, play: 20 * time.Minute, game: "Zelda", want: 1200, wantDay: "2026-12-03", set: true},
		}},
		{"a clock set back across a reboot still counts on the kept day", []step{
			{at: day(2026, 12, 2, 9, 0), box: synced, play: time.Hour, game: "Zelda", want: 3600, wantDay: "2026-12-02", set: true},
			{at: day(2026, 12, 2, 11, 0), box: &box{bootID: "b2", bootWall: day(2026, 12, 2, 10, 0), synced: true, skew: -24 * time.Hour}, play: 30 * time.Minute, game: "Zelda", want: 5400, wantDay: "2026-12-02"},
		}},
		{"a restart of the daemon keeps the day", []step{
			{at: day(2026, 12, 2, 9, 0), box: synced, play: time.Hour, game: "Zelda", want: 3600, wantDay: "2026-12-02", set: true},
			{at: day(2026, 12, 2, 9, 5), box: &box{bootID: "b2", bootWall: day(2026, 12, 2, 9, 1), synced: true}, play: 2 * time.Minute, game: "Zelda", want: 3720, wantDay: "2026-12-02", set: true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, _ := Decode(nil)
			for i, s := range c.steps {
				m := s.box.at(s.at)
				if s.play > 0 {
					st = Add(st, s.box.session(s.game, s.at, s.play), m, paris)
				} else {
					st = Observe(st, m, paris)
				}
				var run *Span
				if s.running > 0 {
					run = &Span{From: m.Boot - s.running, To: m.Boot}
				}
				// The state survives a round trip through the store.
				st, _ = Decode(Encode(st))
				f := Today(st, m, run, paris, 5)
				if f.Seconds != s.want || f.Day != s.wantDay || f.ClockSet != s.set {
					t.Fatalf("step %d: %d s on %s (clock set %v), want %d s on %s (%v)", i, f.Seconds, f.Day, f.ClockSet, s.want, s.wantDay, s.set)
				}
			}
		})
	}
}

func TestWeekTop(t *testing.T) {
	b := &box{bootID: "b", bootWall: day(2026, 11, 20, 8, 0), synced: true}
	st, _ := Decode(nil)
	for d := 0; d < 10; d++ {
		end := day(2026, 11, 20+d, 20, 0)
		st = Add(st, b.session("Zelda", end, 10*time.Minute), b.at(end), paris)
		if d >= 7 {
			st = Add(st, b.session("Tetris", end.Add(time.Minute), 30*time.Minute), b.at(end.Add(time.Minute)), paris)
		}
	}
	f := Today(st, b.at(day(2026, 11, 29, 21, 0)), nil, paris, 5)
	want := []haentities.TopGame{{Game: "Tetris", Seconds: 3 * 1800}, {Game: "Zelda", Seconds: 7 * 600}}
	if len(f.Top) != 2 || f.Top[0] != want[0] || f.Top[1] != want[1] || f.WeekS != 3*1800+7*600 {
		t.Errorf("top %+v week %d, want %+v", f.Top, f.WeekS, want)
	}
	if len(st.Week) != maxWeekDays {
		t.Errorf("%d days kept", len(st.Week))
	}
}

func TestSessionReportedTwiceCountsOnce(t *testing.T) {
	b := &box{bootID: "b", bootWall: day(2026, 12, 2, 8, 0), synced: true}
	st, _ := Decode(nil)
	end := day(2026, 12, 2, 9, 0)
	s := b.session("Zelda", end, 30*time.Minute)
	st = Add(st, s, b.at(end), paris)
	st = Add(st, s, b.at(end), paris)
	if f := Today(st, b.at(end), nil, paris, 5); f.Seconds != 1800 {
		t.Errorf("%d s, want 1800", f.Seconds)
	}
}

func TestDecodeRefusesGarbage(t *testing.T) {
	for _, b := range []string{"{", `{"v":9}`, `{"v":1,"before":-5}`} {
		if _, err := Decode([]byte(b)); err == nil {
			t.Errorf("%s decoded", b)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(State{Day: "2026-12-02", Before: 5, Spans: []Span{{1, 2}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Decode(b)
		if err != nil {
			return
		}
		m := Moment{Wall: time.Now(), Boot: time.Hour, BootID: st.BootID, Synced: true}
		Today(Observe(st, m, time.UTC), m, nil, time.UTC, 5)
	})
}

// TestObserveKeepsItsBytes: observing a set clock again, a moment later,
// changes nothing kept (the daemon writes the state only when it changes).
func TestObserveKeepsItsBytes(t *testing.T) {
	b := &box{bootID: "b", bootWall: day(2026, 12, 2, 8, 0), synced: true}
	st := Observe(State{V: version}, b.at(day(2026, 12, 2, 9, 0)), paris)
	m := b.at(day(2026, 12, 2, 9, 1))
	m.Wall = m.Wall.Add(3 * time.Millisecond) // read a moment after the boot clock
	if a, z := string(Encode(st)), string(Encode(Observe(st, m, paris))); a != z {
		t.Errorf("a second observation rewrote the state:\n%s\n%s", a, z)
	}
}
