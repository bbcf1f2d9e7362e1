package esevents

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestArgvStyles derives from es-events.md §2-§4 what a per-event-directory script and a root
// generic script receive for events the captures do not cover.
func TestArgvStyles(t *testing.T) {
	tr := newTree(t)
	home := filepath.Join(tr.root, "userdata/system")
	tests := []struct {
		name      string
		event     string
		args      []string
		wantEvent []string // per-event script: no event name
	}{
		{"random video is quoted", "screensaver-start", []string{"random video"}, []string{"random video"}},
		{"suspend", "screensaver-start", []string{"suspend"}, []string{"suspend"}},
		{"no args", "wake", nil, []string{}},
		{"quit reboot", "quit", []string{"reboot"}, []string{"reboot"}},
		{"theme-changed", "theme-changed", []string{"new-set", "old set"}, []string{"new-set", "old set"}},
		{
			"game-selected raw path with spaces",
			"game-selected",
			GameSelectedArgs("nes", "/userdata/roms/nes/Super Mario Bros. (World).nes", "Super Mario Bros. (World)"),
			[]string{"nes", "/userdata/roms/nes/Super Mario Bros. (World).nes", "Super Mario Bros. (World)"},
		},
		{"empty argument stops the list", "theme-changed", []string{"a", "", "c"}, []string{"a"}},
		{"leading quote drops first and last byte", "theme-changed", []string{`"quoted arg!`, "b"}, []string{"quoted arg", "b"}},
		{"all double quotes deleted", "theme-changed", []string{`say "hi" there`}, []string{"say hi there"}},
		{"a lone quote becomes nothing", "theme-changed", []string{`"`, "b"}, []string{"b"}},
		{"dollar expanded inside quotes", "theme-changed", []string{"at $HOME now"}, []string{"at " + home + " now"}},
		{"backslash-dollar keeps $ inside quotes", "theme-changed", []string{`a\$HOME b`}, []string{"a$HOME b"}},
	}
	tr.addRecorder(t, "", "logall.sh")
	for _, tt := range tests {
		tr.addRecorder(t, tt.event, "log")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := tr.fire(t, tt.event, tt.args...)
			if len(recs) != 2 {
				t.Fatalf("got %d invocations, want 2 (per-event and root): %v", len(recs), recs)
			}
			root, sub := recs[0], recs[1] // sorted: ROOT < SUBDIR
			if sub.kind != "SUBDIR" || root.kind != "ROOT" {
				t.Fatalf("got kinds %s, %s", root.kind, sub.kind)
			}
			if got := sub.argv(); !slices.Equal(got, tt.wantEvent) {
				t.Errorf("per-event script argv = %q, want %q", got, tt.wantEvent)
			}
			wantRoot := append([]string{tt.event}, tt.wantEvent...)
			if got := root.argv(); !slices.Equal(got, wantRoot) {
				t.Errorf("root script argv = %q, want %q", got, wantRoot)
			}
		})
	}
}

// TestNeverRuns covers command lines that sh cannot parse, so that no hook runs at all.
func TestNeverRuns(t *testing.T) {
	tests := []struct {
		name  string
		event string
		args  []string
	}{
		{"game-selected raw path with a parenthesis and no space", "game-selected", GameSelectedArgs("nes", "/userdata/roms/nes/Mario_(USA).nes", "Mario")},
		{"NUL ends the command as c_str does", "theme-changed", []string{"a\x00b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			tr.addRecorder(t, "", "logall.sh")
			tr.addRecorder(t, tt.event, "log")
			if recs := tr.fire(t, tt.event, tt.args...); len(recs) != 0 {
				t.Errorf("hooks ran: %v", recs)
			}
			if !strings.Contains(strings.ToLower(tr.stderr.String()), "syntax error") {
				t.Errorf("ES stderr = %q, want a sh syntax error", tr.stderr.String())
			}
		})
	}
}

// TestScriptSelection checks which entries each pass runs.
func TestScriptSelection(t *testing.T) {
	tr := newTree(t)
	us := tr.userScripts()
	tr.addRecorder(t, "sleep", "noext")    // pass 1 has no extension filter
	tr.addRecorder(t, "sleep", ".hidden")  // pass 1 skips dot-files
	tr.addRecorder(t, "", "logall.sh")     // root: .sh
	tr.addRecorder(t, "", "UPPER.PY")      // root: extension is lower-cased
	tr.addRecorder(t, "", ".dot.sh")       // root: dot-files are NOT skipped
	tr.addRecorder(t, "", "hook")          // root: no extension, ignored
	tr.addRecorder(t, "", "hook.txt")      // root: other extension, ignored
	tr.addRecorder(t, "", "hook.sh.bak")   // root: last extension counts
	mkdir(t, filepath.Join(us, "dir.sh"))  // root: directory, skipped
	mkdir(t, filepath.Join(us, "realdir")) // root: a symlink to a directory is skipped too
	if err := os.Symlink("realdir", filepath.Join(us, "link.sh")); err != nil {
		t.Fatal(err)
	}
	// The other two scripts/ directories are read too, the runtime one included.
	for _, rel := range []string{SystemScriptsDir, RuntimeScriptsDir} {
		writeFile(t, filepath.Join(tr.root, rel, "sleep", "log"), strings.ReplaceAll(recordScript, "KIND", "SUBDIR"), 0o755)
		writeFile(t, filepath.Join(tr.root, rel, "other.sh"), strings.ReplaceAll(recordScript, "KIND", "ROOT"), 0o755)
	}

	var got []string
	for _, r := range tr.fire(t, "sleep") {
		got = append(got, r.kind+" "+strings.TrimPrefix(r.script, tr.root+"/"))
	}
	slices.Sort(got)
	want := []string{
		"ROOT " + RuntimeScriptsDir + "/other.sh",
		"ROOT " + SystemScriptsDir + "/other.sh",
		"ROOT " + UserScriptsDir + "/.dot.sh",
		"ROOT " + UserScriptsDir + "/UPPER.PY",
		"ROOT " + UserScriptsDir + "/logall.sh",
		"SUBDIR " + RuntimeScriptsDir + "/sleep/log",
		"SUBDIR " + SystemScriptsDir + "/sleep/log",
		"SUBDIR " + UserScriptsDir + "/sleep/noext",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("scripts run:\ngot  %q\nwant %q", got, want)
	}
}

