package tracker

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// unlockAt is the achievements wrapper's event (the configgen source: it never publishes).
func unlockAt(sec float64, id uint32, title string) Event {
	ev := at(KindAchievement, sec, SourceConfiggen)
	ev.Unlock = Unlock{ID: id, Title: title, Description: "desc " + title, Hardcore: id%2 == 1}
	return ev
}

// unlockRun is feed's record of the unlocks: what became final (for the log) and what was announced.
type unlockRun struct {
	run
	unlocked  []haentities.Achievement
	announced []haentities.Achievement
}

// feedUnlocks applies evs one Apply each in arrival order, as their sources' processes do, at the
// latest event time plus delay, then flushes an hour later.
func feedUnlocks(t *testing.T, cfg Config, evs []Event, delay time.Duration) unlockRun {
	t.Helper()
	var r unlockRun
	st := New()
	var now Stamp
	collect := func(out Output) {
		r.collect(out)
		r.unlocked = append(r.unlocked, out.Unlocked...)
		for _, e := range out.Events {
			if e.Type == haentities.EventAchievementUnlocked {
				r.announced = append(r.announced, e.Achievement)
			}
		}
	}
	for _, ev := range evs {
		if s := ev.Stamp(); now.At.IsZero() || s.Boot+delay > now.Boot {
			now = Stamp{At: s.At.Add(delay), Boot: s.Boot + delay, BootID: s.BootID}
		}
		var out Output
		st, out = applyAs(st, cfg, now, ev)
		for _, err := range out.Skipped {
			t.Fatalf("event %v skipped: %v", ev.Kind, err)
		}
		collect(out)
	}
	st, out := Apply(st, cfg, Stamp{At: now.At.Add(time.Hour), Boot: now.Boot + time.Hour, BootID: now.BootID})
	collect(out)
	r.st, r.snap = st, out.Snapshot
	return r
}

func ids(as []haentities.Achievement) string {
	var s []string
	for _, a := range as {
		s = append(s, fmt.Sprint(a.ID))
	}
	return strings.Join(s, ",")
}

func TestUnlocksInASession(t *testing.T) {
	cfg := DefaultConfig()
	evs := []Event{
		esEvent(KindStart, 0),
		esGameStart(10, smbPath, smbName),
		cgEvent(KindGameStart, 10.4, "nes", smbPath),
		unlockAt(100, 11, "First"),
		unlockAt(150, 12, "Second"),
		unlockAt(150, 13, "Same moment"), // two unlocks of one frame are two
		cgEvent(KindGameEnd, 310, "nes", smbPath),
		esEvent(KindGameEnd, 310.03),
	}
	r := feedUnlocks(t, cfg, evs, 50*time.Millisecond)
	if len(r.logged) != 1 {
		t.Fatalf("logged %v", describeLogged(r.logged, true))
	}
	s := r.logged[0]
	if ids(s.Achievements) != "11,12,13" || s.Unlocks() != 3 {
		t.Errorf("the session's unlocks: %s (%d), want 11,12,13", ids(s.Achievements), s.Unlocks())
	}
	if ids(r.unlocked) != "11,12,13" || ids(r.announced) != "11,12,13" {
		t.Errorf("unlocked for the log %s, announced %s: want each once, in order", ids(r.unlocked), ids(r.announced))
	}
	for _, a := range r.unlocked {
		if a.Game != smbName || a.System != "nes" || a.SessionID != s.ID {
			t.Errorf("unlock %d: game %q, system %q, session %q; want the session's (%s)", a.ID, a.Game, a.System, a.SessionID, s.ID)
		}
		if a.Hardcore != (a.ID%2 == 1) {
			t.Errorf("unlock %d: hardcore %v lost", a.ID, a.Hardcore)
		}
	}
	if r.snap.LastAchievement.ID != 13 || r.snap.Last.Unlocks() != 3 {
		t.Errorf("last achievement %+v, last session's unlocks %d", r.snap.LastAchievement, r.snap.Last.Unlocks())
	}
}

// An unlock ES's hook reports before the game's start (concurrent hooks, any order within the
// reorder window) still belongs to that game; so does one stamped with the start itself.
func TestUnlockOrderWithinTheWindow(t *testing.T) {
	cfg := DefaultConfig()
	for _, order := range [][]Event{
		{unlockAt(10.5, 21, "Early"), esGameStart(10, smbPath, smbName), unlockAt(10, 22, "Same stamp")},
		{unlockAt(10, 22, "Same stamp"), esGameStart(10, smbPath, smbName), unlockAt(10.5, 21, "Early")},
	} {
		evs := append(order, esEvent(KindGameEnd, 200))
		r := feedUnlocks(t, cfg, evs, 20*time.Millisecond)
		if len(r.logged) != 1 || ids(r.logged[0].Achievements) != "22,21" {
			t.Fatalf("arrival %s first: logged %v, want one session with 22,21", order[0].Kind, describeLogged(r.logged, false))
		}
		if ids(r.unlocked) != "22,21" {
			t.Errorf("unlocked %s, want 22,21 once each", ids(r.unlocked))
		}
	}
}

