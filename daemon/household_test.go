package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// householdRig is a rig whose daemon enforces rules (kv: cabinet.household.*
// keys without the prefix) with Home Assistant's household controls on. Its
// loader reads the cabinet.household.* keys the daemon writes into the
// configuration file, as cmd/cabinet's does.
func householdRig(t testing.TB, kv ...string) *rig {
	t.Helper()
	return householdRigWith(t, nil, kv...)
}

// householdRigWith is householdRig with more set up before the daemon starts.
func householdRigWith(t testing.TB, before func(*rig), kv ...string) *rig {
	t.Helper()
	values := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		values[household.Prefix+kv[i]] = kv[i+1]
	}
	r := newRig(t, func(c *Config) {
		c.Rules.Settings.Household = true
		c.Household, _ = household.Parse(values)
		c.Rules.Settings.LimitsOn = c.Household.Enabled
		c.Rules.Settings.Profiles = strings.Join(c.Household.ProfileNames(), ",")
	}, func(r *rig) {
		r.loop = &playLoop{rearmed: make(chan struct{})}
		r.armed = r.loop.arm(r.clock)
		var lines []string
		for k, v := range values {
			lines = append(lines, k+"="+v)
		}
		if err := os.WriteFile(r.file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r.fileRules = true
		if before != nil {
			before(r)
		}
	})
	return r
}

// fileHousehold applies the cabinet.household.* keys of the rig's file to c.
func (r *rig) fileHousehold(c *Config) {
	data, err := batoconf.ReadFile(r.file)
	if err != nil {
		return
	}
	values := map[string]string{}
	for _, k := range household.Keys() {
		if v, ok := batoconf.Get(data, k.Name); ok {
			values[k.Name] = v
		}
	}
	for _, line := range strings.Split(string(data), "\n") { // the profiles' keys
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, household.ProfilePrefix) {
			values[k] = v
		}
	}
	c.Household, _ = household.Parse(values)
	c.Rules.Settings.LimitsOn = c.Household.Enabled
	c.Rules.Settings.Profiles = strings.Join(c.Household.ProfileNames(), ",")
}

