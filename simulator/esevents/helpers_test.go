package esevents

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// recordScript logs how it was called into its own file under $ESEVENTS_REC (scripts of one event
// run concurrently), in the form of es-captures/events_*.txt: a header line, then one
// "  arg=[...]" line per argument. KIND is SUBDIR (per-event directory, event taken from the
// directory name, like the capture's scripts/<event>/log.sh) or ROOT.
const recordScript = `#!/bin/sh
rec=$(mktemp "$ESEVENTS_REC/rec.XXXXXXXX") || exit 1
{
  if [ KIND = SUBDIR ]; then
    printf '%s SUBDIR %s argc=%d\n' "$(date +%s)" "$(basename "$(dirname "$0")")" "$#"
  else
    printf '%s ROOT uid=%s pid=%s ppid=%s argc=%d\n' "$(date +%s)" "$(id -u)" "$$" "$PPID" "$#"
  fi
  printf '  script=[%s]\n' "$0"
  for a in "$@"; do printf '  arg=[%s]\n' "$a"; done
} > "$rec"
`

// testTree is a fake Batocera root with a Firer pointed at it.
type testTree struct {
	root, recDir string
	firer        *Firer
	stderr       *lockedBuffer
}

func newTree(t *testing.T) *testTree {
	t.Helper()
	root := t.TempDir()
	recDir := filepath.Join(root, "rec")
	mkdir(t, recDir)
	stderr := &lockedBuffer{}
	f := &Firer{Root: root, Env: []string{"ESEVENTS_REC=" + recDir}, Stderr: stderr}
	t.Cleanup(func() {
		f.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.Wait(ctx); err != nil {
			t.Errorf("scripts still running after Kill: %v", err)
		}
	})
	return &testTree{root: root, recDir: recDir, firer: f, stderr: stderr}
}

func (tr *testTree) userScripts() string { return filepath.Join(tr.root, UserScriptsDir) }
func (tr *testTree) logDir() string      { return filepath.Join(tr.root, LogsDir) }

// addRecorder installs the recording script as <scripts>/<event>/<name> (event != "") or as the
// root generic script <scripts>/<name>.
func (tr *testTree) addRecorder(t *testing.T, event, name string) string {
	t.Helper()
	dir, kind := tr.userScripts(), "ROOT"
	if event != "" {
		dir, kind = filepath.Join(dir, event), "SUBDIR"
	}
	p := filepath.Join(dir, name)
	writeFile(t, p, strings.ReplaceAll(recordScript, "KIND", kind), 0o755)
	return p
}

// fire fires one event, waits for every script, and returns the records they wrote, sorted.
func (tr *testTree) fire(t *testing.T, event string, args ...string) []record {
	t.Helper()
	if err := tr.firer.FireContext(context.Background(), event, args...); err != nil {
		t.Fatalf("FireContext(%q, %q): %v", event, args, err)
	}
	tr.wait(t)
	return tr.takeRecords(t)
}

func (tr *testTree) wait(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tr.firer.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// takeRecords reads and removes the record files written so far.
func (tr *testTree) takeRecords(t *testing.T) []record {
	t.Helper()
	entries, err := os.ReadDir(tr.recDir)
	if err != nil {
		t.Fatal(err)
	}
	var recs []record
	for _, e := range entries {
		p := filepath.Join(tr.recDir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got := parseRecords(string(b))
		if len(got) != 1 {
			t.Fatalf("record file %s holds %d records, want 1:\n%s", e.Name(), len(got), b)
		}
		recs = append(recs, got...)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	sortRecords(recs)
	return recs
}

// record is one script invocation as es-captures/events_*.txt shows it.
type record struct {
	kind   string // SUBDIR or ROOT
	event  string // from the directory (SUBDIR) or $1 (ROOT)
	argc   int
	args   []string // the raw "  arg=[...]" lines, byte for byte
	script string   // $0, only in our own records
}

func (r record) String() string {
	return r.kind + " " + r.event + " argc=" + strconv.Itoa(r.argc) + "\n" + strings.Join(r.args, "\n")
}

// argv returns the arguments inside the arg=[...] lines.
func (r record) argv() []string {
	out := []string{}
	for _, l := range r.args {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "  arg=["), "]"))
	}
	return out
}

// parseRecords reads the records of a capture file or of our recorder. Lines look like
// "<time> SUBDIR <event> ... argc=N" or "<time> ROOT ... argc=N" followed by "  arg=[...]" lines,
// or (events_quit.txt) "<time> ROOT ... arg=[quit]" on one line. Every other line ("done", "end",
// comments, ROOT-SLOW, the emulator's own fakeemu lines) ends the current record.
func parseRecords(text string) []record {
	var out []record
	cur := -1
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "  arg=["):
			if cur >= 0 {
				out[cur].args = append(out[cur].args, line)
			}
			continue
		case strings.HasPrefix(line, "  script=["):
			if cur >= 0 {
				out[cur].script = strings.TrimSuffix(strings.TrimPrefix(line, "  script=["), "]")
			}
			continue
		}
		cur = -1
		fields := strings.Fields(line)
		if len(fields) < 3 || (fields[1] != "SUBDIR" && fields[1] != "ROOT") {
			continue
		}
		r := record{kind: fields[1], argc: -1}
		if r.kind == "SUBDIR" {
			r.event = fields[2]
		}
		for _, f := range fields[2:] {
			if n, ok := strings.CutPrefix(f, "argc="); ok {
				r.argc, _ = strconv.Atoi(n)
			}
		}
		if i := strings.Index(line, " ... arg=["); r.kind == "ROOT" && r.argc < 0 && i >= 0 {
			r.args, r.argc = []string{"  " + line[i+len(" ... "):]}, 1
		}
		if r.argc < 0 {
			continue // "SUBDIR game-end done (slept 3s)" and the like
		}
		out = append(out, r)
		cur = len(out) - 1
	}
	for i := range out {
		if out[i].kind == "ROOT" && len(out[i].args) > 0 {
			out[i].event = out[i].argv()[0]
		}
	}
	return out
}

// sortRecords orders the records of one event: ES starts them concurrently.
func sortRecords(recs []record) {
	sort.Slice(recs, func(i, j int) bool { return recs[i].String() < recs[j].String() })
}

// canonical groups consecutive records of the same event and sorts each group, so that a capture
// and our run compare equal whatever order concurrent scripts happened to log in.
func canonical(recs []record) []string {
	var out []string
	for i := 0; i < len(recs); {
		j := i
		for j < len(recs) && recs[j].event == recs[i].event {
			j++
		}
		group := append([]record(nil), recs[i:j]...)
		sortRecords(group)
		for _, r := range group {
			out = append(out, r.String())
		}
		i = j
	}
	return out
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by the umask
		t.Fatal(err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// release opens the FIFO a script is blocked reading from and writes one line, freeing it.
func release(t *testing.T, fifo string) {
	t.Helper()
	var f *os.File
	cabinettest.Await(t, "a reader on "+filepath.Base(fifo), nil, func() bool {
		var err error
		f, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if errors.Is(err, syscall.ENXIO) {
			return false // no reader yet
		}
		if err != nil {
			t.Fatal(err)
		}
		return true
	})
	defer f.Close()
	if _, err := f.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
}
