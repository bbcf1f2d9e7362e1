package packaging

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// shells are the shells the wrappers must work under: Batocera's /bin/sh
// is dash; busybox ash and bash --posix are what other boxes and users
// have. A missing one skips (or fails with CABINET_REQUIRE_PEERS=1).
var shells = []struct {
	name string
	argv []string
}{
	{"dash", []string{"dash"}},
	{"bash --posix", []string{"bash", "--posix"}},
	{"busybox ash", []string{"busybox", "ash"}},
}

// hardArgv are arguments ES and configgen can pass: spaces, quotes, $,
// backslashes, a newline, bytes that are not UTF-8, an empty one, and the
// record's own words.
var hardArgv = []string{"/userdata/roms/nes/Super\\ Mario\\ \\(W\\).nes", `it's "quoted" $HOME \$x \\`, "two\nlines", "\xff\xfe latin\xe9", "", "end", journal.InboxMagic}

// handover is a wrapper install whose binary records its argv (NUL
// separated) and whose daemon is this test process, as its up file says.
type handover struct {
	l   Layout
	rec string
	box string
}

func newHandover(t *testing.T, sh []string) handover {
	t.Helper()
	if _, err := exec.LookPath(sh[0]); err != nil {
		peertest.RequirePeer(t, fmt.Errorf("%s is not installed: %w", sh[0], err))
	}
	l, _ := install(t)
	h := handover{l: l, rec: filepath.Join(filepath.Dir(l.RunDir), "argv.bin"), box: filepath.Join(l.RunDir, "inbox")}
	fake := "#!/bin/sh\nshift\nprintf '%s\\0' \"$@\" > '" + h.rec + "'\n" // drop "hook"
	writeExecutable(t, l.Binary, fake)
	if err := os.MkdirAll(h.box, 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// up writes the up file for pid, with its real start time, or a wrong one.
func (h handover) up(t *testing.T, pid int, right bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	start := f[19]
	if !right {
		start += "1"
	}
	if err := os.WriteFile(filepath.Join(h.l.RunDir, "serve.up"), []byte(fmt.Sprintf("%d %s\n", pid, start)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs a script under sh and returns what went into the inbox and what
// the binary received (nil when it did not run). A record a failed printf
// left cut short is not counted: the daemon ignores it too.
func (h handover) run(t *testing.T, sh []string, script string, args ...string) (records []journal.InboxRecord, binary []string) {
	t.Helper()
	return h.runArgs(t, append(append(append([]string(nil), sh...), script), args...))
}

// runArgs is run for a whole command line (a shell with -c, say).
func (h handover) runArgs(t *testing.T, argv []string) (records []journal.InboxRecord, binary []string) {
	t.Helper()
	os.Remove(h.rec)
	script := argv[len(argv)-1]
	cmd := exec.Command(argv[0], argv[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("%s: %v, output %q (want success and silence)", strings.Join(argv, " "), err, out)
	}
	ents, _ := os.ReadDir(h.box)
	for _, e := range ents {
		if e.Name() == "filler" { // what fills a full inbox
			continue
		}
		b, _ := os.ReadFile(filepath.Join(h.box, e.Name()))
		os.Remove(filepath.Join(h.box, e.Name()))
		r, err := journal.ParseInbox(b)
		if errors.Is(err, journal.ErrInboxTorn) || len(b) == 0 {
			continue
		}
		if err != nil {
			t.Fatalf("%s: inbox file %s: %v (%.80q)", script, e.Name(), err, b)
		}
		records = append(records, r)
	}
	if b, err := os.ReadFile(h.rec); err == nil {
		binary = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	}
	return records, binary
}

// With the daemon up every wrapper writes one record holding exactly the
// argv the binary gets when the daemon is down, and starts nothing; with
// the up file of a dead daemon (or a reused pid) it runs the binary.
func TestWrappersHandOverUnderEveryShell(t *testing.T) {
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			h := newHandover(t, sh.argv)
			for _, s := range h.l.ESScriptFiles() {
				if s.Path == filepath.Join(h.l.ESScripts, "cabinet.sh") {
					continue // the quit root script keeps the acked path
				}
				args := hardArgv
				if strings.Contains(s.Path, "screensaver-start") {
					args = []string{"suspend"} // no flag: the daemon-down run must not wait for it
				}
				if s.Path == h.l.AchievementsScript() {
					args = append([]string{"12345"}, hardArgv[1:]...) // a decimal id (cut to 32 bytes otherwise)
				}
				name := strings.TrimPrefix(s.Path, h.l.ESScripts+"/")
				h.up(t, os.Getpid(), true)
				recs, bin := h.run(t, sh.argv, s.Path, args...)
				if len(recs) != 1 || bin != nil {
					t.Fatalf("%s with the daemon up: %d records, binary %q; want one record and no binary", name, len(recs), bin)
				}
				os.Remove(filepath.Join(h.l.RunDir, "serve.up"))
				_, down := h.run(t, sh.argv, s.Path, args...)
				if strings.Contains(name, "selected") {
					continue // with no daemon a selection never starts the binary
				}
				if !reflect.DeepEqual(recs[0].Argv, down) {
					t.Errorf("%s: the record's argv\n %q\ndiffers from the binary's\n %q", name, recs[0].Argv, down)
				}
				if recs[0].Uptime <= 0 {
					t.Errorf("%s: uptime %v", name, recs[0].Uptime)
				}
				// A dead daemon's pid reused by another process: the start
				// time does not match.
				h.up(t, os.Getpid(), false)
				if recs, bin := h.run(t, sh.argv, s.Path, args...); len(recs) != 0 || bin == nil {
					t.Errorf("%s with a stale up file: %d records, binary ran %v; want the binary", name, len(recs), bin != nil)
				}
			}
		})
	}
}

// Whatever stops the record — a read-only inbox, a full one, a name already
// taken — the wrapper falls back to the binary, under every shell.
func TestHandOverFallsBack(t *testing.T) {
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			h := newHandover(t, sh.argv)
			script := filepath.Join(h.l.ESScripts, "game-start", "cabinet")
			fallsBack := func(what string) {
				t.Helper()
				h.up(t, os.Getpid(), true)
				recs, bin := h.run(t, sh.argv, script, hardArgv...)
				if len(recs) != 0 || !reflect.DeepEqual(bin, append([]string{"game-start"}, hardArgv...)) {
					t.Errorf("%s: %d records, the binary got %q; want none and the binary", what, len(recs), bin)
				}
			}
			// No inbox folder at all.
			os.RemoveAll(h.box)
			fallsBack("no inbox")
			os.MkdirAll(h.box, 0o755)
			if os.Geteuid() != 0 {
				os.Chmod(h.box, 0o555)
				fallsBack("a read-only inbox")
				os.Chmod(h.box, 0o755)
				return // the rest mounts filesystems
			}
			if err := syscall.Mount("tmpfs", h.box, "tmpfs", syscall.MS_RDONLY, "size=64k"); err != nil {
				t.Skipf("cannot mount here (%v)", err)
			}
			fallsBack("a read-only inbox")
			syscall.Unmount(h.box, syscall.MNT_DETACH)
			peertest.SmallFS(t, h.box, 4096)
			filler := peertest.FillDisk(t, h.box)
			fallsBack("a full inbox")
			os.Remove(filler)
			// The name taken: the shell that runs the wrapper creates its
			// file first, with the uptime the wrapper reads (bind-mounted).
			up := filepath.Join(t.TempDir(), "uptime")
			os.WriteFile(up, []byte("4242.42 1.00\n"), 0o644)
			h.up(t, os.Getpid(), true)
			take := fmt.Sprintf("mount --bind %s /proc/uptime && : > %s/4242.42-$$ && exec %s %s %s",
				up, h.box, strings.Join(sh.argv, " "), script, "wake")
			cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", take)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("no private mount namespace here: %v %s", err, out)
			}
			b, _ := os.ReadFile(h.rec)
			if string(b) != "game-start\x00wake\x00" {
				t.Errorf("the name taken: the binary got %q, want game-start wake", b)
			}
		})
	}
}
