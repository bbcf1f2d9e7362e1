package cabinettest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// pollEvery is how often a wait looks again at a condition nothing signals
// (files, a process list, a socket answer).
const pollEvery = 20 * time.Millisecond

// WaitFor waits until cond holds, for at most d, and fails t with what cond
// last said when it never does. It looks again whenever wake's channel
// closes (a message on the broker, a log line: pass nil where nothing
// signals) and every 20 ms for what has no notification.
func WaitFor(t testing.TB, d time.Duration, what string, wake func() <-chan struct{}, cond func() (bool, string)) {
	t.Helper()
	if ok, why := Eventually(d, wake, cond); !ok {
		t.Fatalf("waited %v for %s: %s", d, what, why)
	}
}

// Eventually is WaitFor that reports instead of failing (clean-ups, which
// go on after a timeout): whether cond held within d, and what it last
// said.
func Eventually(d time.Duration, wake func() <-chan struct{}, cond func() (bool, string)) (bool, string) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		var ch <-chan struct{}
		if wake != nil {
			ch = wake() // before cond: a change while cond looks is not missed
		}
		if ok, why := cond(); ok {
			return true, why
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
}

// LogBuffer collects a process's output (cabinet logs JSON lines) for
// tests that wait for a line. It is safe for concurrent writers, and its
// zero value is ready to use.
type LogBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced at every write
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return len(p), nil
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Changed returns a channel closed at the next write: the wake of WaitFor.
func (l *LogBuffer) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// Count is how many lines contain s.
func (l *LogBuffer) Count(s string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// Line is the first complete line (one the writer has ended) that
// contains s.
func (l *LogBuffer) Line(s string) (string, bool) {
	text := l.String()
	lines := strings.Split(text[:strings.LastIndexByte(text, '\n')+1], "\n")
	for _, line := range lines {
		if strings.Contains(line, s) {
			return line, true
		}
	}
	return "", false
}

// WaitLine waits until a line contains s and returns it; on timeout it
// fails t with the output so far.
func (l *LogBuffer) WaitLine(t testing.TB, d time.Duration, what, s string) string {
	t.Helper()
	var line string
	WaitFor(t, d, what, l.Changed, func() (bool, string) {
		var ok bool
		line, ok = l.Line(s)
		return ok, "output so far:\n" + l.Tail()
	})
	return line
}

// Tail is the end of the output, for failure messages.
func (l *LogBuffer) Tail() string {
	s := l.String()
	if len(s) > 6000 {
		s = "…" + s[len(s)-6000:]
	}
	return s
}
