package sensors

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/playday"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestPlayToday: 0 before any play; a running game counts once it is long enough to be logged
// and moves on every half minute; its end keeps the figure until the session is logged (no drop
// HA would read as a new day), the logged session then carries it; midnight starts a new day.
func TestPlayToday(t *testing.T) {
	h := newHost(haentities.Sources{})
	h.rules.Tracker.MinSession = time.Minute
	start := time.Date(2026, 12, 1, 23, 50, 0, 0, time.UTC)
	c := clock.NewFake(start)
	boot := func() tracker.Stamp {
		return tracker.Stamp{At: c.Now(), Boot: time.Hour + c.Since(start), BootID: "boot-1"}
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := &PlayToday{Host: h, Clock: c, Log: cabinettest.Logger(t), Store: st, Now: boot,
		Synced: func(time.Time) bool { return true }, Location: time.UTC}
	topic := h.Rules().Settings.StateTopic(haentities.PlayTimeToday)
	seconds := func() int {
		v := h.payloads(topic)
		if len(v) == 0 {
			return -1
		}
		n, _ := strconv.Atoi(v[len(v)-1])
		return n
	}
	run(t, c, p.Run)
	h.wait(t, "0 at start", func() bool { return seconds() == 0 })

	// step moves the clock once the loop waits on it again (it re-arms its one timer after
	// each observation: a step before that would move nothing).
	step := func(d time.Duration) {
		t.Helper()
		if err := c.BlockUntil(cabinettest.Context(t), 1); err != nil {
			t.Fatal(err)
		}
		c.Advance(d)
	}
	started := boot()
	h.setSnapshot(haentities.Snapshot{Playing: true, CurrentBoot: started.Boot, CurrentBootID: started.BootID,
		Current: haentities.Session{Game: "Alpha Quest", Started: started.At}})
	step(PlayTodayEvery)
	if n := seconds(); n != 0 {
		t.Errorf("a 30 s game counts %d s already (the minimum session is 60 s)", n)
	}
	step(PlayTodayEvery)
	h.wait(t, "the running game at 60 s", func() bool { return seconds() == 60 })
	step(PlayTodayEvery)
	h.wait(t, "the running game at 90 s", func() bool { return seconds() == 90 })

	// The game ends at 90 s; its session is not logged yet: the figure holds.
	ended := boot()
	h.setSnapshot(haentities.Snapshot{})
	step(time.Second)
	if n := seconds(); n != 90 {
		t.Errorf("between the end and the logging the figure is %d, want it held at 90", n)
	}
	// The journal logs the session (in the transaction that logs it, as hook/journal does).
	if err := st.Update(func(tx *store.Tx) error {
		s, _ := playday.Decode(tx.PlayDay())
		s = playday.Add(s, haentities.Session{ID: "s1", Game: "Alpha Quest", Started: started.At, Ended: ended.At, Duration: 90 * time.Second,
			EndBoot: ended.Boot, BootID: "boot-1"},
			playday.Moment{Wall: ended.At, Boot: ended.Boot, BootID: "boot-1", Synced: true}, time.UTC)
		return tx.SetPlayDay(playday.Encode(s))
	}); err != nil {
		t.Fatal(err)
	}
	h.setSnapshot(haentities.Snapshot{}) // an apply
	step(time.Second)
	if n := seconds(); n != 90 {
		t.Errorf("after the logging the figure is %d, want 90", n)
	}
	// Midnight (23:52 now): a new day.
	step(9 * time.Minute)
	h.wait(t, "0 on the new day", func() bool { return seconds() == 0 })
}
