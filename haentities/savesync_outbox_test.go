package haentities_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// TestSaveSyncClearedWhenOff plays cabinet.romm.sync_saves going on and off through the outbox as
// the daemon and the hook use it: on, the daemon announces both entities; a hook clears nothing;
// off, the daemon clears exactly their two configs with empty retained payloads.
func TestSaveSyncClearedWhenOff(t *testing.T) {
	at := time.Date(2026, 1, 2, 20, 15, 0, 0, time.UTC)
	s, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	announce := func(set haentities.Settings) []store.Item {
		t.Helper()
		err := s.Update(func(tx *store.Tx) error {
			return tx.RecordDiscovery(haentities.Discovery(set, at), at, haentities.KeptTopics(set)...)
		})
		if err != nil {
			t.Fatal(err)
		}
		items, err := s.Pending(at)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.MarkDelivered(items); err != nil {
			t.Fatal(err)
		}
		return items
	}
	keys := func(items []store.Item, empty bool) []string {
		var out []string
		for _, it := range items {
			if (len(it.Payload) == 0) == empty {
				parts := strings.Split(it.Topic, "/")
				out = append(out, parts[len(parts)-2])
			}
		}
		slices.Sort(out)
		return out
	}
	on := haentities.Settings{ID: "abc", Daemon: true, SaveSync: true}
	off := on
	off.SaveSync = false
	hook := haentities.Settings{ID: "abc", SaveSync: true}
	want := []string{haentities.SaveProblemKey, haentities.SaveSyncKey}

	if got := keys(announce(on), false); !slices.Contains(got, haentities.SaveSyncKey) || !slices.Contains(got, haentities.SaveProblemKey) {
		t.Fatalf("sync_saves on announced %v, want %v among them", got, want)
	}
	if got := announce(hook); len(got) != 0 {
		t.Fatalf("a hook after the daemon sent %d items (cleared %v), want none", len(got), keys(got, true))
	}
	items := announce(off)
	if got := keys(items, true); !slices.Equal(got, want) {
		t.Errorf("sync_saves off cleared %v, want %v", got, want)
	}
	for _, it := range items {
		if len(it.Payload) == 0 && (!it.Retain || it.QoS != 1 || it.Kind != haentities.KindDiscovery) {
			t.Errorf("%s: clear with retain=%v qos=%d kind=%v, want a retained QoS 1 discovery", it.Topic, it.Retain, it.QoS, it.Kind)
		}
	}
	if got := announce(off); len(got) != 0 {
		t.Errorf("announcing again with sync_saves off sent %d items, want none", len(got))
	}
	if got := keys(announce(on), false); !slices.Equal(got, want) {
		t.Errorf("sync_saves back on announced %v, want %v", got, want)
	}
}
