package rommreport

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

func TestRommQueue(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := Marks{s}
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	sess := func(id string, at time.Time) haentities.Session {
		return haentities.Session{ID: id, Game: id, System: "nes", Rom: "/userdata/roms/nes/" + id + ".nes", Started: at, Ended: at.Add(time.Hour), Duration: time.Hour}
	}
	if err := s.Update(func(tx *store.Tx) error {
		for i, id := range []string{"s0-before-pairing", "s1", "s2", "s3"} {
			if err := tx.AppendSession(sess(id, t0.Add(time.Duration(i)*time.Hour))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	paired := t0.Add(30 * time.Minute)
	ids := func(list []Item) (out []string) {
		for _, it := range list {
			out = append(out, it.Session.ID)
		}
		return out
	}
	got, err := m.Pending(paired, t0, 0)
	if err != nil || len(got) != 3 || got[0].Session.ID != "s1" || got[2].Session.ID != "s3" {
		t.Fatalf("pending %v, %v; want s1 s2 s3 oldest first (not the session before pairing)", ids(got), err)
	}
	now := t0.Add(10 * time.Hour)
	if err := m.Mark(map[string]Mark{
		"s1": {State: Delivered, ROMID: 7},
		"s2": {State: Unmatched},
		"s3": {State: Retry, Attempts: 1, NextTry: now.Add(time.Minute), Detail: "RomM answered 502"},
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Pending(paired, now, 0); len(got) != 0 {
		t.Errorf("pending %v right after the marks, want none (s3 waits for its retry)", ids(got))
	}
	if got, _ := m.Pending(paired, now.Add(2*time.Minute), 0); len(got) != 1 || got[0].Session.ID != "s3" || got[0].Mark.Attempts != 1 {
		t.Errorf("pending %v after the retry time, want s3 with its one attempt", ids(got))
	}
	c, err := m.Stats(paired)
	if err != nil || c != (Counts{Delivered: 1, Unmatched: 1, Retrying: 1}) {
		t.Errorf("stats %+v, %v", c, err)
	}
	if got, _ := m.Pending(paired, now.Add(2*time.Minute), 0); len(got) != 1 {
		t.Errorf("limit ignored? %v", ids(got))
	}
	if err := m.Mark(map[string]Mark{"": {State: Delivered}}); err == nil {
		t.Error("an empty session id was marked")
	}
}

// TestRommSeeksPastEarlierSessions: with ids as the tracker makes them
// (the start, UTC, first), the queue skips a long history before pairing,
// and a session whose id says a start a few hours off its real one (a
// clock set late) is still found.
func TestRommSeeksPastEarlierSessions(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := Marks{s}
	paired := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	id := func(at time.Time, n int) string {
		return at.UTC().Format("20060102T150405.000Z") + fmt.Sprintf("-%04d", n)
	}
	if err := s.Update(func(tx *store.Tx) error {
		for i := range 500 { // a year of evenings before pairing
			at := paired.Add(-time.Duration(500-i) * 18 * time.Hour)
			if err := tx.AppendSession(haentities.Session{ID: id(at, i), Game: "old", Started: at, Ended: at.Add(time.Hour), Duration: time.Hour}); err != nil {
				return err
			}
		}
		at := paired.Add(time.Hour)
		if err := tx.AppendSession(haentities.Session{ID: id(at, 1000), Game: "after", Started: at, Ended: at.Add(time.Hour), Duration: time.Hour}); err != nil {
			return err
		}
		// Its id was made while the clock was 5 h behind.
		if err := tx.AppendSession(haentities.Session{ID: id(at.Add(-5*time.Hour), 1001), Game: "skewed", Started: at.Add(time.Minute),
			Ended: at.Add(time.Hour), Duration: time.Hour}); err != nil {
			return err
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := m.Pending(paired, paired.Add(3*time.Hour), 0)
	if err != nil || len(got) != 2 || got[0].Session.Game != "skewed" || got[1].Session.Game != "after" {
		t.Fatalf("pending %+v, %v; want the two sessions after pairing", got, err)
	}
	if c, err := m.Stats(paired); err != nil || c.Pending != 2 {
		t.Errorf("stats %+v, %v", c, err)
	}
}
