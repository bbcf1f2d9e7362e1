package esevents

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// script is one running "sh -c wrapper".
type script struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is reaped
}

// start runs one wrapped command line as ES does. ES double-forks and execs
// `sh -c wrapper`, so the script is re-parented and never waited for; here sh gets its own process
// group (so Kill can reach the whole pipeline) and a goroutine reaps it, which leaves no zombie.
// With wait (root scripts on quit) it blocks like ES's system() call, until the script exits or
// ctx ends.
func (f *Firer) start(ctx context.Context, wrapper string, wait bool) error {
	if wait && ctx.Err() != nil {
		return fmt.Errorf("wait for quit script: %w", ctx.Err())
	}
	// ES hands c_str() to execl/system: the command ends at the first NUL byte.
	if i := strings.IndexByte(wrapper, 0); i >= 0 {
		wrapper = wrapper[:i]
	}
	cmd := &exec.Cmd{
		Path:        "/bin/sh",
		Args:        []string{"sh", "-c", wrapper}, // argv[0] "sh": sh's error messages read "sh: 1: ..." as on ES
		Dir:         f.dir(),
		Env:         f.environ(),
		Stderr:      f.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	s := &script{cmd: cmd, exited: make(chan struct{})}

	f.mu.Lock()
	if err := cmd.Start(); err != nil {
		f.mu.Unlock()
		return fmt.Errorf("start sh: %w", err)
	}
	if f.running == nil {
		f.running = make(map[*script]struct{})
	}
	if f.pending == 0 {
		f.idle = make(chan struct{})
	}
	f.pending++
	f.running[s] = struct{}{}
	f.mu.Unlock()

	go f.reap(s)
	if !wait {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	case <-ctx.Done():
		f.killGroup(s)
		<-s.exited
		return fmt.Errorf("wait for quit script: %w", ctx.Err())
	}
}

// reap waits for sh to exit without reaping it, drops it from the set Kill signals, and only then
// reaps it: while the pid is in that set it cannot be reused, so Kill never signals a stranger's
// process group. Wait is released only after cmd.Wait, so Stderr has everything sh wrote.
func (f *Firer) reap(s *script) {
	pid := s.cmd.Process.Pid
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	f.mu.Lock()
	delete(f.running, s)
	f.mu.Unlock()

	_ = s.cmd.Wait() // the exit status is ignored, as ES ignores it
	close(s.exited)

	f.mu.Lock()
	f.pending--
	if f.pending == 0 {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

// Wait blocks until every script fired so far (and any fired meanwhile) has exited, or ctx ends.
// ES never waits; tests and the simulator do.
func (f *Firer) Wait(ctx context.Context) error {
	for {
		f.mu.Lock()
		idle := f.idle
		f.mu.Unlock()
		if idle == nil {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("wait for event scripts: %w", ctx.Err())
		}
	}
}

// Kill sends SIGKILL to the process group of every script still running. ES would leave them
// running after it exits; tests and `cabinet simulate` must not leak processes. Scripts that
// moved to a process group of their own are out of reach.
func (f *Firer) Kill() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.running {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (f *Firer) killGroup(s *script) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.running[s]; ok {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}
