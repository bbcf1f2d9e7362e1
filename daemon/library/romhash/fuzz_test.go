package romhash

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzLimits keep every input to a few MiB of work, so a fuzz run cannot stall on a bomb.
var fuzzLimits = Limits{MaxFileBytes: 1 << 20, MaxExpandedBytes: 4 << 20, MaxMembers: 64}

// fuzzFile hashes data under every name rule that picks a different reader and checks the
// outcome is a result or one of the documented errors.
func fuzzFile(t *testing.T, dir string, data []byte, names ...string) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := File(p, fuzzLimits)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrNoHash) {
				t.Fatalf("%s: unexpected error %v", n, err)
			}
			continue
		}
		if len(s.Members) > fuzzLimits.MaxMembers {
			t.Fatalf("%s: %d members over the limit", n, len(s.Members))
		}
		if s.MD5 == "" && s.SHA1 != "" || s.CRC != "" && len(s.CRC) != 8 {
			t.Fatalf("%s: inconsistent sums %+v", n, s)
		}
	}
}

func FuzzZip(f *testing.F) {
	f.Add(makeZip(f, zent{name: "a.bin", data: []byte("abc")}, zent{name: "d/", data: nil}, zent{name: "d/b", data: []byte("zz"), method: zip.Deflate}))
	f.Add(makeZip(f))
	f.Add(corruptCRC(makeZip(f, zent{name: "a", data: []byte("x")})))
	f.Add([]byte("PK\x05\x06"))
	dir := f.TempDir() // one per worker process; inputs run one at a time in it
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFile(t, dir, data, "g.zip", "g.nes.zip") })
}

func FuzzTar(f *testing.F) {
	plain := makeTar(f, tent{name: "b", data: []byte("bbb")}, tent{name: "a", data: []byte("a")})
	f.Add(plain)
	f.Add(gz(f, plain))
	f.Add(bz2Hello)
	f.Add([]byte{0x1f, 0x8b})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFile(t, dir, data, "g.tar", "g.tar.gz", "g.gz", "g.bz2") })
}

func FuzzRomExtension(f *testing.F) {
	for _, s := range []string{"a.tar.gz", "x.nes.zip", "é.Ü", "..", "a.\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ext := romExtension(name)
		if ext != "" && !extTail(ext) {
			t.Fatalf("romExtension(%q) = %q, not an extension", name, ext)
		}
		_ = pySuffix(name)
		_ = pyBase(name)
	})
}
