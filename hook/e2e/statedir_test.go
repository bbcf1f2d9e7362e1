package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// This file holds what the tests do with a cabinet's state directory
// (<root>/userdata/system/cabinet): the delayed flusher's lock, the spool,
// quarantined stores, and the clean-up.

// waitQuiet waits until no script runs and no delayed flusher of this
// cabinet is alive (running, sleeping until its flush, or waiting for
// another's lock).
func (c *cabinet) waitQuiet() {
	c.t.Helper()
	c.waitScripts()
	cabinettest.Await(c.t, "no delayed flush running", nil, func() (bool, string) {
		pids := c.flushers()
		return len(pids) == 0, fmt.Sprintf("flushers %v alive", pids)
	})
}

// flushers lists the live delayed flushers of this cabinet: processes of
// the binary under test run as `hook --flush-after` (detached by the hooks
// that started them) with a config file under this root.
func (c *cabinet) flushers() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00--flush-after\x00")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte("CABINET_CONFIG="+c.root+"/")) {
			out = append(out, pid)
		}
	}
	return out
}

// spoolFiles lists the events waiting in the spool.
func (c *cabinet) spoolFiles() []string {
	ents, _ := os.ReadDir(filepath.Join(c.state, "spool"))
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".event") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// damaged lists store files Open moved aside.
func (c *cabinet) damaged() []string {
	m, _ := filepath.Glob(filepath.Join(c.state, "cabinet.db.damaged-*"))
	return m
}

// cleanup lets every script finish (killing stragglers), waits for the
// delayed flushers to exit, then removes the tree. On failure it prints
// what the cabinet logged.
func (c *cabinet) cleanup() {
	c.releaseFlushLock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.firer.Wait(ctx); err != nil {
		c.firer.Kill()
	}
	if c.t.Failed() {
		log, _ := os.ReadFile(filepath.Join(c.state, "cabinet.log"))
		c.t.Logf("cabinet.log of %s:\n%s", c.id, tail(log, 60))
		if s := c.esStderr.String(); s != "" {
			c.t.Logf("ES stderr:\n%s", s)
		}
	}
	// A flusher still alive would recreate the tree it flushes into.
	if ok, why := cabinettest.Eventually(cabinettest.Deadline, nil, func() (bool, string) {
		pids := c.flushers()
		return len(pids) == 0, fmt.Sprintf("delayed flushers %v", pids)
	}); !ok {
		c.t.Errorf("%s still alive after %v", why, cabinettest.Deadline)
	}
	if os.Getenv(cabinettest.KeepEnv) != "1" || !c.t.Failed() {
		os.RemoveAll(c.root)
	}
}

func tail(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// holdFlushLock takes flush.lock as a running flusher holds it, until
// releaseFlushLock.
func (c *cabinet) holdFlushLock() {
	c.t.Helper()
	f, err := os.OpenFile(filepath.Join(c.state, "flush.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cabinettest.Await(c.t, "flush.lock", nil, func() (bool, string) {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil, "held by a flusher"
	})
	c.flushLock = f
}

func (c *cabinet) releaseFlushLock() {
	if c.flushLock != nil {
		c.flushLock.Close()
		c.flushLock = nil
	}
}

// lockStore holds the store's lock file as another owner would, until the
// returned func is called.
func (c *cabinet) lockStore() func() {
	c.t.Helper()
	mustMkdir(c.t, c.state)
	f, err := os.OpenFile(filepath.Join(c.state, "cabinet.db.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cabinettest.Await(c.t, "the store lock", nil, func() (bool, string) {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil, "held"
	})
	return func() { f.Close() }
}