// play launches the library's nes game n in ES and hands the daemon its
// start as ES's hook does; it returns once RetroArch runs it.
func (r *rig) play(n int) string {
	r.t.Helper()
	g := r.cab.Library.Games("nes")[n]
	// ES takes a moment to return from the last game before it launches.
	cabinettest.Await(r.t, "ES launching "+g.Name, nil, func() (bool, string) {
		if err := r.cab.ES.Launch("nes", g.ID); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	waitRA(r.t, r.cab.RetroArch, "game loaded", func(s fakeretroarch.Snapshot) bool { return s.Loaded && s.Listening })
	ev := r.stamped(tracker.KindGameStart)
	ev.Path, ev.Name, ev.System = g.Path, g.Name, "nes"
	r.deliver(ev)
	return g.Name
}

// ended hands the daemon the game's end as ES's hook does, once ES shows
// no game, and waits until the tracker has it.
func (r *rig) ended() {
	r.t.Helper()
	cabinettest.Await(r.t, "ES showing no game", nil, func() bool { _, running := r.cab.ES.Running(); return !running })
	// The end comes a moment after the start, however quick the quit: the
	// tracker takes an end stamped with its start's instant for a stale one.
	r.clock.Advance(10 * time.Millisecond)
	r.deliver(r.stamped(tracker.KindGameEnd))
	r.waitApplied("the game's end applied", func() bool { return !r.d.eng.snapshot().Playing })
}

// playLoop follows the play-time loop's timers (Options.HouseholdArmed):
// the deadline of the latest on the fake clock, and how many were armed.
type playLoop struct {
	mu       sync.Mutex
	deadline time.Time
	n        int
	rearmed  chan struct{} // closed and replaced at every timer armed
}

func (l *playLoop) arm(c *clock.Fake) func(time.Duration) {
	return func(d time.Duration) {
		l.mu.Lock()
		l.deadline, l.n = c.Now().Add(d), l.n+1
		close(l.rearmed)
		l.rearmed = make(chan struct{})
		l.mu.Unlock()
	}
}

func (l *playLoop) timer() (time.Time, int) { l.mu.Lock(); defer l.mu.Unlock(); return l.deadline, l.n }

func (l *playLoop) changed() <-chan struct{} { l.mu.Lock(); defer l.mu.Unlock(); return l.rearmed }

// awaitRearm waits until the loop has armed a timer after the n-th.
func (r *rig) awaitRearm(n int) {
	r.t.Helper()
	cabinettest.Await(r.t, "the play-time loop's next timer", r.loop.changed, func() bool { _, m := r.loop.timer(); return m > n })
}

// stepTo moves the fake clock to at, one timer of the play-time loop at a
// time, never past at, waiting at each for the loop to have acted and
// armed its next (a clock moved while the loop is busy would skip what it
// shows and publishes on the way), and says when (real time) the clock
// reached at: the loop is woken exactly when its timer says, as on a real
// clock.
func (r *rig) stepTo(at time.Time) time.Time {
	r.t.Helper()
	for {
		dl, n := r.loop.timer()
		now := r.clock.Now()
		if !now.Before(at) {
			return time.Now()
		}
		if !dl.After(now) { // fired: the loop is busy until it arms the next
			r.awaitRearm(n)
			continue
		}
		reached := time.Now()
		to := at
		if dl.Before(at) {
			to = dl
		}
		r.clock.Advance(to.Sub(now))
		if dl.After(at) {
			return reached
		}
		r.awaitRearm(n)
		if !dl.Before(at) {
			return reached
		}
	}
}

// until moves the fake clock on, timer by timer of the play-time loop,
// until cond holds.
func (r *rig) until(what string, cond func() (bool, string)) {
	r.t.Helper()
	for {
		if ok, _ := cond(); ok {
			return
		}
		dl, _ := r.loop.timer()
		r.stepTo(dl)
		if ok, _ := cond(); ok {
			return
		}
		if dl, n := r.loop.timer(); !dl.After(r.clock.Now()) {
			// Fired: either what is awaited comes (real time), or the
			// loop arms its next timer and the clock moves on to it.
			cabinettest.Await(r.t, what, r.loop.changed, func() (bool, string) {
				ok, why := cond()
				_, m := r.loop.timer()
				return ok || m > n, why
			})
		}
	}
}

// raStarts is raShown for a message that starts with text.
func raStarts(r *rig, text string) func() (bool, string) {
	return func() (bool, string) {
		msgs := r.cab.RetroArch.Snapshot().Messages
		return slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, text) }), strings.Join(msgs, " | ")
	}
}

func raShown(r *rig, text string) func() (bool, string) {
	return func() (bool, string) {
		msgs := r.cab.RetroArch.Snapshot().Messages
		return slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, text) }), strings.Join(msgs, " | ")
	}
}

// limitEvents are the event.batocera_limit messages published so far.
func (r *rig) limitEvents(kind string) []map[string]any {
	var out []map[string]any
	topic := r.settings.StateTopic(haentities.LimitEvent)
	for _, m := range r.broker.Messages() {
		var p map[string]any
		if m.Topic == topic && json.Unmarshal(m.Payload, &p) == nil && p["event_type"] == kind {
			out = append(out, p)
		}
	}
	return out
}

