package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestHooksWhileDaemonDown: sessions played while no daemon runs and the
// broker is unreachable (a cabinet booting before the network) are recorded
// by the hooks themselves — in the store, or in the spool while another
// process owns the store. When the broker and then the daemon come up,
// everything is ingested and published: in the order it was played, each
// session_start and session_end exactly once.
func TestHooksWhileDaemonDown(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind)
		r := newRig(t, b)
		b.Stop(t)

		var played []string
		play := func(label string, n int) { played = append(played, r.playSessions(label, n)...) }
		play("stored", 3) // standalone: the store takes them, the broker refuses

		// Another process owns the store: the hooks spool.
		s, err := store.Open(filepath.Join(r.state, "cabinet.db"), store.Options{LockTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		play("spooled", 3)
		s.Close()
		if got := spoolFiles(t, r); len(got) != 6 {
			t.Errorf("spool while the store was owned:\n%swant 6 events (3 sessions of 2 hooks)", lines(got))
		}

		b.Start(t)
		r.obs.Reconnect()
		from := r.obs.Mark()
		r.startOnline()
		r.waitStatus("6 sessions logged, outbox drained", func(s daemon.Status) bool {
			return s.Sessions == len(played) && s.OutboxDepth == 0
		})
		if left := spoolFiles(t, r); len(left) != 0 {
			t.Errorf("spool not drained: %q", left)
		}
		cabinettest.Await(t, "every session_end on the broker", r.obs.Changed, func() (bool, string) {
			got := r.sessionEvents(from, "session_end")
			return len(got) >= len(played), fmt.Sprintf("%d of %d", len(got), len(played))
		})

		roms := func(typ string) []string {
			var out []string
			for _, e := range r.sessionEvents(from, typ) {
				out = append(out, e.Rom)
			}
			return out
		}
		for _, typ := range []string{"session_start", "session_end"} {
			if got := roms(typ); !slices.Equal(got, played) {
				t.Errorf("%s events on the broker, in arrival order:\n%swant each session once, in the order played:\n%s", typ, lines(got), lines(played))
			}
		}
		// A session's start comes before its end.
		ended := map[string]bool{}
		for _, e := range r.sessionEvents(from, "") {
			switch e.EventType {
			case "session_start":
				if ended[e.SessionID] {
					t.Errorf("session_start of %s (%s) arrived after its session_end", e.SessionID, e.Rom)
				}
			case "session_end":
				ended[e.SessionID] = true
			}
		}
	})
}

// spoolFiles lists the events waiting in the spool.
func spoolFiles(t *testing.T, r *rig) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(r.state, "spool", "*.event"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}
