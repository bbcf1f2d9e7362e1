package esevents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// gateScript writes <marks>/<tag>.started, blocks reading <marks>/<tag>.gate (a FIFO) until the
// test releases it, then writes <marks>/<tag>.done.
func gateScript(marks, tag string) string {
	base := filepath.Join(marks, tag)
	return fmt.Sprintf("#!/bin/sh\n: > '%[1]s.started'\nread x < '%[1]s.gate'\n: > '%[1]s.done'\n", base)
}

// TestQuitRootScriptBlocks: root generic scripts are waited for on quit (ES's system() call);
// per-event scripts/quit/* are not, and neither are root scripts of any other event.
func TestQuitRootScriptBlocks(t *testing.T) {
	for _, event := range []string{"quit", "sleep"} {
		t.Run(event, func(t *testing.T) {
			tr := newTree(t)
			marks := filepath.Join(tr.root, "marks")
			mkdir(t, marks)
			for _, tag := range []string{"root", "sub"} {
				mkfifo(t, filepath.Join(marks, tag+".gate"))
			}
			writeFile(t, filepath.Join(tr.userScripts(), "zslow.sh"), gateScript(marks, "root"), 0o755)
			writeFile(t, filepath.Join(tr.userScripts(), event, "slow"), gateScript(marks, "sub"), 0o755)
			mark := func(name string) string { return filepath.Join(marks, name) }

			returned := make(chan error, 1)
			go func() { returned <- tr.firer.FireContext(ctxTimeout(t), event) }()

			cabinettest.Await(t, "the root script to start", nil, func() bool { return exists(mark("root.started")) })
			cabinettest.Await(t, "the per-event script to start", nil, func() bool { return exists(mark("sub.started")) })
			if event == "quit" {
				select {
				case err := <-returned:
					t.Fatalf("Fire returned (%v) while the root quit script was still running", err)
				default:
				}
				release(t, mark("root.gate"))
			}
			select {
			case err := <-returned:
				if err != nil {
					t.Fatal(err)
				}
			case <-ctxTimeout(t).Done():
				t.Fatal("Fire did not return")
			}
			if got, want := exists(mark("root.done")), event == "quit"; got != want {
				t.Errorf("root script done when Fire returned = %v, want %v", got, want)
			}
			if exists(mark("sub.done")) {
				t.Error("per-event script finished although its gate is still closed")
			}
			if event != "quit" {
				release(t, mark("root.gate"))
			}
			release(t, mark("sub.gate"))
			tr.wait(t)
			for _, m := range []string{"root.done", "sub.done"} {
				if !exists(mark(m)) {
					t.Errorf("%s missing after Wait", m)
				}
			}
		})
	}
}

// TestQuitContextCancel: the context bounds what ES never bounds, and kills the script.
func TestQuitContextCancel(t *testing.T) {
	tr := newTree(t)
	marks := filepath.Join(tr.root, "marks")
	mkdir(t, marks)
	mkfifo(t, filepath.Join(marks, "root.gate"))
	writeFile(t, filepath.Join(tr.userScripts(), "zslow.sh"), gateScript(marks, "root"), 0o755)

	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- tr.firer.FireContext(ctx, "quit") }()
	cabinettest.Await(t, "the root script to start", nil, func() bool { return exists(filepath.Join(marks, "root.started")) })
	cancel()
	select {
	case err := <-returned:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("FireContext = %v, want context.Canceled", err)
		}
	case <-ctxTimeout(t).Done():
		t.Fatal("FireContext did not return after cancel")
	}
	tr.wait(t)
	if exists(filepath.Join(marks, "root.done")) {
		t.Error("the killed script went on")
	}
}

