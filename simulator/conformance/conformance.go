// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in .ci/conformance) against a
// server, for tests: it installs the pinned suite with `npm ci` on first use
// and reads back each scenario's checks. Test code only.
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/peertest"
)

// PinnedVersion is the suite version .ci/conformance pins: the newest that
// runs on Node 20 (0.1.14 and later need Node 22).
const PinnedVersion = "0.1.13"

var (
	installOnce sync.Once
	installPath string
	installErr  error
)

// Require returns the suite's command, installing the pinned version on
// first use (once per machine, under a lock, into $CONFORMANCE_HOME, else
// $XDG_CACHE_HOME/cabinet-conformance or ~/.cache/cabinet-conformance). A
// missing node or npm, or a failed install, skips t through
// peertest.RequirePeer (a failure under CABINET_REQUIRE_PEERS=1).
func Require(t testing.TB) string {
	t.Helper()
	installOnce.Do(func() { installPath, installErr = install() })
	peertest.RequirePeer(t, installErr)
	return installPath
}

func cacheDir() string {
	if d := os.Getenv("CONFORMANCE_HOME"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		base = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(base, "cabinet-conformance")
}

func install() (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("conformance: node is not installed (the suite is a Node program): %w", err)
	}
	root, err := binarytest.ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("conformance: find .ci/conformance: %w", err)
	}
	src := filepath.Join(root, ".ci", "conformance")
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("conformance: the pinned lock file is missing: %w", err)
	}
	cache := cacheDir()
	bin := filepath.Join(cache, "node_modules", ".bin", "conformance")
	if installed(cache, bin, lock) {
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("conformance: create %s: %w", cache, err)
	}
	lf, err := os.OpenFile(filepath.Join(cache, ".install.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("conformance: lock %s: %w", cache, err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("conformance: lock %s: %w", cache, err)
	}
	if installed(cache, bin, lock) {
		return bin, nil
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", fmt.Errorf("conformance: read %s: %w", f, err)
		}
		if err := os.WriteFile(filepath.Join(cache, f), b, 0o644); err != nil {
			return "", fmt.Errorf("conformance: write %s: %w", f, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = cache
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("conformance: `npm ci` in %s failed (is the npm registry reachable?): %v\n%s", cache, err, out)
	}
	if !installed(cache, bin, lock) {
		return "", fmt.Errorf("conformance: npm ci ran, but %s does not report %s", bin, PinnedVersion)
	}
	return bin, nil
}

// installed: the cache holds this lock file's install and the command
// reports the pinned version.
func installed(cache, bin string, lock []byte) bool {
	have, err := os.ReadFile(filepath.Join(cache, "package-lock.json"))
	if err != nil || !bytes.Equal(have, lock) {
		return false
	}
	out, err := exec.Command(bin, "--version").Output()
	return err == nil && strings.TrimSpace(string(out)) == PinnedVersion
}

// Check is one check of a scenario's result.
type Check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// Run runs one server scenario against url and returns its checks and the
// suite's output (for failure messages).
func Run(t testing.TB, bin, url, scenario string) ([]Check, string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "server", "--url", url, "--scenario", scenario, "-o", dir)
	out, _ := cmd.CombinedOutput() // a failed scenario exits non-zero: the checks say why
	var checks []Check
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) != "checks.json" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var cs []Check
		if json.Unmarshal(b, &cs) == nil {
			checks = append(checks, cs...)
		}
		return nil
	})
	return checks, string(out)
}

// Pending runs the suite's pending server scenarios against url with
// baseline as the expected failures: nil when every failure is expected and
// no entry is stale.
func Pending(t testing.TB, bin, url, baseline string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "server", "--url", url, "--suite", "pending", "--expected-failures", baseline, "-o", t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}
