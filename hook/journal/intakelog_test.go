package journal

import (
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

func TestFromIntake(t *testing.T) {
	good, err := IntakeRecord(Keyed{"k1", ev(tracker.KindScreensaverStart, 0)})
	if err != nil {
		t.Fatal(err)
	}
	second, _ := IntakeRecord(Keyed{"k2", ev(tracker.KindScreensaverStop, time.Second)})
	recs := [][]byte{
		good,
		[]byte("{not json"),
		[]byte(`{"op":"status"}`),
		[]byte(`{"op":"event","key":"a/b","event":{"k":"sleep","at":"2026-11-30T20:00:00Z","src":"es"}}`),
		[]byte(`{"op":"event","key":"k9","event":{"k":"explode","at":"2026-11-30T20:00:00Z","src":"es"}}`),
		second,
	}
	items, bad := FromIntake(recs)
	var keys []string
	for _, it := range items {
		keys = append(keys, it.storeKey()+"="+string(it.Event.Kind))
	}
	if got, want := strings.Join(keys, ","), "ev:k1=screensaver-start,ev:k2=screensaver-stop"; got != want {
		t.Errorf("items = %s, want %s", got, want)
	}
	if len(bad) != 4 {
		t.Errorf("bad = %d (%v), want 4", len(bad), bad)
	}
}

func FuzzFromIntake(f *testing.F) {
	good, _ := IntakeRecord(Keyed{"k1", ev(tracker.KindGameStart, 0)})
	f.Add(good)
	f.Add([]byte(`{"op":"event","key":"","event":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, bad := FromIntake([][]byte{b})
		if len(items)+len(bad) != 1 {
			t.Fatalf("one record gave %d items and %d errors", len(items), len(bad))
		}
		for _, it := range items {
			if err := CheckKey(it.Key); err != nil {
				t.Fatalf("accepted a bad key: %v", err)
			}
			if err := it.Event.Validate(); err != nil {
				t.Fatalf("accepted an invalid event: %v", err)
			}
		}
	})
}
