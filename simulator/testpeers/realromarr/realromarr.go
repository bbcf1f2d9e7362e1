// Package realromarr starts the real ROMarr (peers/romarr: upstream BlizzHacker/romarr, Python)
// for a test through peers/romarr/start-romarr.sh: bound to 127.0.0.1 on a free port, with a
// throwaway data directory, every scheduled job off, and a Python audit hook that records every
// socket ROMarr binds, connects or resolves, so a test can check it stayed on loopback. The
// whole process group is killed when the test ends. Test code only.
package realromarr

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// DirEnv overrides where peers/romarr is (the folder holding start-romarr.sh).
const DirEnv = "CABINET_REAL_ROMARR"

// python is the interpreter start-romarr.sh runs; it needs Debian's python3-requests.
const python = "/usr/bin/python3"

// Options choose how ROMarr starts.
type Options struct {
	APIKey string // ROMARR_API_KEY; empty: a random one
	// RommURL and RommToken become ROMM_URL and ROMM_API_TOKEN, so ROMarr uses that RomM (a fake
	// one on loopback) as its library.
	RommURL, RommToken string
	// Env adds variables (KEY=VALUE), such as LIBRARY_KIND=folder. Nothing else of the test
	// process's environment reaches ROMarr, so a developer's PROWLARR_URL cannot leak in.
	Env []string
}

// Server is a running ROMarr.
type Server struct {
	url, key, dir, netlog string
	pid, pgid             int
	pidfd                 int // -1 once stopped
}

// startTimeout bounds start-romarr.sh (it waits up to 10 s for /api/health itself).
const startTimeout = 20 * time.Second

// Dir is peers/romarr: $CABINET_REAL_ROMARR, else ../shared/peers/romarr beside the module.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	root, err := binarytest.ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "..", "shared", "peers", "romarr"), nil
}

// Available says why the real ROMarr cannot run here, or nil.
func Available() error {
	dir, err := Dir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "start-romarr.sh")); err != nil {
		return fmt.Errorf("no ROMarr peer at %s (set %s to the folder holding start-romarr.sh): %w", dir, DirEnv, err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		return errors.New("curl is not installed (start-romarr.sh waits with it; Debian: apt-get install curl)")
	}
	// Generous: Python's start is a second on a quiet machine and far more
	// while CI runs every package at once; the bound is for a hung one.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, python, "-c", "import requests").CombinedOutput(); err != nil {
		return fmt.Errorf("%s cannot import requests (Debian: apt-get install python3 python3-requests): %v: %s", python, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Start starts ROMarr for t and kills its process group when t ends; a missing peer goes through
// peertest.RequirePeer, a failed start fails t.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	peertest.RequirePeer(t, Available())
	dir, _ := Dir()
	s := &Server{dir: t.TempDir(), key: opts.APIKey, pidfd: -1}
	if s.key == "" {
		s.key = randomKey()
	}
	hooks := t.TempDir()
	if err := os.WriteFile(filepath.Join(hooks, "sitecustomize.py"), []byte(auditHook), 0o644); err != nil {
		t.Fatal(err)
	}
	s.netlog = filepath.Join(hooks, "net.jsonl")
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + s.dir, "LANG=C.UTF-8",
		"PYTHONPATH=" + hooks, "CABINET_NETLOG=" + s.netlog,
	}
	if opts.RommURL != "" {
		env = append(env, "ROMM_URL="+opts.RommURL, "ROMM_API_TOKEN="+opts.RommToken)
	}
	env = append(env, opts.Env...)
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("ROMarr log (%s):\n%s", s.dir, tail(s.Log(), 4000))
		}
	})
	began := time.Now()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = s.start(dir, env); !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start real ROMarr: %v\nlog:\n%s", err, tail(s.Log(), 4000))
	}
	t.Logf("real ROMarr answering on %s after %v", s.url, time.Since(began).Round(time.Millisecond))
	return s
}

var errPortTaken = errors.New("port taken")

