package realdropbear

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// snapshot lists dir with every file's mode and SHA-256 ("absent" when
// dir does not exist), to see that nothing under it changed.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", p, info.Mode())
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ssh runs a command on s and returns its output and error.
func ssh(t *testing.T, s *Server, command string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	args := append(s.SSHCommand()[1:], "-o", "BatchMode=yes", s.Host(), command)
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestServer(t *testing.T) {
	before := snapshot(t, "/root/.ssh")
	t.Run("key accepted", func(t *testing.T) {
		s := Start(t, Options{})
		out, err := ssh(t, s, "uname -m; cat /root/.ssh/authorized_keys")
		if err != nil {
			t.Fatalf("ssh: %v: %s", err, out)
		}
		pub, err := os.ReadFile(s.clientKey + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, strings.TrimSpace(string(pub))) {
			t.Errorf("the server's authorized_keys is not the test's key:\n%s", out)
		}
		// The namespace's /root is not the machine's.
		if got := snapshot(t, "/root/.ssh"); got != before {
			t.Errorf("the real /root/.ssh changed while the server ran:\nbefore:\n%s\nnow:\n%s", before, got)
		}
	})
	t.Run("key refused", func(t *testing.T) {
		s := Start(t, Options{RefuseKey: true})
		out, err := ssh(t, s, "true")
		if err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("got %v, %q; want Permission denied", err, out)
		}
	})
	t.Run("unknown host key", func(t *testing.T) {
		s := Start(t, Options{UnknownHostKey: true})
		out, err := ssh(t, s, "true")
		if err == nil || !strings.Contains(out, "Host key verification failed") {
			t.Errorf("got %v, %q; want Host key verification failed", err, out)
		}
	})
	if got := snapshot(t, "/root/.ssh"); got != before {
		t.Errorf("the real /root/.ssh changed:\nbefore:\n%s\nafter:\n%s", before, got)
	}
}

// TestStopEndsNamespace checks that no process of the server's namespace
// outlives the test, a session included.
func TestStopEndsNamespace(t *testing.T) {
	var ns string
	t.Run("server", func(t *testing.T) {
		s := Start(t, Options{})
		var err error
		if ns, err = os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", s.cmd.Process.Pid)); err != nil {
			t.Fatal(err)
		}
		// A session that would outlive its client.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		args := append(s.SSHCommand()[1:], "-o", "BatchMode=yes", "-f", s.Host(), "sleep 300 </dev/null >/dev/null 2>&1 &")
		if out, err := exec.CommandContext(ctx, "ssh", args...).CombinedOutput(); err != nil {
			t.Fatalf("ssh: %v: %s", err, out)
		}
		// Dropbear plus the sleep, at least.
		cabinettest.Await(t, "the session's sleep to run in the namespace", nil, func() bool { return len(namespaceMembers(ns)) >= 2 })
	})
	if left := namespaceMembers(ns); len(left) > 0 {
		t.Errorf("processes %v of the server's namespace are still running", left)
	}
}
