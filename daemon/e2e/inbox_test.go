package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestWrappersUseTheInbox: with the daemon running, an evening through the
// installed wrappers — ES's start, a screensaver, a game launched and
// ended (ES's hooks and the launcher's configgen script) — reaches Home
// Assistant without the binary starting once: every event went through the
// inbox, and nothing is left in it.
func TestWrappersUseTheInbox(t *testing.T) {
	t.Parallel()
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	d := r.startOnline()
	from := r.obs.Mark()
	r.cab.ES.Start()
	r.waitScripts()
	if err := r.cab.ES.StartScreensaver(fakees.ScreensaverDim); err != nil {
		t.Fatal(err)
	}
	r.waitScripts()
	r.obs.AwaitMsg(from, r.topic("screensaver"), "ON")
	game := r.cab.Library.Games("nes")[0]
	if err := r.cab.ES.Launch("nes", game.ID); err != nil {
		t.Fatal(err)
	}
	r.obs.AwaitMsg(from, r.topic("playing"), "ON")
	// A game runs a while: long enough for the watcher's quick polls to see
	// it (a game of a few ms would end before the watcher's report of it).
	<-time.After(1500 * time.Millisecond)
	r.cab.ES.EndGame(0)
	r.waitScripts()
	r.obs.AwaitMsg(from, r.topic("playing"), "OFF")
	cabinettest.Await(t, "the session logged", r.obs.Changed, func() (bool, string) {
		n := len(r.sessionEvents(from, "session_end"))
		return n == 1, "session_end events: " + strings.Repeat("x", n)
	})

	if n := d.log.Count("inbox event taken"); n < 5 {
		t.Errorf("the daemon took %d events from its inbox, want every one of the evening (at least 5)", n)
	}
	if b, err := os.ReadFile(filepath.Join(r.state, "cabinet.log")); err == nil && strings.Contains(string(b), `"cmd":"hook"`) {
		t.Errorf("the binary ran for an event while the daemon was up:\n%s", b)
	}
	if ents, _ := os.ReadDir(r.cab.Path("/var/run/cabinet/inbox")); len(ents) != 0 {
		t.Errorf("%d files left in the inbox", len(ents))
	}
}

// TestDrainAfterStop: a wrapper that saw the daemon up just before it
// stopped left its record in the inbox (RAM). doctor counts it; the
// service's last `cabinet hook --drain` stores and publishes it.
func TestDrainAfterStop(t *testing.T) {
	t.Parallel()
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	d := r.startOnline()
	d.term()
	box := r.cab.Path("/var/run/cabinet/inbox")
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	u, _, _ := strings.Cut(string(up), " ")
	from := r.obs.Mark()
	rec := journal.EncodeInbox(journal.InboxRecord{Uptime: parseUptime(t, u), Argv: []string{"screensaver-start", "black"}})
	if err := os.WriteFile(filepath.Join(box, u+"-1"), rec, 0o644); err != nil {
		t.Fatal(err)
	}
	if doc := r.doctorCheck("state"); !strings.Contains(strings.Join(doc.Facts, " "), "1 record(s) waiting in the inbox") {
		t.Errorf("doctor's state check = %+v, want the inbox's record counted", doc)
	}
	if out, code, _ := runCabinet(t, r.env(), "hook", "--drain"); code != 0 || out != "" {
		t.Fatalf("cabinet hook --drain: exit %d, output %q", code, out)
	}
	r.obs.AwaitMsg(from, r.topic("screensaver"), "ON")
	if ents, _ := os.ReadDir(box); len(ents) != 0 {
		t.Errorf("%d files left in the inbox after the drain", len(ents))
	}
}

func parseUptime(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(strings.TrimSpace(s) + "s")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