func (s *Server) start(peerDir string, env []string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	os.Remove(filepath.Join(s.dir, "server.log"))
	cmd := exec.CommandContext(ctx, "/bin/sh", filepath.Join(peerDir, "start-romarr.sh"), strconv.Itoa(port), s.dir, s.key)
	cmd.Env = env
	// Its own group: the script backgrounds python in it and exits, and Stop kills the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(s.Log(), "Address already in use") {
			return errPortTaken
		}
		return fmt.Errorf("start-romarr.sh: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	s.pgid = cmd.Process.Pid
	fields := strings.Fields(stdout.String())
	if len(fields) == 0 {
		return fmt.Errorf("start-romarr.sh printed no pid: %s", strings.TrimSpace(stderr.String()))
	}
	if s.pid, err = strconv.Atoi(fields[len(fields)-1]); err != nil {
		return fmt.Errorf("start-romarr.sh printed %q, not a pid", fields[len(fields)-1])
	}
	if s.pidfd, err = unix.PidfdOpen(s.pid, 0); err != nil {
		s.pidfd = -1
		if strings.Contains(s.Log(), "Address already in use") {
			return errPortTaken
		}
		return fmt.Errorf("ROMarr (pid %d) is gone right after starting: %w", s.pid, err)
	}
	if g, err := syscall.Getpgid(s.pid); err != nil || g != s.pgid {
		unix.PidfdSendSignal(s.pidfd, unix.SIGKILL, nil, 0)
		unix.Close(s.pidfd)
		s.pidfd = -1
		return fmt.Errorf("pid %d is not in start-romarr.sh's process group %d (%d, %v)", s.pid, s.pgid, g, err)
	}
	// The script's curl is answered by whatever holds the port (another test's ROMarr, given the
	// same free port, while this one still imports), so wait for this ROMarr's own word.
	if err := s.waitListening(ctx, port); err != nil {
		s.Stop()
		return err
	}
	s.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	return s.waitHealthy(ctx)
}

// waitListening waits until ROMarr logs that it listens on port, or exits.
func (s *Server) waitListening(ctx context.Context, port int) error {
	line := fmt.Sprintf("listening on http://127.0.0.1:%d", port)
	for {
		if strings.Contains(s.Log(), line) {
			return nil
		}
		if exited(s.pidfd, 20*time.Millisecond) {
			if strings.Contains(s.Log(), "Address already in use") {
				return errPortTaken
			}
			if strings.Contains(s.Log(), line) {
				return fmt.Errorf("ROMarr exited right after it started listening")
			}
			return errors.New("ROMarr exited before it listened")
		}
		if ctx.Err() != nil {
			return fmt.Errorf("ROMarr did not say it listens on port %d: %w", port, ctx.Err())
		}
	}
}

// waitHealthy asks /api/health with the key until it answers 200 (start-romarr.sh asked without).
func (s *Server) waitHealthy(ctx context.Context) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/api/health", nil)
		req.Header.Set("X-Api-Key", s.key)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ROMarr at %s did not answer /api/health: %v", s.url, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop kills ROMarr's process group (SIGTERM, then SIGKILL) and waits for ROMarr to exit. It is
// idempotent; Start's cleanup calls it.
func (s *Server) Stop() {
	if s.pidfd < 0 {
		return
	}
	defer func() { unix.Close(s.pidfd); s.pidfd = -1 }()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		// The group outlives its leader (the script); its id stays ours while ROMarr, held by
		// the pidfd, is in it.
		syscall.Kill(-s.pgid, sig)
		if exited(s.pidfd, 5*time.Second) {
			return
		}
	}
}

// exited waits until the process behind pidfd has exited, at most d.
func exited(pidfd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

// URL is ROMarr's base address, http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// APIKey is the key ROMarr was started with.
func (s *Server) APIKey() string { return s.key }

// DataDir is ROMarr's data directory: romarr.json (its state), server.log, roms/ (LIBRARY_PATH
// unless Options.Env sets another).
func (s *Server) DataDir() string { return s.dir }

// Log is ROMarr's output so far (its log lines, at INFO).
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return string(b)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randomKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
