package cabinettest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// MCPCheck is the independent MCP client on the official TypeScript SDK,
// kept in the repository for CI (.ci/mcpcheck/README.md), set up for one
// test.
type MCPCheck struct {
	// Path is the script.
	Path string
	// home is the test's own MCPCHECK_HOME: every run copies mcpcheck.mjs
	// into its home, and a copy rewritten while a parallel test's node
	// reads it would be a flake. It shares the installed node_modules.
	home string
}

// MCPReport is the part of mcpcheck's JSON document the tests read.
type MCPReport struct {
	OK              bool     `json:"ok"`
	ProtocolVersion string   `json:"protocolVersion"`
	Warnings        []string `json:"warnings"`
	Tools           []struct {
		Name            string         `json:"name"`
		Title           string         `json:"title"`
		Annotations     map[string]any `json:"annotations"`
		HasOutputSchema bool           `json:"hasOutputSchema"`
	} `json:"tools"`
	Call *struct {
		IsError bool `json:"isError"`
		// Progress are the notifications/progress received (with --progress).
		Progress []map[string]any `json:"progress"`
		// Logs are the params of the notifications/message received (the
		// client sets the level with --log-level).
		Logs   []map[string]any `json:"logs"`
		Result struct {
			Content           []map[string]any `json:"content"`
			StructuredContent map[string]any   `json:"structuredContent"`
		} `json:"result"`
	} `json:"call"`
	Error *struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// NewMCPCheck finds the script and makes sure node and the SDK are there,
// installing the SDK once (mcpcheck's first run does `npm ci` into its
// cache) under a lock so that parallel test processes do not race to
// install it. A missing node, npm or SDK skips t, or fails it with
// CABINET_REQUIRE_PEERS=1: call it before starting anything.
func NewMCPCheck(t testing.TB) *MCPCheck {
	t.Helper()
	path, cache, err := installMCPCheck()
	peertest.RequirePeer(t, err)
	home := t.TempDir()
	if err := os.Symlink(filepath.Join(cache, "node_modules"), filepath.Join(home, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return &MCPCheck{Path: path, home: home}
}

// Command is mcpcheck with args, env (nil: this process's environment)
// plus the test's MCPCHECK_HOME.
func (m *MCPCheck) Command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.CommandContext(ctx, m.Path, args...)
	cmd.Env = append(append([]string(nil), env...), "MCPCHECK_HOME="+m.home)
	return cmd
}

// Run runs mcpcheck with args for at most d and returns its stdout (the
// JSON document), its stderr (its diagnostics and a stdio server's) and its
// exit code. A run that cannot start or hangs fails t.
func (m *MCPCheck) Run(t testing.TB, d time.Duration, env []string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := m.Command(ctx, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || ctx.Err() != nil {
			t.Fatalf("mcpcheck %v: %v\nstderr: %s", args, err, errb.String())
		}
		code = exit.ExitCode()
	}
	return out.Bytes(), errb.Bytes(), code
}

// Report runs mcpcheck like Run and parses the one JSON document it prints;
// output that is not one fails t.
func (m *MCPCheck) Report(t testing.TB, d time.Duration, env []string, args ...string) (rep MCPReport, code int, stderr string) {
	t.Helper()
	out, errb, code := m.Run(t, d, env, args...)
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("mcpcheck %v: exit %d, output is not its JSON report (%v)\nstdout: %s\nstderr: %s", args, code, err, out, errb)
	}
	return rep, code, string(errb)
}

// installMCPCheck returns the script and the cache holding the SDK,
// installing it first if it is not there.
func installMCPCheck() (path, cache string, err error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "", fmt.Errorf("node is not installed; mcpcheck needs Node 18+: %w", err)
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(root, ".ci", "mcpcheck", "mcpcheck")
	if _, err := os.Stat(path); err != nil {
		return "", "", fmt.Errorf("mcpcheck not found: %w", err)
	}
	// Where the script installs the SDK (its own rule).
	cache = os.Getenv("MCPCHECK_HOME")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			base = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "mcpcheck")
	}
	sdk := filepath.Join(cache, "node_modules", "@modelcontextprotocol", "sdk")
	if _, err := os.Stat(sdk); err == nil {
		return path, cache, nil
	}
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "cabinet-mcpcheck-install.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", "", err
	}
	if _, err := os.Stat(sdk); err == nil {
		return path, cache, nil // another process installed it meanwhile
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", "", fmt.Errorf("npm is not installed; mcpcheck needs it to install the SDK: %w", err)
	}
	// --help exits 1 after the install; the help text proves node runs the SDK client.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, path, "--help").CombinedOutput()
	if !bytes.Contains(out, []byte("--stdio")) {
		// mcpcheck silences npm; say where to look.
		return "", "", fmt.Errorf("mcpcheck could not install @modelcontextprotocol/sdk from npm (is the registry reachable? "+
			"run `npm ci` in $MCPCHECK_HOME or ~/.cache/mcpcheck to see why) %s", lastLines(string(out), 5))
	}
	if _, err := os.Stat(sdk); err != nil {
		return "", "", fmt.Errorf("mcpcheck ran, but its SDK is not where expected: %w", err)
	}
	return path, cache, nil
}

// lastLines is the end of s, for messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
