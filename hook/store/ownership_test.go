package store

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// TestHookKeepsDaemonConfigs plays the publishers taking turns on one
// store: the daemon announces diagnostics and controls, a hook running
// without it announces play tracking only and must clear nothing, and the
// daemon with controls turned off clears exactly the controls.
func TestHookKeepsDaemonConfigs(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	base := haentities.Settings{ID: "abc"}
	daemon := base
	daemon.Daemon, daemon.Controls = true, true
	announce := func(set haentities.Settings) []Item {
		t.Helper()
		err := s.Update(func(tx *Tx) error {
			return tx.RecordDiscovery(haentities.Discovery(set, t0), t0, haentities.KeptTopics(set)...)
		})
		if err != nil {
			t.Fatal(err)
		}
		items, err := s.Pending(t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.MarkDelivered(items); err != nil {
			t.Fatal(err)
		}
		return items
	}
	cleared := func(items []Item) []string {
		var out []string
		for _, it := range items {
			if len(it.Payload) == 0 {
				parts := strings.Split(it.Topic, "/")
				out = append(out, parts[len(parts)-2])
			}
		}
		return out
	}
	if got := announce(daemon); len(got) != len(haentities.Discovery(daemon, t0)) || len(cleared(got)) != 0 {
		t.Fatalf("daemon's first announce: %d items, cleared %v", len(got), cleared(got))
	}
	if got := announce(base); len(got) != 0 {
		t.Fatalf("a hook after the daemon sent %d items (cleared %v), want none", len(got), cleared(got))
	}
	noControls := daemon
	noControls.Controls = false
	var want []string
	for _, e := range slices.Concat(haentities.Controls(), haentities.PlayEntities()) {
		want = append(want, e.Key)
	}
	slices.Sort(want)
	got := cleared(announce(noControls))
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("controls off cleared %v, want %v", got, want)
	}
	if got := announce(base); len(got) != 0 {
		t.Errorf("a hook after controls went off sent %d items, want none", len(got))
	}
}

func TestRefreshResendsUnchangedValues(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	msg := state("batocera/x/cpu_temperature", "47.0")
	pending := func(f func(*Tx) error) int {
		t.Helper()
		if err := s.Update(f); err != nil {
			t.Fatal(err)
		}
		items, _ := s.Pending(t0)
		s.MarkDelivered(items)
		return len(items)
	}
	if n := pending(func(tx *Tx) error { return tx.Refresh(msg) }); n != 1 {
		t.Fatalf("first refresh: %d pending, want 1", n)
	}
	if n := pending(func(tx *Tx) error { return tx.Record(msg) }); n != 0 {
		t.Errorf("Record of an unchanged value: %d pending, want 0", n)
	}
	if n := pending(func(tx *Tx) error { return tx.Refresh(msg) }); n != 1 {
		t.Errorf("Refresh of an unchanged value: %d pending, want 1", n)
	}
	if err := s.Update(func(tx *Tx) error { return tx.Refresh(sessionEnd("s1", t0)) }); err == nil {
		t.Error("Refresh accepted an event")
	}
}
