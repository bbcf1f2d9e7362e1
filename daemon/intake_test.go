package daemon

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// pendingOnDisk reads the intake log's pending records from the file the
// daemon holds open.
func pendingOnDisk(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, _ := journal.ParseIntake(b)
	return len(recs)
}

func (r *rig) stamped(kind tracker.Kind) tracker.Event {
	return r.stamp().Event(kind, tracker.SourceES)
}

// An event the daemon acked and then died before storing is applied by the
// next daemon, before it listens.
func TestIntakeLeftByACrashIsApplied(t *testing.T) {
	var path string
	r := newRig(t, nil, func(r *rig) {
		path = r.cfg.Layout.Intake()
		os.MkdirAll(r.cfg.Layout.State, 0o755)
		lg, err := journal.OpenIntake(path)
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := journal.IntakeRecord(journal.Keyed{Key: "crashed-1", Event: r.stamped(tracker.KindScreensaverStart)})
		if err := lg.Append(rec); err != nil {
			t.Fatal(err)
		}
		lg.Close()
	})
	r.retained(r.settings.StateTopic(haentities.Screensaver), func(s string) bool { return s == "ON" })
	if n := pendingOnDisk(t, path); n != 0 {
		t.Fatalf("the intake log still holds %d events once the daemon is ready", n)
	}
	r.logged("applied the events left in the intake log", nil)
}

// A hook's event is acked once it is in the intake log, then reaches the
// store and the broker; the log is emptied behind it.
func TestHookEventThroughIntake(t *testing.T) {
	r := newRig(t, nil, nil)
	layout := r.cfg.Layout
	sock := layout.Socket() // listening: the daemon is ready
	topic := r.settings.StateTopic(haentities.Screensaver)
	for _, kind := range []tracker.Kind{tracker.KindScreensaverStart, tracker.KindScreensaverStop, tracker.KindScreensaverStart} {
		ev := r.stamped(kind)
		r.deliver(ev)
		r.clock.Advance(time.Second) // events a second apart, as a person makes them
	}
	r.retained(topic, func(s string) bool { return s == "ON" })
	r.waitApplied("intake emptied", func() bool { return pendingOnDisk(t, layout.Intake()) == 0 })
	// A key that could not name a store entry is refused, not logged.
	ev := r.stamped(tracker.KindScreensaverStop)
	if err := socket.Deliver(context.Background(), sock, "../../etc/passwd", ev); err == nil {
		t.Fatal("an event with a bad key was acked")
	}
	if pendingOnDisk(t, layout.Intake()) != 0 {
		t.Fatal("an event with a bad key went into the intake log")
	}
}