// TestSubdirectoryIsExecuted: pass 1 "runs" a sub-directory too, and sh fails on it.
func TestSubdirectoryIsExecuted(t *testing.T) {
	tr := newTree(t)
	mkdir(t, filepath.Join(tr.userScripts(), "wake", "sub"))
	tr.fire(t, "wake")
	b, err := os.ReadFile(filepath.Join(tr.logDir(), StderrLog))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "wake/sub: Permission denied") {
		t.Errorf("%s = %q, want sh's Permission denied for the sub-directory", StderrLog, b)
	}
}

// TestDuplicateDirsRunOnce: ES removes duplicate directories before listing them.
func TestDuplicateDirsRunOnce(t *testing.T) {
	tr := newTree(t)
	tr.addRecorder(t, "", "logall.sh")
	tr.addRecorder(t, "wake", "log")
	us := tr.userScripts()
	tr.firer.ScriptsDirs = []string{us, us, filepath.Join(tr.root, "nowhere")}
	if recs := tr.fire(t, "wake"); len(recs) != 2 {
		t.Errorf("got %d invocations, want 2: %v", len(recs), recs)
	}
}

// TestSpaceInScriptPath: ES wraps a script path containing a space in double quotes.
func TestSpaceInScriptPath(t *testing.T) {
	tr := newTree(t)
	spaced := filepath.Join(tr.root, "my scripts dir")
	tr.firer.ScriptsDirs = []string{spaced}
	writeFile(t, filepath.Join(spaced, "game-end", "my hook"), strings.ReplaceAll(recordScript, "KIND", "SUBDIR"), 0o755)
	writeFile(t, filepath.Join(spaced, "my hook.sh"), strings.ReplaceAll(recordScript, "KIND", "ROOT"), 0o755)

	recs := tr.fire(t, "game-end")
	if len(recs) != 2 {
		t.Fatalf("got %d invocations, want 2: %v", len(recs), recs)
	}
	if got, want := recs[0].script, filepath.Join(spaced, "my hook.sh"); got != want {
		t.Errorf("root $0 = %q, want %q", got, want)
	}
	if got, want := recs[1].script, filepath.Join(spaced, "game-end", "my hook"); got != want {
		t.Errorf("per-event $0 = %q, want %q", got, want)
	}
}

// TestLogDirMustBePlain: ES does not quote the log directory, so one with a space would break
// every command; Firer refuses it instead of silently running nothing. (Keep test names free of
// parentheses: t.TempDir keeps them, and the default log dir lives under the temp root.)
func TestLogDirMustBePlain(t *testing.T) {
	f := &Firer{Root: t.TempDir(), LogDir: "/tmp/with space"}
	if err := f.FireContext(context.Background(), "wake"); err == nil || !strings.Contains(err.Error(), "log dir") {
		t.Errorf("FireContext = %v, want a log dir error", err)
	}
}

// TestTooManyArgsPanics: ES's fireEvent has three argument slots.
func TestTooManyArgsPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Fire with 4 arguments did not panic")
		}
	}()
	(&Firer{Root: t.TempDir()}).Fire("x", "1", "2", "3", "4")
}

func TestDefaultPaths(t *testing.T) {
	var f Firer
	want := []string{
		"/userdata/system/configs/emulationstation/scripts",
		"/usr/share/emulationstation/scripts",
		"/var/run/emulationstation/scripts",
	}
	if got := f.ScriptsDirsInUse(); !slices.Equal(got, want) {
		t.Errorf("ScriptsDirsInUse() = %q, want %q", got, want)
	}
	if got, want := f.LogDirInUse(), "/userdata/system/logs"; got != want {
		t.Errorf("LogDirInUse() = %q, want %q", got, want)
	}
	var c Configgen
	if got, want := c.ScriptDirs(), []string{"/usr/share/batocera/configgen/scripts", "/userdata/system/scripts"}; !slices.Equal(got, want) {
		t.Errorf("Configgen.ScriptDirs() = %q, want %q", got, want)
	}
}

// TestFireFunc: the adapter the fake ES can use in its own tests.
func TestFireFunc(t *testing.T) {
	var got []string
	var fire interface{ Fire(string, ...string) } = FireFunc(func(event string, args ...string) {
		got = append(append(got, event), args...)
	})
	fire.Fire("game-start", "a", "b")
	if want := []string{"game-start", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	var _ interface{ Fire(string, ...string) } = &Firer{}
}

// TestOnError: Fire reports what it cannot return.
func TestOnError(t *testing.T) {
	var got error
	f := &Firer{Root: t.TempDir(), LogDir: "/bad dir", OnError: func(err error) { got = err }}
	f.Fire("wake")
	if got == nil {
		t.Error("OnError not called")
	}
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
