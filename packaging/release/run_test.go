package release

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSrc is a module root with the two documents an archive takes.
func fakeSrc(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "batocera.conf.d"), 0o755)
	if err := os.WriteFile(filepath.Join(src, "README.md"), []byte("# Cabinet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "batocera.conf.d", "cabinet.conf"), []byte("cabinet.name=Batocera\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestRun checks a run's files with a build that writes a marker instead of
// compiling.
func TestRun(t *testing.T) {
	src, out := fakeSrc(t), filepath.Join(t.TempDir(), "out")
	var running, most atomic.Int32
	fake := func(ctx context.Context, srcDir string, tg Target, bin string, s Stamp) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return os.WriteFile(bin, []byte("binary for "+tg.Name+" "+s.Version), 0o755)
	}
	stamp := Stamp{Version: "1.2.3", Commit: "abc"}
	when := time.Unix(1700000000, 0)
	arts, err := Run(context.Background(), Options{SrcDir: src, OutDir: out, Stamp: stamp, MTime: when, Jobs: 2, Build: fake})
	if err != nil {
		t.Fatal(err)
	}
	if most.Load() > 2 {
		t.Errorf("%d builds ran at once, want at most Jobs=2", most.Load())
	}
	if len(arts) != len(Targets()) {
		t.Fatalf("%d artifacts, want %d", len(arts), len(Targets()))
	}
	sums := filepath.Join(out, SumsFile)
	for i, a := range arts {
		tg := Targets()[i]
		if a.Target != tg || filepath.Base(a.Binary) != tg.BinaryName() || filepath.Base(a.Archive) != tg.ArchiveName("1.2.3") {
			t.Errorf("artifact %d = %+v, want %s's, in target order", i, a, tg.Name)
		}
		for _, f := range []struct {
			path string
			size int64
		}{{a.Binary, a.BinaryBytes}, {a.Archive, a.ArchiveBytes}} {
			if fi, err := os.Stat(f.path); err != nil || fi.Size() != f.size || f.size == 0 {
				t.Errorf("%s: %v, size %d listed", f.path, err, f.size)
			}
			if err := VerifyChecksum(sums, f.path); err != nil {
				t.Error(err)
			}
		}
		data, _ := os.ReadFile(a.Archive)
		es := readArchive(t, data)
		if len(es) != 3 || es[1].name != "cabinet" || es[1].body != "binary for "+tg.Name+" 1.2.3" || es[1].mode != 0o755 ||
			es[0].name != "README.md" || es[2].name != "cabinet.conf" || es[2].body != "cabinet.name=Batocera\n" || !es[0].mtime.Equal(when) {
			t.Errorf("%s holds %+v", filepath.Base(a.Archive), es)
		}
	}
	text, _ := os.ReadFile(sums)
	if n := strings.Count(string(text), "\n"); n != 2*len(Targets()) {
		t.Errorf("SHA256SUMS has %d lines, want %d", n, 2*len(Targets()))
	}

	var table bytes.Buffer
	if err := WriteSizes(&table, arts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "riscv64") || !strings.Contains(table.String(), "archive bytes") {
		t.Errorf("size table:\n%s", table.String())
	}
}

func TestRunFails(t *testing.T) {
	src := fakeSrc(t)
	broken := errors.New("compiler on fire")
	fail := func(ctx context.Context, srcDir string, tg Target, bin string, s Stamp) error {
		if tg.Name == "armv6" {
			return broken
		}
		return os.WriteFile(bin, []byte("ok"), 0o755)
	}
	out := t.TempDir()
	_, err := Run(context.Background(), Options{SrcDir: src, OutDir: out, Stamp: Stamp{Version: "1", Commit: "c"}, Build: fail})
	if !errors.Is(err, broken) {
		t.Errorf("Run with a failing build: %v, want its error", err)
	}
	if _, err := os.Stat(filepath.Join(out, SumsFile)); !os.IsNotExist(err) {
		t.Errorf("a failed run wrote SHA256SUMS: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{SrcDir: src, OutDir: t.TempDir(), Stamp: Stamp{Version: "1", Commit: "c"}, Build: fail}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel: %v, want context.Canceled", err)
	}
	if _, err := Run(context.Background(), Options{OutDir: t.TempDir(), Targets: []Target{}}); err == nil {
		t.Error("Run with no targets: no error")
	}
}
