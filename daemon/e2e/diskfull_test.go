package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// TestDiskFull: /userdata fills up (ROMs, screenshots and saves share it
// with the state dir) while the daemon runs and games are played. Hooks are
// still acked at once — the intake log's blocks were allocated when it was
// created — the store refuses writes without being taken for damaged, and
// once space comes back every session goes out, in the order played, once.
func TestDiskFull(t *testing.T) {
	cabinettest.Long(t, "a disk filled three times under the daemon, about 18 s")
	b := startBroker(t, cabinettest.Embedded)
	r := newRig(t, b)
	peertest.SmallFS(t, r.state, 4<<20)
	r.startOnline()

	var played []string
	from := r.obs.Mark()
	play := func(label string, n int) { played = append(played, r.playSessions(label, n)...) }
	play("before", 1)
	r.waitStatus("the first session logged", func(s daemon.Status) bool { return s.Sessions == 1 })

	filler := peertest.FillDisk(t, r.state)
	// bbolt reuses the pages each commit frees, so the store goes on taking
	// events on a full disk until its history needs a new page: play until
	// the daemon reports the refusal.
	full := func() bool { return strings.Contains(r.logs.String(), "no space left on device") }
	for round := 0; !full(); round++ {
		if round == 20 {
			t.Fatal("40 sessions on a full disk, and the store never refused a write")
		}
		play(fmt.Sprintf("full%d_", round), 2)
		cabinettest.Await(t, "the sessions logged or the store refusing", r.logs.Changed, func() (bool, string) {
			if full() {
				return true, ""
			}
			st, err := r.daemonStatus()
			return err == nil && st.Sessions == len(played), fmt.Sprintf("%+v %v", st, err)
		})

	}
	// (bbolt reuses freed pages, so a commit or two may still go through
	// on a full disk: how many sessions are stored by now varies.)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r.waitStatus("every session logged once space is back", func(s daemon.Status) bool {
		return s.Sessions == len(played) && s.OutboxDepth == 0
	})
	cabinettest.Await(t, "every session_end on the broker", r.obs.Changed, func() (bool, string) {
		got := r.sessionEvents(from, "session_end")
		return len(got) >= len(played), fmt.Sprintf("%d of %d", len(got), len(played))
	})

	var ended []string
	for _, e := range r.sessionEvents(from, "session_end") {
		ended = append(ended, e.Rom)
	}
	if !slices.Equal(ended, played) {
		t.Errorf("session_end events:\n%swant each once, in the order played:\n%s", lines(ended), lines(played))
	}

	// Without the daemon the hooks record events themselves. bbolt reuses
	// the pages each commit frees, so on a full disk the store usually
	// still takes them; when it does not, the spool or the intake log's
	// allocated blocks do (hook.TestStandaloneHookKeepsEventOnFullDisk).
	// Either way the next owner of the store has them all.
	if code := r.d.term(); code != 0 {
		t.Fatalf("daemon exit code %d after SIGTERM", code)
	}
	filler = peertest.FillDisk(t, r.state)
	from = r.obs.Mark()
	before := len(played)
	play("alone", 2)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r.startOnline()
	r.waitStatus("the sessions played alone logged", func(s daemon.Status) bool {
		return s.Sessions == len(played) && s.OutboxDepth == 0
	})
	ended = nil
	cabinettest.Await(t, "their session_end on the broker", r.obs.Changed, func() (bool, string) {
		ended = ended[:0]
		for _, e := range r.sessionEvents(from, "session_end") {
			ended = append(ended, e.Rom)
		}
		return len(ended) >= len(played)-before, fmt.Sprintf("%d of %d", len(ended), len(played)-before)
	})

	if !slices.Equal(ended, played[before:]) {
		t.Errorf("session_end events after the hooks ran alone:\n%swant:\n%s", lines(ended), lines(played[before:]))
	}

	// A daemon (re)started on a full disk starts, and serves.
	r.d.term()
	filler = peertest.FillDisk(t, r.state)
	r.startOnline()
	play("restarted", 1)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r.waitStatus("the session played on a full disk logged", func(s daemon.Status) bool {
		return s.Sessions == len(played) && s.OutboxDepth == 0
	})
	if strings.Contains(r.logs.String(), "damaged") {
		t.Errorf("a full disk was taken for a damaged store:\n%s", r.logs.String())
	}
}
