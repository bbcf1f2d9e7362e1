package install

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// Helpers of the fault tests (faults_test.go); the rig itself is install_test.go's.

// romBytes are n bytes that look like a ROM's (no run a zip would shrink), the same for a label.
func romBytes(label string, n int) []byte {
	var seed [32]byte
	copy(seed[:], label)
	b := make([]byte, n)
	rand.NewChaCha8(seed).Read(b)
	return b
}

// addROM adds spec to the rig's fake RomM.
func addROM(t *testing.T, r *rig, spec fakeromm.ROMSpec) fakeromm.ROM {
	t.Helper()
	rom, err := r.cab.RomM.AddROM(spec)
	if err != nil {
		t.Fatal(err)
	}
	return rom
}

// addSystem has ES list system s, with one game file in its folder (ES lists a system that has
// a game), as newRig does for psx.
func addSystem(t *testing.T, r *rig, s library.System, file string) {
	t.Helper()
	if err := r.cab.Library.AddSystem(s); err != nil {
		t.Fatal(err)
	}
	g, err := r.cab.Library.AddGame(s.Name, file, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(r.cab.Path(g.Path)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.cab.Path(g.Path), []byte("ROM "+file), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree is every entry of the fake tree: "dir" for a folder, size and time for a file.
type tree map[string]string

func snapshot(t *testing.T, r *rig) tree {
	t.Helper()
	out := tree{}
	err := filepath.WalkDir(r.cab.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.cab.Root, p)
		if d.IsDir() {
			out["/"+filepath.ToSlash(rel)] = "dir"
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out["/"+filepath.ToSlash(rel)] = fmt.Sprintf("%v %v %d", fi.ModTime(), fi.Mode(), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changes are the cabinet paths that appeared, changed or went between two snapshots, sorted.
func changes(before, after tree) []string {
	var out []string
	for p, v := range after {
		if before[p] != v {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// listed has ES reload its game lists and returns the paths it lists for system once the reload
// has run: a probe file put in the folder first tells when it has (ES rescans after answering).
func listed(t *testing.T, r *rig, system string) []string {
	t.Helper()
	sys, ok := r.cab.Library.System(system)
	if !ok || len(sys.Extensions) == 0 {
		t.Fatalf("ES has no system %s", system)
	}
	probe := path.Join(RomsRoot, system, "zz-probe"+sys.Extensions[0])
	if err := os.WriteFile(r.cab.Path(probe), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(r.cab.Path(probe))
	if err := r.esc.ReloadGames(context.Background()); err != nil {
		t.Fatal(err)
	}
	var paths []string
	cabinettest.Await(t, "ES to rescan "+system, nil, func() bool {
		paths = nil
		seen := false
		for _, g := range r.cab.Library.Games(system) {
			if g.Path == probe {
				seen = true
				continue
			}
			paths = append(paths, g.Path)
		}
		return seen
	})
	slices.Sort(paths)
	return paths
}

// assertNothingLeft: no stage or part file anywhere, nothing changed in the tree since before,
// and ES, made to rescan, lists what it listed before (wantListed) and nothing more.
func assertNothingLeft(t *testing.T, r *rig, before tree, system string, wantListed []string) {
	t.Helper()
	assertNothingStaged(t, r)
	if c := changes(before, snapshot(t, r)); len(c) > 0 {
		t.Errorf("the failed install changed the tree: %q", c)
	}
	if got := listed(t, r, system); !slices.Equal(got, wantListed) {
		t.Errorf("ES lists %q in %s after the failed install, want %q", got, system, wantListed)
	}
}

// mountTmpfs mounts a tmpfs of size bytes over dir for the test (the test runs as root on this
// machine; elsewhere it is skipped).
func mountTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)+",mode=0755"); err != nil {
		t.Skipf("mount a tmpfs over %s (it takes root): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// fillUp writes the file p until the filesystem holding it is full.
func fillUp(p string) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// bombZip is a zip of one member "bomb.bin" that decompresses to mib MiB of zeros and whose
// headers declare declared bytes for it. It is built without holding the member: deflate's
// blocks after a flush only refer to the 32 KiB before them, which are zeros from the second
// MiB on, so the compressed MiB after the first is repeated.
func bombZip(t *testing.T, mib int, declared uint64) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, err := flate.NewWriter(&comp, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	chunk := func() []byte {
		fw.Write(zeros)
		fw.Flush()
		b := bytes.Clone(comp.Bytes())
		comp.Reset()
		return b
	}
	first, next := chunk(), chunk()
	fw.Close()
	last := bytes.Clone(comp.Bytes())
	stream := bytes.NewBuffer(first)
	crc := crc32.Update(0, crc32.IEEETable, zeros)
	for i := 1; i < mib; i++ {
		stream.Write(next)
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	stream.Write(last)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "bomb.bin", Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(stream.Len()), UncompressedSize64: declared, Modified: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, stream); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestBombZipExpands checks bombZip's repetition on a small bomb: 3 MiB of zeros come out.
func TestBombZipExpands(t *testing.T) {
	z := bombZip(t, 3, 3<<20)
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc) // the reader checks the CRC and the size at the end
	if err != nil || len(got) != 3<<20 || bytes.Count(got, []byte{0}) != len(got) {
		t.Fatalf("the 3 MiB bomb expands to %d bytes (%v)", len(got), err)
	}
}
