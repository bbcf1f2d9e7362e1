package journal

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

func unlockEv(at time.Duration, id uint32) tracker.Event {
	e := ev(tracker.KindAchievement, at)
	e.Source = tracker.SourceConfiggen
	e.Unlock = tracker.Unlock{ID: id, Title: "t", Description: "d"}
	return e
}

func gameStartEv(at time.Duration, path string) tracker.Event {
	e := ev(tracker.KindGameStart, at)
	e.Path, e.Name = path, "Game"
	return e
}

// An unlock's hardcore setting is the one batocera.conf gives the game that runs when it is first
// applied (its system and ROM, else a start among the same events), read once, and it stays with
// the unlock: a later change of the file changes neither the log nor the session. Every unlock
// that becomes final is logged once.
func TestUnlockHardcoreAndLog(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "batocera.conf")
	os.WriteFile(conf, []byte("global.retroachievements.hardcore=0\nsnes.retroachievements.hardcore=1\n"+
		"snes[\"Soft.sfc\"].retroachievements.hardcore=0\n"), 0o644)
	st, err := store.Open(filepath.Join(dir, "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := Rules{Settings: haentities.Settings{ID: "abc"}, Tracker: tracker.DefaultConfig(), BatoceraConf: conf}
	stamp := func(at time.Duration) tracker.Stamp {
		return tracker.Stamp{At: t0.Add(at), Boot: time.Hour + at, BootID: "boot1"}
	}
	apply := func(at time.Duration, evs ...tracker.Event) Result {
		var ks []Keyed
		for _, e := range evs {
			ks = append(ks, NewKeyed(e))
		}
		res, err := Apply(st, r, stamp(at), true, ks)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	hard := func(res Result) map[uint32]bool {
		out := map[uint32]bool{}
		for _, e := range res.Events {
			if e.Type == haentities.EventAchievementUnlocked {
				out[e.Achievement.ID] = e.Achievement.Hardcore
			}
		}
		return out
	}
	// A start and an unlock in one apply (the spool, say): the start decides.
	if h := hard(apply(11*time.Second, gameStartEv(10*time.Second, "/userdata/roms/snes/Hard.sfc"), unlockEv(10500*time.Millisecond, 1))); !h[1] {
		t.Errorf("unlock in the same apply as its snes game's start: hardcore %v, want on", h)
	}
	// The running session decides: snes on.
	if h := hard(apply(20*time.Second, unlockEv(19*time.Second, 2))); !h[2] {
		t.Errorf("unlock during the snes game: %v, want hardcore", h)
	}
	os.WriteFile(conf, []byte("global.retroachievements.hardcore=0\n"), 0o644)
	apply(100*time.Second, ev(tracker.KindGameEnd, 90*time.Second))
	// A game whose own key turns it off.
	os.WriteFile(conf, []byte("snes.retroachievements.hardcore=1\nsnes[\"Soft.sfc\"].retroachievements.hardcore=0\n"), 0o644)
	apply(201*time.Second, gameStartEv(200*time.Second, "/userdata/roms/snes/Soft.sfc"))
	if h := hard(apply(211*time.Second, unlockEv(210*time.Second, 3))); h[3] {
		t.Errorf("unlock in Soft.sfc (its own key off): hardcore")
	}
	res := apply(400*time.Second, ev(tracker.KindGameEnd, 300*time.Second))
	if len(res.Logged) != 1 || res.Logged[0].Unlocks() != 1 {
		t.Errorf("logged %+v: want Soft.sfc's session with its unlock", res.Logged)
	}
	apply(time.Hour) // a flush: everything final
	got, total, err := st.AchievementsIn(time.Time{}, time.Time{}, 0)
	if err != nil || total != 3 || len(got) != 3 {
		t.Fatalf("log %+v (%d, %v): want 3", got, total, err)
	}
	want := map[uint32]bool{1: true, 2: true, 3: false} // the file changed since: the log keeps what was
	for _, a := range got {
		if a.Hardcore != want[a.ID] || a.SessionID == "" || a.System != "snes" {
			t.Errorf("logged unlock %+v: want hardcore %v in a snes session", a, want[a.ID])
		}
	}
	if got[0].ID != 3 {
		t.Errorf("log order %d,%d,%d: want newest first", got[0].ID, got[1].ID, got[2].ID)
	}
	// A period holds its own unlocks; the limit caps the list, not the count.
	if _, total, _ := st.AchievementsIn(t0.Add(15*time.Second), t0.Add(250*time.Second), 1); total != 2 {
		t.Errorf("unlocks between 15 s and 250 s: %d, want 2", total)
	}
}
