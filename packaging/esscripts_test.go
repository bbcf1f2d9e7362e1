package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// install renders the scripts under a temp root with a fake binary that
// records its argv, and returns the layout and the record file.
func install(t *testing.T) (Layout, string) {
	t.Helper()
	root := t.TempDir()
	rec := filepath.Join(root, "argv.log")
	l := Layout{
		Binary:      filepath.Join(root, "bin dir", "cabinet"), // a space, to prove the quoting
		ESScripts:   filepath.Join(root, "es", "scripts"),
		UserScripts: filepath.Join(root, "userscripts"),
		RunDir:      filepath.Join(root, "run", "cabinet"),
		FlagLingerS: 1,
	}
	fake := "#!/bin/sh\nprintf '%s|' \"$@\" >> '" + rec + "'\necho >> '" + rec + "'\n"
	if err := os.MkdirAll(filepath.Dir(l.Binary), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, l.Binary, fake)
	for _, s := range l.ESScriptFiles() {
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Path, []byte(s.Content), os.FileMode(s.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	return l, rec
}

func runScript(t *testing.T, path string, args ...string) {
	t.Helper()
	if out, err := exec.Command("/bin/sh", append([]string{path}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", path, args, err, out)
	}
}

func records(t *testing.T, rec string) []string {
	t.Helper()
	b, err := os.ReadFile(rec)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestWrappersHandArgvToTheBinary(t *testing.T) {
	l, rec := install(t)
	runScript(t, filepath.Join(l.ESScripts, "game-start", "cabinet"), `/userdata/roms/nes/Super\ Mario.nes`, "Super Mario", "Super Mario")
	runScript(t, filepath.Join(l.ESScripts, "game-end", "cabinet"))
	runScript(t, filepath.Join(l.UserScripts, "cabinet.sh"), "gameStart", "nes", "libretro", "nestopia", "/userdata/roms/nes/a b.nes")
	got := records(t, rec)
	want := []string{
		`hook|game-start|/userdata/roms/nes/Super\ Mario.nes|Super Mario|Super Mario|`,
		`hook|game-end|`,
		`hook|--source|configgen|gameStart|nes|libretro|nestopia|/userdata/roms/nes/a b.nes|`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("argv:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRootScriptActsOnlyOnQuit(t *testing.T) {
	l, rec := install(t)
	root := filepath.Join(l.ESScripts, "cabinet.sh")
	for _, ev := range []string{"game-start", "game-selected", "reboot", "start"} {
		runScript(t, root, ev, "x")
	}
	if got := records(t, rec); len(got) != 0 {
		t.Fatalf("binary ran for non-quit events: %q", got)
	}
	runScript(t, root, "quit", "reboot")
	runScript(t, root, "quit")
	if got := records(t, rec); strings.Join(got, ";") != "hook|quit|reboot|;hook|quit|" {
		t.Errorf("quit argv = %q", got)
	}
}

func TestScreensaverFlagGatesGameSelected(t *testing.T) {
	cabinettest.Long(t, "the screensaver flag's linger, in real time")
	t.Parallel() // waits for the flag's linger, as the service test waits for its daemon
	l, rec := install(t)
	ev := func(name string, args ...string) { runScript(t, filepath.Join(l.ESScripts, name, "cabinet"), args...) }
	flagExists := func() bool { _, err := os.Stat(l.ScreensaverFlag()); return err == nil }

	ev("game-selected", "nes", "/userdata/roms/nes/a.nes", "A") // scrolling: stays in sh
	if got := records(t, rec); len(got) != 0 {
		t.Fatalf("game-selected without a screensaver started the binary: %q", got)
	}
	ev("screensaver-start", "random video")
	if !flagExists() {
		t.Fatal("screensaver-start did not set the flag")
	}
	// The screensaver's own game-selected may run after screensaver-stop.
	ev("screensaver-stop")
	ev("game-selected", "nes", "/userdata/roms/nes/b.nes", "B")
	if !flagExists() {
		t.Fatal("the flag must linger after screensaver-stop")
	}
	cabinettest.Await(t, "the flag to go after the linger", nil, func() bool { return !flagExists() })
	ev("game-selected", "nes", "/userdata/roms/nes/c.nes", "C")
	got := records(t, rec)
	if n := strings.Count(strings.Join(got, "\n"), "game-selected"); n != 1 {
		t.Errorf("game-selected reached the binary %d times, want 1 (only the racing one): %q", n, got)
	}

	// A new screensaver right after a stop keeps its flag.
	ev("screensaver-start", "slideshow")
	ev("screensaver-stop")
	ev("screensaver-start", "slideshow")
	time.Sleep(1500 * time.Millisecond) // longer than the linger: nothing to wait on, we check it did NOT happen
	if !flagExists() {
		t.Error("the removal of an earlier stop deleted a newer screensaver's flag")
	}
	ev("screensaver-stop")
	cabinettest.Await(t, "flag removal", nil, func() bool { return !flagExists() })

	// suspend fires no stop: it must never set the flag.
	ev("screensaver-start", "suspend")
	if flagExists() {
		t.Error("a suspend screensaver set the flag, which would then stick")
	}
}

func TestShQuote(t *testing.T) {
	tests := map[string]string{
		"/userdata/system/cabinet/bin/cabinet": "/userdata/system/cabinet/bin/cabinet",
		"/a b/c":                               "'/a b/c'",
		"/it's":                                `'/it'\''s'`,
	}
	for in, want := range tests {
		if got := shQuote(in); got != want {
			t.Errorf("shQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// writeExecutable writes a program the test then executes. A child process
// writes it, not this one: a file this (multi-threaded) test process held
// open for writing could be inherited by a sibling test's fork in the
// moment before that child's exec, and executing it then fails with "text
// file busy".
func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `cat > "$1" && chmod 0755 "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write %s: %v: %s", path, err, out)
	}
}
