package cabinettest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
)

// The binaries live in one cache directory shared by every test process of
// the machine: `go test ./...` starts a test binary per package, and each
// used to build cmd/cabinet itself (daemon/e2e twice under -race). An entry
// is named by a hash of what goes into the build, so the first process
// that needs it builds it while the others wait on the cache's lock, and
// a later run with the same sources builds nothing.
const cacheName = "cabinet-test-binaries"

// Binary is a built cabinet binary in the cache. The entry stays while
// Binary is open (a shared lock on it, released by Close or when the
// process ends), so another run's clean-up never removes it under a test.
type Binary struct {
	Path string
	use  *os.File
}

// Close releases the entry for clean-up by a later build.
func (b *Binary) Close() error { return b.use.Close() }

// Compile returns cmd/cabinet built from the module's current sources with
// extra go build flags (such as -race): from the cache when a test process
// built the same already, else built now. Entries of other sources that no
// process uses any more are removed.
func Compile(flags ...string) (*Binary, error) {
	root, err := binarytest.ModuleRoot()
	if err != nil {
		return nil, err
	}
	src, err := sourceHash(root)
	if err != nil {
		return nil, fmt.Errorf("hash the sources: %w", err)
	}
	cache := filepath.Join(os.TempDir(), cacheName)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(cache, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close() // releases the cache for the processes waiting
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock the binary cache: %w", err)
	}

	entry := filepath.Join(cache, src[:16]+"-"+buildHash(root, flags)[:8])
	if err := os.MkdirAll(entry, 0o755); err != nil {
		return nil, err
	}
	use, err := os.OpenFile(filepath.Join(entry, "use.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	// Taken before the cache's lock is let go: a clean-up holds that lock
	// while it looks for entries nobody uses.
	if err := syscall.Flock(int(use.Fd()), syscall.LOCK_SH); err != nil {
		use.Close()
		return nil, err
	}
	bin := filepath.Join(entry, "cabinet")
	if _, err := os.Stat(bin); err != nil {
		tmp, err := binarytest.Build(entry, "cabinet.tmp", flags...)
		if err == nil {
			err = os.Rename(tmp, bin)
		}
		if err != nil {
			use.Close()
			return nil, err
		}
	}
	removeStale(cache, src[:16]+"-")
	return &Binary{Path: bin, use: use}, nil
}

// removeStale removes the entries built from other sources that no test
// process holds. Entries of the same sources (other flags) stay: a package
// of this run may not have asked for its copy yet.
func removeStale(cache, keep string) {
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), keep) {
			continue
		}
		dir := filepath.Join(cache, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, "use.lock"), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}

// sourceHash hashes what the binary is built from: every file of the module
// but tests, testdata, Markdown, hidden folders and nested modules (so
// embedded files count, and editing a test rebuilds nothing).
func sourceHash(root string) (string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasSuffix(name, "_test.go") && !strings.HasSuffix(name, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// buildHash hashes how the binary is built: the toolchain, the environment
// the go command reads for a build, the flags and where the sources are
// (file paths end up in the binary).
func buildHash(root string, flags []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%q\x00", runtime.Version(), root, flags)
	for _, k := range []string{"GOFLAGS", "GOOS", "GOARCH", "GOARM", "GOAMD64", "CGO_ENABLED", "GOEXPERIMENT", "CC"} {
		fmt.Fprintf(h, "%s=%s\x00", k, os.Getenv(k))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Lazy is a Compile made on first use, for a package whose tests mostly do
// not run the binary: a cache miss costs a build only when one does.
type Lazy struct {
	Flags []string

	once sync.Once
	bin  *Binary
	err  error
}

// Path builds (or finds) the binary and returns its path; a failed build
// fails t.
func (l *Lazy) Path(t testing.TB) string {
	t.Helper()
	l.once.Do(func() { l.bin, l.err = Compile(l.Flags...) })
	if l.err != nil {
		t.Fatalf("build the cabinet binary: %v", l.err)
	}
	return l.bin.Path
}

// Close releases the binary, if it was built (TestMain, after m.Run).
func (l *Lazy) Close() error {
	if l.bin == nil {
		return nil
	}
	return l.bin.Close()
}
