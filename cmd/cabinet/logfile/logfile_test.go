package logfile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestRotationBoundsTotalSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cabinet.log")
	lf, err := Open(path, 4096, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	line := strings.Repeat("x", 99) + "\n"
	for i := 0; i < 1000; i++ {
		if _, err := lf.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		if strings.HasSuffix(f, ".lock") {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	if len(files) != 4 { // log, .1, .2, .lock
		t.Errorf("files = %v, want cabinet.log, .1, .2 and the lock", files)
	}
	if max := int64(3 * (4096 + 100)); total > max {
		t.Errorf("total size %d > bound %d", total, max)
	}
}

// TestConcurrentProcessesAppend runs several processes appending to the same
// file while it rotates: no line is torn.
func TestConcurrentProcessesAppend(t *testing.T) {
	if os.Getenv("LOGFILE_CHILD") != "" {
		lf, err := Open(os.Getenv("LOGFILE_CHILD"), 8192, 3)
		if err != nil {
			os.Exit(3)
		}
		for i := 0; i < 300; i++ {
			fmt.Fprintf(lf, "pid=%d n=%d %s\n", os.Getpid(), i, strings.Repeat("y", 60))
		}
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "cabinet.log")
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcessesAppend$")
			cmd.Env = append(os.Environ(), "LOGFILE_CHILD="+path)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("child: %v %s", err, out)
			}
		}()
	}
	wg.Wait()
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		if strings.HasSuffix(f, ".lock") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 3 || !strings.HasPrefix(fields[0], "pid=") || len(fields[2]) != 60 {
				t.Fatalf("%s: torn line %q", f, sc.Text())
			}
			if _, err := strconv.Atoi(strings.TrimPrefix(fields[1], "n=")); err != nil {
				t.Fatalf("%s: torn line %q", f, sc.Text())
			}
		}
	}
}

func TestRedactorScrubsSecrets(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor(&buf, []string{`pa"ss\word`, "tok-123456", "ab"})
	log := New(r, "debug")
	log.Error().Str("broker_password", `pa"ss\word`).Msg("dial failed with tok-123456 inside")
	log.Info().Msg("ab is too short to be a secret")
	out := buf.String()
	for _, s := range []string{`pa"ss\word`, `pa\"ss\\word`, "tok-123456"} {
		if strings.Contains(out, s) {
			t.Errorf("log shows secret %q: %s", s, out)
		}
	}
	if !strings.Contains(out, "ab is too short") {
		t.Errorf("short values must not be redacted: %s", out)
	}
	r.SetSecrets([]string{"newsecret"})
	buf.Reset()
	log.Info().Msg("newsecret and tok-123456")
	if strings.Contains(buf.String(), "newsecret") || !strings.Contains(buf.String(), "tok-123456") {
		t.Errorf("SetSecrets not applied: %s", buf.String())
	}
}

func TestNewLevel(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, "warn")
	log.Info().Msg("hidden")
	log.Warn().Msg("shown")
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), "shown") {
		t.Errorf("level not applied: %s", buf.String())
	}
	buf.Reset()
	l2 := New(&buf, "nonsense")
	l2.Info().Msg("info by default")
	if !strings.Contains(buf.String(), "info by default") {
		t.Errorf("unknown level must mean info")
	}
}

// The hook's log never reports a failure: zerolog would print it on the
// hook's stderr, which is ES's. /dev/full fails every write with ENOSPC, as
// a full /userdata does.
func TestLazyNeverFails(t *testing.T) {
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/full", filepath.Join(blocked, "cabinet.log")} {
		l := OpenLazy(path, 0, -1)
		line := []byte(`{"level":"error"}` + "\n")
		for range 2 {
			if n, err := l.Write(line); n != len(line) || err != nil {
				t.Errorf("%s: Write = %d, %v; want %d, nil", path, n, err, len(line))
			}
		}
		l.Close()
	}
}
