// Package prism runs Stoplight Prism (@stoplight/prism-cli, pinned in
// .ci/prism) for tests: as a mock server answering from an OpenAPI
// document's examples, and as a validating proxy in front of a real or
// fake server, so that both sides of a conversation are held to the
// document by a validator we did not write. Test code only.
package prism

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/peertest"
)

// PinnedVersion is the prism-cli version .ci/prism/package-lock.json pins.
const PinnedVersion = "5.14.2"

// minNodeMajor is prism-cli 5's engines.node.
const minNodeMajor = 18

var (
	installOnce sync.Once
	installPath string
	installErr  error
)

// Require returns the prism binary, installing the pinned prism-cli with
// `npm ci` on first use (once per machine, under a lock, into $PRISM_HOME,
// else $XDG_CACHE_HOME/cabinet-prism or ~/.cache/cabinet-prism). A missing
// node or npm, or an install that fails, skips t through
// peertest.RequirePeer (a failure under CABINET_REQUIRE_PEERS=1).
func Require(t testing.TB) string {
	t.Helper()
	installOnce.Do(func() { installPath, installErr = install() })
	peertest.RequirePeer(t, installErr)
	return installPath
}

func cacheDir() string {
	if d := os.Getenv("PRISM_HOME"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		base = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(base, "cabinet-prism")
}

func install() (string, error) {
	if err := checkNode(); err != nil {
		return "", err
	}
	root, err := binarytest.ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("prism: find .ci/prism: %w", err)
	}
	src := filepath.Join(root, ".ci", "prism")
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("prism: the pinned lock file is missing: %w", err)
	}
	cache := cacheDir()
	bin := filepath.Join(cache, "node_modules", ".bin", "prism")
	if installed(cache, bin, lock) {
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("prism: create %s: %w", cache, err)
	}
	lf, err := os.OpenFile(filepath.Join(cache, ".install.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("prism: lock %s: %w", cache, err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("prism: lock %s: %w", cache, err)
	}
	if installed(cache, bin, lock) {
		return bin, nil // another test process installed it meanwhile
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("prism: npm is not installed; it installs @stoplight/prism-cli: %w", err)
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", fmt.Errorf("prism: read %s: %w", f, err)
		}
		if err := os.WriteFile(filepath.Join(cache, f), b, 0o644); err != nil {
			return "", fmt.Errorf("prism: write %s: %w", f, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = cache
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("prism: `npm ci` in %s failed (is the npm registry reachable?): %v\n%s", cache, err, tail(out, 10))
	}
	if !installed(cache, bin, lock) {
		return "", fmt.Errorf("prism: npm ci ran, but %s does not report %s", bin, PinnedVersion)
	}
	return bin, nil
}

// installed reports whether the cache holds this lock file's install: its
// copy of the lock is ours (npm ci never rewrites it; a bump reinstalls)
// and the binary runs and reports the pinned version.
func installed(cache, bin string, lock []byte) bool {
	have, err := os.ReadFile(filepath.Join(cache, "package-lock.json"))
	if err != nil || !bytes.Equal(have, lock) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	return err == nil && strings.TrimSpace(string(out)) == PinnedVersion
}

func checkNode() error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("prism: node is not installed; prism-cli needs Node %d+: %w", minNodeMajor, err)
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return fmt.Errorf("prism: node --version: %w", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if err != nil || major < minNodeMajor {
		return fmt.Errorf("prism: node %s is too old; prism-cli needs Node %d+", v, minNodeMajor)
	}
	return nil
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
