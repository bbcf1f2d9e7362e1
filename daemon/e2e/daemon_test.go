package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// daemonProc is one `cabinet serve --log-stderr` process.
type daemonProc struct {
	t    testing.TB
	cmd  *exec.Cmd
	log  *cabinettest.LogBuffer
	done chan struct{}
}

// startDaemon starts `cabinet serve --log-stderr` with env; its stderr goes
// to its own log and to all (every daemon of a test, in order).
func startDaemon(t testing.TB, env []string, all io.Writer) *daemonProc {
	t.Helper()
	p := &daemonProc{t: t, log: &cabinettest.LogBuffer{}, done: make(chan struct{})}
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
	cabinettest.Await(p.t, fmt.Sprintf("%d daemon log line(s) with %q", n, s), p.log.Changed, func() (bool, string) {
		if p.log.Count(s) >= n {
			return true, ""
		}
		if !p.running() {
			p.t.Fatalf("cabinet serve exited (%v) before logging %q:\n%s", p.cmd.ProcessState, s, p.log.Tail())
		}
		return false, "log so far:\n" + p.log.Tail()
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
		p.t.Fatalf("cabinet serve did not exit within %v:\n%s", d, p.log.Tail())
	}
}

// runCabinet runs `cabinet ARGS…` to completion with env (bounded: a hang
// fails the test) and returns its output, exit code and wall time.
func runCabinet(t testing.TB, env []string, args ...string) (out string, code int, took time.Duration) {
	t.Helper()
	return run(t, 30*time.Second, env, cabinetBin, args...)
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
