package daemon

import (
	"context"
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal/intake"
)

// pendingOnDisk reads the intake log's pending records from the file the
// daemon holds open.
func pendingOnDisk(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, _ := intake.Parse(b)
	return len(recs)
}

func stamped(kind tracker.Kind) tracker.Event {
	return journal.Now().Event(kind, tracker.SourceES)
}

// An event the daemon acked and then died before storing is applied by the
// next daemon, before it listens.
func TestIntakeLeftByACrashIsApplied(t *testing.T) {
	var path string
	r := newRig(t, nil, func(r *rig) {
		cfg := r.load().Config
		path = journal.IntakePath(&cfg)
		os.MkdirAll(cfg.StatePath(), 0o755)
		lg, err := intake.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := journal.IntakeRecord("crashed-1", stamped(tracker.KindScreensaverStart))
		if err := lg.Append(rec); err != nil {
			t.Fatal(err)
		}
		lg.Close()
	})
	r.retained(r.settings.StateTopic(haentities.Screensaver), func(s string) bool { return s == "ON" })
	eventually(t, "intake emptied", func() bool { return pendingOnDisk(t, path) == 0 })
}

// A hook's event is acked once it is in the intake log, then reaches the
// store and the broker; the log is emptied behind it.
func TestHookEventThroughIntake(t *testing.T) {
	r := newRig(t, nil, nil)
	cfg := r.load().Config
	sock := journal.SocketPath(&cfg)
	eventually(t, "daemon socket", func() bool { _, err := os.Stat(sock); return err == nil })
	topic := r.settings.StateTopic(haentities.Screensaver)
	for _, kind := range []tracker.Kind{tracker.KindScreensaverStart, tracker.KindScreensaverStop, tracker.KindScreensaverStart} {
		ev := stamped(kind)
		if err := hook.Deliver(context.Background(), sock, journal.NewKey(ev), ev); err != nil {
			t.Fatalf("Deliver(%s): %v", kind, err)
		}
	}
	r.retained(topic, func(s string) bool { return s == "ON" })
	eventually(t, "intake emptied", func() bool { return pendingOnDisk(t, journal.IntakePath(&cfg)) == 0 })
	// A key that could not name a store entry is refused, not logged.
	ev := stamped(tracker.KindScreensaverStop)
	if err := hook.Deliver(context.Background(), sock, "../../etc/passwd", ev); err == nil {
		t.Fatal("an event with a bad key was acked")
	}
	if pendingOnDisk(t, journal.IntakePath(&cfg)) != 0 {
		t.Fatal("an event with a bad key went into the intake log")
	}
}
