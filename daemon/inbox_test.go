package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// drop writes a record into the daemon's inbox as a wrapper does (one
// write, then close), stamped at uptime.
func (r *rig) drop(name string, uptime time.Duration, argv ...string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.cfg.Layout.Inbox(), name), journal.EncodeInbox(journal.InboxRecord{Uptime: uptime, Argv: argv}), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// taken waits until the daemon has taken the named files (it logs a line
// for each event it persists or ignores, so the wait wakes on the log).
func (r *rig) taken(names ...string) {
	r.t.Helper()
	r.waitLog("inbox files taken: "+strings.Join(names, ","), func() bool {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(r.cfg.Layout.Inbox(), n)); err == nil {
				return false
			}
		}
		return true
	})
}

// Once ready the daemon says so in the up file, with what a wrapper reads
// back from /proc: its pid and its start time.
func TestUpFileNamesTheDaemon(t *testing.T) {
	r := newRig(t, nil, nil)
	b, err := os.ReadFile(r.cfg.Layout.UpFile())
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	start, err := startTime("/proc/self/stat")
	if err != nil || len(f) != 2 || f[0] != strconv.Itoa(os.Getpid()) || f[1] != start {
		t.Fatalf("up file %q, want %d %s (%v)", b, os.Getpid(), start, err)
	}
}

// Records stamped in the same hundredth are applied in the order their
// files were closed: the same two events give opposite states.
func TestInboxKeepsTheOrderOfEqualStamps(t *testing.T) {
	for _, tt := range []struct {
		order []string
		want  string
	}{
		{[]string{"screensaver-start", "screensaver-stop"}, "OFF"},
		{[]string{"screensaver-stop", "screensaver-start"}, "ON"},
	} {
		r := newRig(t, nil, nil)
		up := time.Hour - time.Second // a second ago on the rig's boot clock
		var names []string
		for i, ev := range tt.order {
			names = append(names, fmt.Sprintf("3599.00-%d", 10+i))
			r.drop(names[i], up, ev, "random")
		}
		r.taken(names...)
		r.clock.Advance(4 * time.Second) // past the tracker's reorder window
		r.retained(r.settings.StateTopic(haentities.Screensaver), func(s string) bool { return s == tt.want })
	}
}

// A cursor move is kept in memory only; one while the screensaver shows
// games is persisted (screensaver launches need it); garbage is ignored
// and logged once.
func TestInboxSelections(t *testing.T) {
	r := newRig(t, nil, nil)
	up := time.Hour - 5*time.Second
	r.drop("1-1", up, "game-selected", "nes", "/userdata/roms/nes/a.nes", "A")
	r.taken("1-1")
	if sel := r.d.inbox.latestSelected(); sel.Kind != tracker.KindGameSelected || sel.Path != "/userdata/roms/nes/a.nes" {
		t.Errorf("latest selection = %+v", sel)
	}
	// Kept, not persisted: the intake log may be applied and emptied at
	// any moment, so the daemon's own account is what tells (its line
	// follows the file's removal, which taken waited for).
	r.waitLog("the selection's log line", func() bool { return len(r.logs.entries("inbox selection kept")) >= 1 })
	if n := len(r.logs.entries("inbox event taken")); n != 0 || len(r.logs.entries("inbox selection kept")) != 1 {
		t.Errorf("a cursor move went into the intake log (%d events taken)", n)
	}
	r.drop("2-1", up+time.Second, "system-selected", "snes")
	r.taken("2-1")
	if sel := r.d.inbox.latestSelected(); sel.Kind != tracker.KindSystemSelected || sel.System != "snes" {
		t.Errorf("latest selection = %+v", sel)
	}
	r.drop("3-1", up+2*time.Second, "screensaver-start", "random")
	r.taken("3-1")
	if _, err := os.Stat(r.cfg.Layout.ScreensaverFlag()); err != nil {
		t.Errorf("the screensaver flag is not set for the wrappers: %v", err)
	}
	applied := r.d.eng.appliedCh()
	r.drop("4-1", up+3*time.Second, "game-selected", "nes", "/userdata/roms/nes/b.nes", "B")
	r.waitApplied("the screensaver's game applied", func() bool {
		select {
		case <-applied:
			return true
		default:
			return false
		}
	})
	os.WriteFile(filepath.Join(r.cfg.Layout.Inbox(), "junk"), []byte("not a record"), 0o644)
	os.WriteFile(filepath.Join(r.cfg.Layout.Inbox(), "junk2"), []byte("cabinet-inbox-1\x00cut"), 0o644)
	r.waitLog("junk ignored", func() bool { return len(r.logs.entries("inbox files ignored")) >= 2 })
	warns := 0
	for _, e := range r.logs.entries("inbox files ignored") {
		if e["level"] == "warn" {
			warns++
		}
	}
	if warns != 1 {
		t.Errorf("%d warnings for unreadable inbox files, want one (then debug)", warns)
	}
	r.drop("5-1", up+4*time.Second, "screensaver-stop")
	r.taken("5-1")
	if _, err := os.Stat(r.cfg.Layout.ScreensaverFlag()); err != nil {
		t.Errorf("the screensaver flag went at once, not after its linger: %v", err)
	}
	r.clock.Advance(flagLinger)
	if _, err := os.Stat(r.cfg.Layout.ScreensaverFlag()); !os.IsNotExist(err) {
		t.Errorf("the screensaver flag outlived its linger: %v", err)
	}
}

// A daemon that stops while the flag lingers removes it at once: left
// behind, it would let every cursor move start the binary.
func TestStopEndsTheFlagsLinger(t *testing.T) {
	r := newRig(t, nil, nil)
	up := time.Hour - 5*time.Second
	r.drop("1-1", up, "screensaver-start", "random")
	r.taken("1-1")
	r.drop("2-1", up+time.Second, "screensaver-stop")
	r.taken("2-1")
	r.d.inbox.stop()
	if _, err := os.Stat(r.cfg.Layout.ScreensaverFlag()); !os.IsNotExist(err) {
		t.Errorf("the lingering flag outlived the daemon's stop: %v", err)
	}
}
