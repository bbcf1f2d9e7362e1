package esevents

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// argvScript appends "<path relative to root> arg=[...]..." as one line to $CONFIGGEN_LOG.
// Configgen runs scripts one at a time, so appending is race-free.
const argvScript = `#!/bin/sh
line="${0#$ROOT/}"
for a in "$@"; do line="$line arg=[$a]"; done
printf '%s\n' "$line" >> "$CONFIGGEN_LOG"
`

func newConfiggen(t *testing.T) (*Configgen, string, string) {
	t.Helper()
	root := t.TempDir()
	logFile := filepath.Join(root, "configgen.log")
	mkdir(t, filepath.Join(root, "userdata"))
	c := &Configgen{Root: root, Env: []string{"CONFIGGEN_LOG=" + logFile, "ROOT=" + root}}
	return c, root, logFile
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestConfiggenArgvAndOrder(t *testing.T) {
	c, root, logFile := newConfiggen(t)
	sys := filepath.Join(root, ConfiggenSystemScriptsDir)
	user := filepath.Join(root, ConfiggenUserScriptsDir)
	writeFile(t, filepath.Join(sys, "b.sh"), argvScript, 0o755)
	writeFile(t, filepath.Join(sys, "a-noext"), argvScript, 0o755)     // no extension needed
	writeFile(t, filepath.Join(sys, "c-noexec.sh"), argvScript, 0o644) // no executable bit: skipped
	writeFile(t, filepath.Join(sys, "sub", "deep"), argvScript, 0o700) // recursive
	writeFile(t, filepath.Join(sys, ".hidden"), argvScript, 0o755)     // dot-files run too
	writeFile(t, filepath.Join(user, "cabinet.sh"), argvScript, 0o755)
	writeFile(t, filepath.Join(user, "z", "y.sh"), argvScript, 0o755)
	writeFile(t, filepath.Join(user, "exec-by-group-only"), argvScript, 0o010) // X_OK for root only
	if err := os.Symlink("sub", filepath.Join(sys, "sublink")); err != nil {   // is_dir follows it
		t.Fatal(err)
	}

	rom := `/userdata/roms/nes/Tom's $Game (USA) "x".nes`
	for _, ev := range []string{GameStart, GameStop} {
		if err := c.Run(ctxTimeout(t), ev, "nes", "libretro", "", rom); err != nil {
			t.Fatalf("Run(%s): %v", ev, err)
		}
	}

	args := func(ev string) string { return " arg=[" + ev + "] arg=[nes] arg=[libretro] arg=[] arg=[" + rom + "]" }
	var want []string
	sysOrder := []string{".hidden", "a-noext", "b.sh", "sub/deep", "sublink/deep"}
	userOrder := []string{"cabinet.sh", "z/y.sh"}
	if os.Geteuid() == 0 {
		userOrder = []string{"cabinet.sh", "exec-by-group-only", "z/y.sh"}
	}
	for _, s := range sysOrder {
		want = append(want, ConfiggenSystemScriptsDir+"/"+s+args(GameStart))
	}
	for _, s := range userOrder {
		want = append(want, ConfiggenUserScriptsDir+"/"+s+args(GameStart))
	}
	// gameStop walks the user directory first, as emulatorlauncher.py does.
	for _, s := range userOrder {
		want = append(want, ConfiggenUserScriptsDir+"/"+s+args(GameStop))
	}
	for _, s := range sysOrder {
		want = append(want, ConfiggenSystemScriptsDir+"/"+s+args(GameStop))
	}
	if got := readLines(t, logFile); !slices.Equal(got, want) {
		t.Errorf("calls:\ngot  %q\nwant %q", got, want)
	}
}

// TestConfiggenSynchronous: each script blocks the next one and Run.
func TestConfiggenSynchronous(t *testing.T) {
	c, root, logFile := newConfiggen(t)
	user := filepath.Join(root, ConfiggenUserScriptsDir)
	gate := filepath.Join(root, "gate")
	mkfifo(t, gate)
	writeFile(t, filepath.Join(user, "a.sh"), "#!/bin/sh\necho a-start >> \"$CONFIGGEN_LOG\"\nread x < '"+gate+"'\necho a-end >> \"$CONFIGGEN_LOG\"\n", 0o755)
	writeFile(t, filepath.Join(user, "b.sh"), "#!/bin/sh\necho b >> \"$CONFIGGEN_LOG\"\n", 0o755)

	returned := make(chan error, 1)
	go func() { returned <- c.Run(ctxTimeout(t), GameStart, "nes", "libretro", "nestopia", "/r.nes") }()
	cabinettest.Await(t, "a.sh to start", nil, func() bool { return len(readLines(t, logFile)) > 0 })
	select {
	case err := <-returned:
		t.Fatalf("Run returned (%v) while a.sh was blocked", err)
	default:
	}
	release(t, gate)
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	if got, want := readLines(t, logFile), []string{"a-start", "a-end", "b"}; !slices.Equal(got, want) {
		t.Errorf("log = %q, want %q", got, want)
	}
}

// TestConfiggenExecFailure: subprocess.call raises on a file the kernel cannot execute, which
// aborts configgen; the scripts after it do not run.
func TestConfiggenExecFailure(t *testing.T) {
	c, root, logFile := newConfiggen(t)
	user := filepath.Join(root, ConfiggenUserScriptsDir)
	writeFile(t, filepath.Join(user, "a-no-shebang"), "echo hi\n", 0o755)
	writeFile(t, filepath.Join(user, "b.sh"), argvScript, 0o755)
	err := c.Run(ctxTimeout(t), GameStart, "nes", "libretro", "", "/r.nes")
	if err == nil || !strings.Contains(err.Error(), "a-no-shebang") {
		t.Errorf("Run = %v, want an exec error naming a-no-shebang", err)
	}
	if got := readLines(t, logFile); len(got) != 0 {
		t.Errorf("scripts ran after the failure: %q", got)
	}
}

func TestConfiggenExitStatusIgnored(t *testing.T) {
	c, root, logFile := newConfiggen(t)
	user := filepath.Join(root, ConfiggenUserScriptsDir)
	writeFile(t, filepath.Join(user, "a.sh"), "#!/bin/sh\nexit 3\n", 0o755)
	writeFile(t, filepath.Join(user, "b.sh"), argvScript, 0o755)
	if err := c.Run(ctxTimeout(t), GameStop, "nes", "libretro", "", "/r.nes"); err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, logFile); len(got) != 1 {
		t.Errorf("log = %q, want b.sh's line", got)
	}
}

