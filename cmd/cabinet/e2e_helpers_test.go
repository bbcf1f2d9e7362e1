package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/peertest"
)

// The end-to-end tests (e2e_*_test.go) run the built binary as a user or an
// MCP client would: as a subprocess, configured only by CABINET_CONFIG.

// builtCabinet is the binary the end-to-end tests share: built once, on
// first use, and removed by TestMain.
var builtCabinet struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtCabinet.dir != "" {
		os.RemoveAll(builtCabinet.dir)
	}
	os.Exit(code)
}

// cabinetBinary builds ./cmd/cabinet once and returns its path.
func cabinetBinary(t *testing.T) string {
	t.Helper()
	b := &builtCabinet
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "cabinet-cmd-e2e-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "cabinet")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", b.path, ".").CombinedOutput(); err != nil {
			b.err = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if b.err != nil {
		t.Fatalf("build the cabinet binary: %v", b.err)
	}
	return b.path
}

// simCabinet starts the simulator in-process and writes a cabinet.conf that
// points every command at it.
func simCabinet(t *testing.T, opts simulator.Options) (*simulator.Cabinet, string) {
	t.Helper()
	cab, err := simulator.Start(opts)
	if err != nil {
		t.Fatalf("start the simulator: %v", err)
	}
	t.Cleanup(func() { cab.Close() })
	conf, err := cab.WriteConfig(t.TempDir())
	if err != nil {
		t.Fatalf("write the simulator's config: %v", err)
	}
	return cab, conf
}

// configEnv is the environment of a command run against conf: this
// process's, without the CABINET_* and MCPCHECK_TOKEN variables that would
// change what the test sees.
func configEnv(conf string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CABINET_") && !strings.HasPrefix(kv, "CABINET_REQUIRE_PEERS=") ||
			strings.HasPrefix(kv, "MCPCHECK_TOKEN=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CABINET_CONFIG="+conf)
}

// runBinary runs the binary to completion under a deadline and returns its
// exit code and output.
func runBinary(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cabinetBinary(t), args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("cabinet %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopProcess sends sig and waits for the process to end, killing it if it
// has not within the deadline; it returns Wait's error.
func stopProcess(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, done <-chan error) error {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signal %v: %v", sig, err)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("%s did not stop within 15 s of %v", cmd.Path, sig)
		return errors.New("killed")
	}
}

// lineWaiter reads r line by line into a log, and tells the first line
// that contains want.
type lineWaiter struct {
	mu    sync.Mutex
	log   bytes.Buffer
	found chan string
	eof   chan struct{} // closed when r ends: only then may exec.Cmd.Wait close it
}

func watchLines(r io.Reader, want string) *lineWaiter {
	w := &lineWaiter{found: make(chan string, 1), eof: make(chan struct{})}
	go func() {
		defer close(w.eof)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			w.mu.Lock()
			w.log.WriteString(line + "\n")
			w.mu.Unlock()
			if strings.Contains(line, want) {
				select {
				case w.found <- line:
				default:
				}
			}
		}
	}()
	return w
}

// wait returns the first matching line, or fails after the deadline.
func (w *lineWaiter) wait(t *testing.T, what string) string {
	t.Helper()
	select {
	case line := <-w.found:
		return line
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s; output so far:\n%s", what, w.String())
		return ""
	}
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.String()
}

// closedAddr is a loopback address where nothing listens any more.
func closedAddr(t *testing.T, network string) string {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// mcpcheckScript is the independent client on the official TypeScript SDK,
// kept in the repository for CI (.ci/mcpcheck/README.md).
const mcpcheckScript = "../../.ci/mcpcheck/mcpcheck"

// mcpcheckReady installs the SDK once (mcpcheck's first run does `npm ci`
// into its cache) so parallel tests do not race to install it.
var mcpcheckReady struct {
	once        sync.Once
	path, cache string // the script; its cache, holding node_modules
	err         error
}

// mcpcheck returns the script's path, or skips the test (fails it with
// CABINET_REQUIRE_PEERS=1) when node, npm or the SDK install is missing.
func mcpcheck(t *testing.T) string {
	t.Helper()
	m := &mcpcheckReady
	m.once.Do(func() {
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				m.err = fmt.Errorf("%s is not installed; mcpcheck needs Node 18+ and npm", tool)
				return
			}
		}
		if m.path, m.err = filepath.Abs(mcpcheckScript); m.err != nil {
			return
		}
		// --help exits 1 after the install; the help text proves node runs the SDK client.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, _ := exec.CommandContext(ctx, m.path, "--help").CombinedOutput()
		if !bytes.Contains(out, []byte("--stdio")) {
			// mcpcheck silences npm; say where to look.
			m.err = fmt.Errorf("mcpcheck could not install @modelcontextprotocol/sdk from npm (is the registry reachable? "+
				"run `npm ci` in $MCPCHECK_HOME or ~/.cache/mcpcheck to see why) %s", lastLines(string(out), 5))
			return
		}
		// Where the script installed the SDK (its own rule).
		m.cache = os.Getenv("MCPCHECK_HOME")
		if m.cache == "" {
			base := os.Getenv("XDG_CACHE_HOME")
			if base == "" {
				base = filepath.Join(os.Getenv("HOME"), ".cache")
			}
			m.cache = filepath.Join(base, "mcpcheck")
		}
		if _, err := os.Stat(filepath.Join(m.cache, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
			m.err = fmt.Errorf("mcpcheck ran, but its SDK is not where expected: %w", err)
		}
	})
	peertest.RequirePeer(t, m.err)
	return m.path
}

// mcpcheckEnv gives t its own MCPCHECK_HOME sharing the installed
// node_modules: every run copies mcpcheck.mjs into its home, and a copy
// being rewritten while a parallel test's node reads it would be a flake.
func mcpcheckEnv(t *testing.T, env []string) []string {
	t.Helper()
	mcpcheck(t)
	home := t.TempDir()
	if err := os.Symlink(filepath.Join(mcpcheckReady.cache, "node_modules"), filepath.Join(home, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return append(env, "MCPCHECK_HOME="+home)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
