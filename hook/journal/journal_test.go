package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

var t0 = time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)

func ev(kind tracker.Kind, at time.Duration) tracker.Event {
	return tracker.Event{Kind: kind, At: t0.Add(at), Boot: time.Hour + at, BootID: "boot1", Source: tracker.SourceES}
}

func TestSpoolOrderAndQuarantine(t *testing.T) {
	s := Spool{Dir: t.TempDir()}
	// Written out of order, read back in event order.
	for _, e := range []tracker.Event{ev(tracker.KindWake, 3*time.Second), ev(tracker.KindStart, 0), ev(tracker.KindSleep, time.Second)} {
		if err := s.Write(NewKeyed(e)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(s.Dir, "garbage.event"), []byte("{not json"), 0o644)
	os.WriteFile(filepath.Join(s.Dir, "unknown.event"), []byte(`{"k":"explode","at":"2026-11-30T20:00:00Z","src":"es"}`), 0o644)
	os.WriteFile(filepath.Join(s.Dir, ".tmp-young"), []byte("half"), 0o644)
	got, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, g := range got {
		kinds = append(kinds, string(g.Event.Kind))
	}
	if strings.Join(kinds, ",") != "start,sleep,wake" {
		t.Errorf("order = %v", kinds)
	}
	for _, bad := range []string{"garbage.event", "unknown.event"} {
		if _, err := os.Stat(filepath.Join(s.Dir, "bad", bad)); err != nil {
			t.Errorf("%s not kept in bad/: %v", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, ".tmp-young")); err != nil {
		t.Error("a young temp file (a writer still at work) was removed")
	}
	s.Remove(got)
	if again, _ := s.Read(); len(again) != 0 {
		t.Errorf("spool not empty after Remove: %v", again)
	}
}

func TestApplyKeyedOnce(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j := Rules{Settings: haentities.Settings{ID: "abc"}, Tracker: tracker.DefaultConfig(), Publishing: true}
	start := NewKeyed(ev(tracker.KindStart, 0))
	now := tracker.Stamp{At: t0.Add(time.Second), Boot: time.Hour + time.Second, BootID: "boot1"}
	res, err := Apply(st, j, now, true, []Keyed{start})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Events) != 1 || res.Events[0].Type != haentities.CabinetStart {
		t.Fatalf("first apply events = %+v", res.Events)
	}
	// The same event again (the daemon got it and it was also spooled):
	// nothing new happens.
	res, err = Apply(st, j, now, true, []Keyed{start})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Events) != 0 {
		t.Errorf("a duplicate keyed event was applied again: %+v", res.Events)
	}
	items, _ := st.Pending(now.At)
	starts := 0
	for _, it := range items {
		if it.Kind == haentities.KindTimeSensitive {
			starts++
		}
	}
	if starts != 1 {
		t.Errorf("%d cabinet start events queued, want 1", starts)
	}
}

func TestApplyWithoutMQTTKeepsHistoryOnly(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := tracker.DefaultConfig()
	cfg.MinSession = 0
	j := Rules{Settings: haentities.Settings{ID: "abc"}, Tracker: cfg}
	start := ev(tracker.KindGameStart, 0)
	start.Path, start.Name = "/userdata/roms/nes/a.nes", "A"
	end := ev(tracker.KindGameEnd, 90*time.Second)
	later := tracker.Stamp{At: t0.Add(time.Hour), Boot: 2 * time.Hour, BootID: "boot1"}
	if _, err := Apply(st, j, later, true, []Keyed{{"1", start}, {"2", end}}); err != nil {
		t.Fatal(err)
	}
	sessions, _ := st.Sessions(store.Query{})
	if len(sessions) != 1 || sessions[0].Game != "A" {
		t.Errorf("history = %+v", sessions)
	}
	if items, _ := st.Pending(later.At); len(items) != 0 {
		t.Errorf("messages queued with MQTT off: %d", len(items))
	}
}

func FuzzSpoolDecode(f *testing.F) {
	f.Add([]byte(`{"k":"game-start","at":"2026-11-30T20:00:00Z","b":5,"bid":"x","path":"/a","src":"es"}`))
	f.Add([]byte(`{"k":"quit","arg":"reboot","at":"2026-11-30T20:00:00+01:00","src":"configgen"}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Spool{Dir: t.TempDir()}
		if err := os.WriteFile(filepath.Join(s.Dir, "x.event"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := s.Read()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			if err := g.Event.Validate(); err != nil {
				t.Fatalf("Read returned an invalid event: %v", err)
			}
		}
		if len(got) == 0 {
			if _, err := os.Stat(filepath.Join(s.Dir, "bad", "x.event")); err != nil {
				t.Fatal("an unreadable spool file was neither read nor kept in bad/")
			}
		}
	})
}

// TestApplyPublishesCachedDetails: a hook (which may not ask ES) publishes
// the game's details from the store's cache, in now_playing's attributes,
// the session events and the history; the session counts toward play time
// today in the same transaction.
func TestApplyPublishesCachedDetails(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rom := "/userdata/roms/nes/zelda.nes"
	det := haentities.GameDetails{Genre: "Action-Adventure", Players: "1", Developer: "Nintendo R&D4", Year: 1986}
	if err := st.Update(func(tx *store.Tx) error {
		return tx.PutName(rom, store.Name{Name: "The Legend of Zelda", System: "nes", Details: det})
	}); err != nil {
		t.Fatal(err)
	}
	cfg := tracker.DefaultConfig()
	cfg.MinSession = 0
	j := Rules{Settings: haentities.Settings{ID: "abc"}, Tracker: cfg, Publishing: true}
	start := ev(tracker.KindGameStart, 0)
	start.Path, start.Name = rom, "zelda"
	mid := tracker.Stamp{At: t0.Add(10 * time.Second), Boot: time.Hour + 10*time.Second, BootID: "boot1"}
	res, err := Apply(st, j, mid, true, []Keyed{{"1", start}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot.Current.Details != det {
		t.Errorf("now playing details %+v, want %+v", res.Snapshot.Current.Details, det)
	}
	found := false
	for _, m := range res.Messages(j.Settings, mid.At) {
		if m.Topic == j.Settings.AttributesTopic(haentities.NowPlaying) {
			found = strings.Contains(string(m.Payload), `"genre":"Action-Adventure"`) && strings.Contains(string(m.Payload), `"year":1986`)
		}
	}
	if !found {
		t.Error("now_playing's attributes lack the cached details")
	}
	end := ev(tracker.KindGameEnd, 90*time.Second)
	later := tracker.Stamp{At: t0.Add(time.Hour), Boot: 2 * time.Hour, BootID: "boot1"}
	if _, err := Apply(st, j, later, true, []Keyed{{"2", end}}); err != nil {
		t.Fatal(err)
	}
	sessions, _ := st.Sessions(store.Query{})
	if len(sessions) != 1 || sessions[0].Details != det || sessions[0].BootID != "boot1" {
		t.Errorf("history = %+v", sessions)
	}
	var kept []byte
	st.Update(func(tx *store.Tx) error { kept = tx.PlayDay(); return nil })
	if !strings.Contains(string(kept), `"spans"`) {
		t.Errorf("play time today not counted: %s", kept)
	}
}
