package cabinettest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// Deadline bounds every wait of the tests, and it is the only bound they
// have: a wait ends as soon as its condition holds, so Deadline is not a
// timing but how long a test gives a hung peer before it fails instead of
// hanging. It is longer than anything a working cabinet takes on a loaded
// machine (the longest: Cloudflare Access keys refetched once a minute,
// serve's first pass over 50,000 game names, a delayed flusher queued
// behind another for up to 30 s and then its 10 s budget), and far shorter
// than go test's own -timeout.
const Deadline = 2 * time.Minute

// A wait looks again at a condition nothing signals (files, a process
// list, a socket answer, a script's status) after pollFirst, then less and
// less often up to pollMost: a condition that holds soon is seen soon, and
// one that takes seconds (a respawn delay, a delayed flusher) does not cost
// a process spawn or a walk of /proc every few milliseconds meanwhile.
const (
	pollFirst = 5 * time.Millisecond
	pollMost  = 200 * time.Millisecond
)

// Condition is what a wait looks at: whether it holds now, and, in the
// second form, what it saw, for the failure message.
type Condition interface {
	func() bool | func() (bool, string)
}

// Await waits until cond holds, and fails t with what cond last said when
// it does not within Deadline. It looks again whenever wake's channel
// closes (a message on the broker, a log line: pass nil where nothing
// signals) and, for what has no notification, every few milliseconds at
// first and at most every 200 ms.
func Await[C Condition](t testing.TB, what string, wake func() <-chan struct{}, cond C) {
	t.Helper()
	if ok, why := Eventually(Deadline, wake, said(cond)); !ok {
		t.Fatalf("waited %v for %s: %s", Deadline, what, why)
	}
}

// said turns either form of Condition into the one that says what it saw.
func said[C Condition](cond C) func() (bool, string) {
	switch c := any(cond).(type) {
	case func() (bool, string):
		return c
	case func() bool:
		return func() (bool, string) { return c(), "still not so" }
	}
	panic("unreachable")
}

// Eventually reports whether cond held within d, and what it last said. It
// is not for a test's assertions (Await is): it is for the bounds that are
// part of what a peer does, such as how long a process is given to stop
// before it is killed, and for clean-ups, which go on after a timeout.
func Eventually(d time.Duration, wake func() <-chan struct{}, cond func() (bool, string)) (bool, string) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	every := pollFirst
	poll := time.NewTimer(every)
	defer poll.Stop()
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
		case <-poll.C:
			every = min(every*3/2, pollMost)
			poll.Reset(every)
		case <-deadline.C:
			return cond()
		}
	}
}

// Context is a context for a wait that an API takes a context for: it ends
// at Deadline, or with the test.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	t.Cleanup(cancel)
	return ctx
}

// Logger is the logger a test gives the code under test: its lines go to
// the test's log, shown when the test fails or runs with -v.
func Logger(t testing.TB) zerolog.Logger { return zerolog.New(zerolog.NewTestWriter(t)) }

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

// AwaitLine waits until a line contains s and returns it; after Deadline
// it fails t with the output so far.
func (l *LogBuffer) AwaitLine(t testing.TB, what, s string) string {
	t.Helper()
	var line string
	Await(t, what, l.Changed, func() (bool, string) {
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