// TestKillAndWait: Wait honours its context while a script runs; Kill ends the script.
func TestKillAndWait(t *testing.T) {
	tr := newTree(t)
	marks := filepath.Join(tr.root, "marks")
	mkdir(t, marks)
	mkfifo(t, filepath.Join(marks, "sub.gate"))
	writeFile(t, filepath.Join(tr.userScripts(), "wake", "slow"), gateScript(marks, "sub"), 0o755)

	tr.firer.Fire("wake")
	cabinettest.Await(t, "the script to start", nil, func() bool { return exists(filepath.Join(marks, "sub.started")) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tr.firer.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(cancelled) = %v, want context.Canceled", err)
	}
	tr.firer.Kill()
	tr.wait(t)
	if exists(filepath.Join(marks, "sub.done")) {
		t.Error("the killed script went on")
	}
}

// TestHeadTruncation: stdout goes through head -300; a script writing 1000 long lines is killed
// by SIGPIPE (status 141) once head has exited.
func TestHeadTruncation(t *testing.T) {
	tr := newTree(t)
	writeFile(t, filepath.Join(tr.userScripts(), "wake", "chatty"), `#!/bin/sh
( i=0; while [ $i -lt 1000 ]; do printf 'line %04d %01000d\n' $i 0; i=$((i+1)); done )
echo "writer-status=$?" >&2
`, 0o755)
	tr.fire(t, "wake")

	out, err := os.ReadFile(filepath.Join(tr.logDir(), StdoutLog))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 300 {
		t.Fatalf("%s has %d lines, want 300", StdoutLog, len(lines))
	}
	if want := fmt.Sprintf("line 0299 %01000d", 0); lines[299] != want {
		t.Errorf("last line = %.20q…, want %.20q…", lines[299], want)
	}
	errLog, err := os.ReadFile(filepath.Join(tr.logDir(), StderrLog))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(errLog), "writer-status=141\n"; got != want {
		t.Errorf("%s = %q, want %q (killed by SIGPIPE)", StderrLog, got, want)
	}
}

// TestLogsTruncatedPerInvocation: each invocation's "> file" truncates both logs.
func TestLogsTruncatedPerInvocation(t *testing.T) {
	tr := newTree(t)
	writeFile(t, filepath.Join(tr.userScripts(), "theme-changed", "say"), "#!/bin/sh\necho \"out $1\"\necho \"err $1\" >&2\n", 0o755)
	for _, word := range []string{"first-run-is-longer", "second"} {
		tr.fire(t, "theme-changed", word)
	}
	for name, want := range map[string]string{StdoutLog: "out second\n", StderrLog: "err second\n"} {
		b, err := os.ReadFile(filepath.Join(tr.logDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
}

// TestLogsDisabled: with ES logging off, output goes to /dev/null and no log file appears.
func TestLogsDisabled(t *testing.T) {
	tr := newTree(t)
	tr.firer.LogsDisabled = true
	tr.addRecorder(t, "wake", "log")
	writeFile(t, filepath.Join(tr.userScripts(), "wake", "say"), "#!/bin/sh\necho hello\n", 0o755)
	if recs := tr.fire(t, "wake"); len(recs) != 1 {
		t.Errorf("got %d invocations, want 1", len(recs))
	}
	if exists(filepath.Join(tr.logDir(), StdoutLog)) {
		t.Errorf("%s written although logs are disabled", StdoutLog)
	}
}

// TestEnvironment: HOME and the working directory are ES's on Batocera, under Root.
func TestEnvironment(t *testing.T) {
	tr := newTree(t)
	mkdir(t, filepath.Join(tr.root, "userdata"))
	writeFile(t, filepath.Join(tr.userScripts(), "wake", "env"),
		"#!/bin/sh\nprintf '%s\\n%s\\n%s\\n' \"$HOME\" \"$(pwd)\" \"$EXTRA\" > \"$ESEVENTS_REC/env\"\n", 0o755)
	tr.firer.Env = append(tr.firer.Env, "EXTRA=yes")
	tr.firer.Fire("wake")
	tr.wait(t)
	b, err := os.ReadFile(filepath.Join(tr.recDir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tr.root, "userdata/system") + "\n" + filepath.Join(tr.root, "userdata") + "\nyes\n"
	if string(b) != want {
		t.Errorf("HOME, cwd, EXTRA = %q, want %q", b, want)
	}
}