func TestConfiggenCancel(t *testing.T) {
	c, root, _ := newConfiggen(t)
	gate := filepath.Join(root, "gate")
	mkfifo(t, gate)
	started := filepath.Join(root, "started")
	writeFile(t, filepath.Join(root, ConfiggenUserScriptsDir, "a.sh"), "#!/bin/sh\n: > '"+started+"'\nread x < '"+gate+"'\n", 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- c.Run(ctx, GameStart, "nes", "libretro", "", "/r.nes") }()
	cabinettest.Await(t, "a.sh to start", nil, func() bool { return exists(started) })
	cancel()
	select {
	case err := <-returned:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-ctxTimeout(t).Done():
		t.Fatal("Run did not return after cancel")
	}
}

func TestConfiggenUnknownEvent(t *testing.T) {
	c, _, _ := newConfiggen(t)
	if err := c.Run(context.Background(), "game-start", "nes", "", "", ""); err == nil {
		t.Error("Run accepted an ES event name")
	}
}

func TestConfiggenNoDirs(t *testing.T) {
	c, _, _ := newConfiggen(t)
	if err := c.Run(context.Background(), GameStart, "nes", "libretro", "", "/r.nes"); err != nil {
		t.Errorf("Run without script directories = %v, want nil", err)
	}
}
