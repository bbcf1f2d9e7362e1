package batocera

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// Tool names, as Batocera installs them in /usr/bin.
const (
	GetName = "batocera-settings-get"
	SetName = "batocera-settings-set"
)

// compileTimeout bounds one compilation of the two tools.
const compileTimeout = 60 * time.Second

// The sources of each tool in peers/mini_settings.
var (
	getSources = []string{"mini_settings_get_main.c", "mini_settings_get.c", "mini_settings_read_file.c"}
	setSources = []string{"mini_settings_set_main.c", "mini_settings_set.c", "mini_settings_read_file.c", "mini_settings_stringbuf.c"}
)

// Tools are the real batocera-settings-get and -set, built from
// peers/mini_settings without a default file: without -f they read stdin
// (and set writes stdout), so a test that forgets -f cannot touch the
// machine's /userdata.
type Tools struct {
	Get, Set string // paths of the executables
}

// toolCache is the one build of Tools a test process makes. It is process
// state on purpose: every test of a package wants the same two binaries,
// and they only change with the pinned sources.
var toolCache struct {
	once  sync.Once
	tools Tools
	err   error
}

// Build returns the real tools, compiled on the first call of the process
// into a cache under os.TempDir() named by a hash of the sources and the
// compiler (so a later run with the same sources compiles nothing). A
// missing compiler or peers folder goes through peertest.RequirePeer; a
// failed compilation fails t.
func Build(t testing.TB) Tools {
	t.Helper()
	_, err := PeersDir()
	peertest.RequirePeer(t, err)
	_, err = exec.LookPath("cc")
	peertest.RequirePeer(t, err)
	tools, err := BuildTools()
	if err != nil {
		t.Fatalf("build batocera-settings-get/-set: %v", err)
	}
	return tools
}

// BuildTools is Build for a caller that goes on without the tools (a fuzz
// target checking invariants instead): the error says what is missing.
func BuildTools() (Tools, error) {
	toolCache.once.Do(func() {
		dir, err := PeersDir()
		if err != nil {
			toolCache.err = err
			return
		}
		toolCache.tools, toolCache.err = cached(dir)
	})
	return toolCache.tools, toolCache.err
}

func cached(peers string) (Tools, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return Tools{}, fmt.Errorf("no C compiler to build batocera-settings-get/-set: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", cc)
	for _, src := range append(append([]string(nil), getSources...), setSources...) {
		b, err := os.ReadFile(filepath.Join(peers, "mini_settings", src))
		if err != nil {
			return Tools{}, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", src, len(b))
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), "cabinet-test-mini-settings", hex.EncodeToString(h.Sum(nil))[:16])
	tools := Tools{Get: filepath.Join(dir, GetName), Set: filepath.Join(dir, SetName)}
	if _, err := os.Stat(tools.Set); err == nil {
		if _, err := os.Stat(tools.Get); err == nil {
			return tools, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Tools{}, err
	}
	// Built beside the entry and renamed into it, so a process running
	// the same build at the same time never sees half a binary.
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return Tools{}, err
	}
	defer os.RemoveAll(tmp)
	built, err := compile(peers, tmp, "")
	if err != nil {
		return Tools{}, err
	}
	if err := os.Rename(built.Get, tools.Get); err != nil {
		return Tools{}, err
	}
	if err := os.Rename(built.Set, tools.Set); err != nil {
		return Tools{}, err
	}
	return tools, nil
}

// compile builds both tools into dir, in parallel. defaultPath is the file
// they use without -f (DEFAULT_CONFIG_PATH, which Batocera's build sets to
// /userdata/system/batocera.conf); empty leaves mini_settings' default,
// stdin and stdout. defaultPath must not contain '"' or '\\'.
func compile(peers, dir, defaultPath string) (Tools, error) {
	if strings.ContainsAny(defaultPath, "\"\\") {
		return Tools{}, fmt.Errorf("default config path %q has a quote or backslash", defaultPath)
	}
	ctx, cancel := context.WithTimeout(context.Background(), compileTimeout)
	defer cancel()
	tools := Tools{Get: filepath.Join(dir, GetName), Set: filepath.Join(dir, SetName)}
	errs := make(chan error, 2)
	for out, srcs := range map[string][]string{tools.Get: getSources, tools.Set: setSources} {
		go func() {
			args := []string{"-O2", "-o", out}
			if defaultPath != "" {
				args = append(args, `-DDEFAULT_CONFIG_PATH="`+defaultPath+`"`)
			}
			for _, s := range srcs {
				args = append(args, filepath.Join(peers, "mini_settings", s))
			}
			b, err := exec.CommandContext(ctx, "cc", args...).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("cc %s: %v: %s", filepath.Base(out), err, b)
			}
			errs <- err
		}()
	}
	return tools, errors.Join(<-errs, <-errs)
}

// PeersDir is the shared peers folder, ../shared/peers from the module
// root, or an error saying where it was looked for.
func PeersDir() (string, error) {
	root, err := binarytest.ModuleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "peers")
	for _, p := range []string{"mini_settings/mini_settings_set.c", "batocera/batocera-services", "batocera/S99userservices"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return "", fmt.Errorf("real Batocera tools not found (%v): the peers folder belongs at %s", err, dir)
		}
	}
	return dir, nil
}

// GetFile runs the real batocera-settings-get -f file key: the value and
// true, or "" and false when the tool exits non-zero (key absent, or the
// file missing).
func (tl Tools) GetFile(t testing.TB, file, key string) (string, bool) {
	t.Helper()
	r := run(t, runSpec{timeout: DefaultTimeout}, tl.Get, "-f", file, "--", key)
	if r.ExitCode != 0 {
		return "", false
	}
	return strings.TrimSuffix(r.Stdout, "\n"), true
}

// SetFile runs the real batocera-settings-set -f file key value...; it
// fails t when the tool fails.
func (tl Tools) SetFile(t testing.TB, file string, kv ...string) {
	t.Helper()
	if len(kv)%2 != 0 {
		t.Fatalf("SetFile: odd number of key/value arguments %q", kv)
	}
	r := run(t, runSpec{timeout: DefaultTimeout}, tl.Set, append([]string{"-f", file, "--"}, kv...)...)
	if r.ExitCode != 0 {
		t.Fatalf("batocera-settings-set %q: exit %d: %s", kv, r.ExitCode, r.Stderr)
	}
}
