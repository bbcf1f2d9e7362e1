package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logBuf collects a process's stderr (the daemon logs JSON lines there
// with --log-stderr) and lets tests wait for a line.
type logBuf struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLogBuf() *logBuf { return &logBuf{changed: make(chan struct{})} }

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuf) wake() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// count is how many lines contain s.
func (l *logBuf) count(s string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// tail is the end of the log, for failure messages.
func (l *logBuf) tail() string {
	s := l.String()
	if len(s) > 6000 {
		s = "…" + s[len(s)-6000:]
	}
	return s
}

// daemonProc is one `cabinet serve --log-stderr` process.
type daemonProc struct {
	t    testing.TB
	cmd  *exec.Cmd
	log  *logBuf
	done chan struct{}
}

// startDaemon starts `cabinet serve --log-stderr` with env; its stderr goes
// to its own log and to all (every daemon of a test, in order).
func startDaemon(t testing.TB, env []string, all io.Writer) *daemonProc {
	t.Helper()
	p := &daemonProc{t: t, log: newLogBuf(), done: make(chan struct{})}
	p.cmd = exec.Command(daemonBin, "serve", "--log-stderr")
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = io.MultiWriter(p.log, all)
	p.cmd.Stdout = p.cmd.Stderr
	// The daemon must not outlive a test binary that crashed.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start cabinet serve: %v", err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		defer p.checkRaces()
		if p.running() {
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				p.cmd.Process.Kill()
				<-p.done
			}
		}
	})
	return p
}

// checkRaces fails the test when the race-built daemon reported a data race.
func (p *daemonProc) checkRaces() {
	log := p.log.String()
	if i := strings.Index(log, "WARNING: DATA RACE"); i >= 0 {
		end := min(len(log), i+8000)
		p.t.Errorf("the daemon (pid %d) reported a data race:\n%s", p.pid(), log[i:end])
	}
}

func (p *daemonProc) pid() int { return p.cmd.Process.Pid }

func (p *daemonProc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// waitLog waits until a line of this daemon's log contains s; a daemon
// that exits first fails the test.
func (p *daemonProc) waitLog(s string, d time.Duration) {
	p.t.Helper()
	p.waitLogCount(s, 1, d)
}

// waitLogCount waits until n lines of this daemon's log contain s.
func (p *daemonProc) waitLogCount(s string, n int, d time.Duration) {
	p.t.Helper()
	waitUntil(p.t, d, fmt.Sprintf("%d daemon log line(s) with %q", n, s), p.log.wake, func() (bool, string) {
		if p.log.count(s) >= n {
			return true, ""
		}
		if !p.running() {
			p.t.Fatalf("cabinet serve exited (%v) before logging %q:\n%s", p.cmd.ProcessState, s, p.log.tail())
		}
		return false, "log so far:\n" + p.log.tail()
	})
}

// kill9 SIGKILLs the daemon and waits until it is gone.
func (p *daemonProc) kill9() {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
}

// term sends SIGTERM and returns the exit code once the daemon is gone.
func (p *daemonProc) term() int {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(15 * time.Second)
	return p.cmd.ProcessState.ExitCode()
}

func (p *daemonProc) wait(d time.Duration) {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("cabinet serve did not exit within %v:\n%s", d, p.log.tail())
	}
}

// runCabinet runs `cabinet ARGS…` to completion with env (bounded: a hang
// fails the test) and returns its output, exit code and wall time.
func runCabinet(t testing.TB, env []string, args ...string) (out string, code int, took time.Duration) {
	t.Helper()
	return run(t, 30*time.Second, env, cabinetBin, args...)
}

// runCmd runs a program (with the test's environment) for at most d.
func runCmd(t testing.TB, d time.Duration, bin string, args ...string) (out string, code int, took time.Duration) {
	t.Helper()
	return run(t, d, nil, bin, args...)
}

func run(t testing.TB, d time.Duration, env []string, bin string, args ...string) (out string, code int, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("%s %q hung for %v: %s", bin, args, d, b.String())
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	return b.String(), cmd.ProcessState.ExitCode(), took
}
