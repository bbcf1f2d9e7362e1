package chromium

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
)

// processesMentioning lists the processes whose command line holds s.
func processesMentioning(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// tail keeps the last max bytes of the lines written to it, less
// Chromium's complaints that it finds no D-Bus (none in CI containers:
// dozens of lines a launch that would push the useful ones out).
type tail struct {
	mu      sync.Mutex
	max     int
	b       []byte
	partial []byte // a line not yet ended
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := t.partial[:i+1]
		if !bytes.Contains(line, []byte(":ERROR:dbus/")) {
			t.b = append(t.b, line...)
		}
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > t.max {
		t.b, t.partial = append(t.b, t.partial...), nil
	}
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b) + string(t.partial))
}