func TestUnlockWithoutASession(t *testing.T) {
	r := feedUnlocks(t, DefaultConfig(), []Event{esEvent(KindStart, 0), unlockAt(5, 31, "Menu unlock")}, 0)
	if len(r.unlocked) != 1 || r.unlocked[0].SessionID != "" || r.unlocked[0].Game != "" {
		t.Errorf("unlocked %+v: want one, with no session", r.unlocked)
	}
	if r.snap.LastAchievement.ID != 31 || !r.snap.Online {
		t.Errorf("snapshot %+v", r.snap)
	}
}

// The same unlock applied twice (a spool file taken again, a retried hook) counts once; the same id
// reported again seconds later is announced once but logged each time (encore mode fires again).
func TestUnlockDuplicates(t *testing.T) {
	u := unlockAt(20, 41, "Twice")
	r := feedUnlocks(t, DefaultConfig(), []Event{esGameStart(10, smbPath, smbName), u, u, esEvent(KindGameEnd, 100)}, 0)
	if ids(r.unlocked) != "41" || ids(r.announced) != "41" || r.logged[0].Unlocks() != 1 {
		t.Errorf("unlocked %s, announced %s, session %d: want one", ids(r.unlocked), ids(r.announced), r.logged[0].Unlocks())
	}
}

// An unlock older than the newest final event is kept (the log, the session it happened in) but
// not announced: too late to flash lights.
func TestLateUnlock(t *testing.T) {
	cfg := DefaultConfig()
	st, _ := Apply(New(), cfg, stampAt(30), esGameStart(10, smbPath, smbName), esEvent(KindSleep, 25))
	_, out := Apply(st, cfg, stampAt(31), unlockAt(20, 51, "Late"))
	if len(out.Skipped) != 0 || ids(out.Unlocked) != "51" || len(out.Events) != 0 {
		t.Fatalf("late unlock: skipped %v, unlocked %s, events %v", out.Skipped, ids(out.Unlocked), describeEvents(out.Events))
	}
	if out.Snapshot.Current.Unlocks() != 1 || out.Snapshot.LastAchievement.ID != 51 {
		t.Errorf("running session %+v", out.Snapshot.Current)
	}
}

func TestSessionKeepsTheFirstUnlocks(t *testing.T) {
	evs := []Event{esGameStart(10, smbPath, smbName)}
	for i := range 25 {
		evs = append(evs, unlockAt(20+float64(i), uint32(100+i), fmt.Sprint("u", i)))
	}
	evs = append(evs, esEvent(KindGameEnd, 100))
	r := feedUnlocks(t, DefaultConfig(), evs, 0)
	s := r.logged[0]
	if len(s.Achievements) != haentities.MaxSessionAchievements || s.Unlocks() != 25 || len(r.unlocked) != 25 {
		t.Errorf("session keeps %d of %d unlocks, log %d: want %d of 25, all 25 logged", len(s.Achievements), s.Unlocks(), len(r.unlocked), haentities.MaxSessionAchievements)
	}
	msgs := Output{Logged: r.logged}.Messages(haentities.Settings{ID: "x"}, testBase)
	end := msgs[len(msgs)-1]
	if !strings.Contains(string(end.Payload), `"achievements_count":25`) || strings.Count(string(end.Payload), `"id":`) != haentities.MaxSessionAchievements {
		t.Errorf("session_end %s", end.Payload)
	}
}

// Replays never share a session's unlocks between snapshots: the state before an apply is not
// changed by the apply.
func TestUnlockReplaysDoNotAlias(t *testing.T) {
	cfg := DefaultConfig()
	st, _ := Apply(New(), cfg, stampAt(10.1), esGameStart(10, smbPath, smbName), unlockAt(10.05, 61, "a"))
	before := Running(st, cfg)
	_, out := Apply(st, cfg, stampAt(10.2), unlockAt(10.15, 62, "b"))
	if ids(before.Achievements) != "61" || ids(out.Snapshot.Current.Achievements) != "61,62" {
		t.Errorf("before %s, after %s", ids(before.Achievements), ids(out.Snapshot.Current.Achievements))
	}
	if !slices.ContainsFunc(out.Events, func(e TimedEvent) bool { return e.Achievement.ID == 62 }) {
		t.Errorf("events %v: want 62 announced", describeEvents(out.Events))
	}
}