// TestHousehold plays an evening on the simulated cabinet under a 20-minute
// limit: the time left shown at the start and the warnings over the game
// (RetroArch), the game saved and quit at the limit through ES, a launch
// with no time left ended with a notification, and a parent's controls
// from Home Assistant: extra time, pause play, today's limit, the rules
// switched off (written to the configuration file). Everything published
// passes the strict validator.
func TestHousehold(t *testing.T) {
	r := householdRig(t, "enabled", "1", "minutes.daily", "20")
	s := r.settings
	state := s.StateTopic(haentities.LimitState)
	left := s.StateTopic(haentities.TimeLeftToday)
	r.retained(state, func(v string) bool { return v == "ok" })
	r.retained(left, func(v string) bool { return v == "20" })

	name := r.play(0)
	// Shown as the game starts: no time passes.
	cabinettest.Await(t, "the time left over the game", nil, raShown(r, "20 minutes of play left today."))
	// The loop shows a warning on its own goroutine and arms its next
	// timer at once, so a wait may step on to the next point before the
	// text is seen: each is looked for in all RetroArch showed, and the
	// state is read after the first (the next point is a warning too).
	for i, w := range []string{"15 minutes of play left today: the game will be saved and closed.", "5 minutes of play left today", "1 minute of play left today"} {
		// By its start: "15 minutes…" also contains "5 minutes…".
		r.until(w, raStarts(r, w))
		// Its warned event is delivered before the clock moves on: a time-sensitive event still
		// queued when the clock has gone past its window would be dropped as late.
		cabinettest.Await(t, fmt.Sprintf("warned event %d", i+1), r.broker.Changed, func() (bool, string) {
			ev := r.limitEvents("warned")
			return len(ev) >= i+1, fmt.Sprint(ev)
		})
		if i == 0 {
			r.retained(state, func(v string) bool { return v == "warning" })
		}
	}
	// The clock moves on until the limit, not past it: the quit is real
	// time (ES's /emukill) and the game counts until it has ended.
	r.until("the limit", func() (bool, string) {
		v, _ := r.broker.Retained(state)
		return string(v) == "time_up", string(v)
	})
	r.ended()
	if n := r.cab.RetroArch.Snapshot().StatesSaved; n != 1 {
		t.Errorf("%d states saved before the quit, want 1", n)
	}
	r.waitLog("ES notified", func() bool { return esNotified(r.cab.ES, "was saved and closed") })
	r.retained(state, func(v string) bool { return v == "time_up" })
	r.retained(left, func(v string) bool { return v == "0" })
	cabinettest.Await(t, "a reached event", r.broker.Changed, func() (bool, string) {
		ev := r.limitEvents("reached")
		return len(ev) == 1 && ev[0]["game"] == name, fmt.Sprint(ev)
	})
	if n := len(r.limitEvents("warned")); n != 3 {
		t.Errorf("%d warned events, want 3", n)
	}

	// No time left: a launch is ended, with why.
	r.play(1)
	r.ended()
	r.waitLog("ES notified", func() bool { return esNotified(r.cab.ES, "can't start now. Time is up for today.") })
	cabinettest.Await(t, "a refused event", r.broker.Changed, func() bool { return len(r.limitEvents("refused")) == 1 })

	// A parent's phone: +15 minutes.
	r.press(haentities.ExtraTime, haentities.PayloadPress)
	// 15 minutes (14 when the clock's step overshot the limit by seconds
	// before the loop ended the game: those seconds were played).
	r.retained(left, func(v string) bool { return v == "15" || v == "14" })
	cabinettest.Await(t, "an extended event", r.broker.Changed, func() bool { return len(r.limitEvents("extended")) == 1 })
	// Today's limit, then pause play.
	r.press(haentities.DailyLimit, "30")
	r.retained(left, func(v string) bool { return v == "25" || v == "24" })
	r.retained(s.StateTopic(haentities.DailyLimit), func(v string) bool { return v == "30" })
	r.press(haentities.PausePlay, "ON")
	r.retained(state, func(v string) bool { return v == "paused" })
	r.retained(s.StateTopic(haentities.PausePlay), func(v string) bool { return v == "ON" })
	r.press(haentities.PausePlay, "OFF")
	r.retained(state, func(v string) bool { return v == "ok" })
	// The rules off, from Home Assistant: written to the file, applied.
	r.press(haentities.Limits, "OFF")
	r.retained(state, func(v string) bool { return v == "off" })
	r.retained(s.StateTopic(haentities.Limits), func(v string) bool { return v == "OFF" })
	data, _ := os.ReadFile(r.file)
	if v, _ := batoconf.Get(data, household.Prefix+"enabled"); v != "0" {
		t.Errorf("cabinet.household.enabled in the file: %q", v)
	}
	validate(t, r.capture())
}
