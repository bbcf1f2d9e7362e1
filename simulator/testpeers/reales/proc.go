package reales

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// takeLock waits for the machine's real-ES flock (another test process's
// ES must finish first), bounded by lockWait.
func (e *ES) takeLock() {
	e.t.Helper()
	p := filepath.Join(os.TempDir(), lockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		e.t.Fatalf("reales: open %s: %v", p, err)
	}
	deadline := time.Now().Add(lockWait)
	logged := false
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			f.Close()
			e.t.Fatalf("reales: another real EmulationStation held %s for %v", p, lockWait)
		}
		if !logged {
			e.t.Logf("reales: waiting for another test's real EmulationStation (%s)", p)
			logged = true
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := io.ReadAll(f)
	e.prev = string(b)
	f.Truncate(0)
	f.Seek(0, io.SeekStart)
	e.lock = f
}

// previousHint names the process group of the last ES started under the
// lock, which may be what still holds the port.
func (e *ES) previousHint() string {
	for _, l := range strings.Split(e.prev, "\n") {
		if g, ok := strings.CutPrefix(l, "process group "); ok {
			if _, err := strconv.Atoi(g); err == nil {
				return fmt.Sprintf(" (the last real ES started by a test was process group %s: kill -- -%s if it is left over)", g, g)
			}
		}
	}
	return ""
}

// waitExit closes exited once process pid has exited, leaving it
// unreaped (WNOWAIT), so its pid, the group's id, is not reused meanwhile.
func waitExit(pid int, exited chan struct{}) {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	close(exited)
}

// killExe SIGKILLs the members of process group pgid whose executable is
// exe. Each is checked again through its pidfd, so a pid reused since the
// scan is left alone.
func killExe(pgid int, exe string) { signalExe(pgid, exe, syscall.SIGKILL) }

// signalExe sends sig to the members of process group pgid whose
// executable is exe, checking each again as killExe does.
func signalExe(pgid int, exe string, sig syscall.Signal) {
	for _, pid := range groupMembers(pgid, exe) {
		p, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		if slices.Contains(groupMembers(pgid, exe), pid) {
			p.Signal(sig)
		}
		p.Release()
	}
}

// groupMembers are the live (not zombie) pids of process group pgid whose
// executable is exe ("": any).
func groupMembers(pgid int, exe string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …: comm may hold spaces, so cut at the last ')'.
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) || f[0] == "Z" {
			continue
		}
		if exe == "" {
			out = append(out, pid)
		} else if p, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe")); err == nil && p == exe {
			out = append(out, pid)
		}
	}
	return out
}
