package romhash

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
		if errors.Is(err, errDirEscaped) {
			t.Fatalf("%s: Go's zip reader walked a directory checkCentral did not: %v", n, err)
		}
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
	// Directories of the shapes checkCentral bounds: an end record that lies about the size, a
	// name over the bound, the zip64 quirk and base offset of Go's reader, a declared count and
	// sizes that wrap, and the real shapes: zip64 and a self-extractor's stub.
	d := centralDir(3, 10, 8, 4)
	f.Add(cat(d, endRecord(1, 46, 0)))
	f.Add(cat(centralHeader(maxZipName+1, 0, 0), endRecord(1, maxZipName+47, 0)))
	d = centralDir(fuzzLimits.MaxMembers+1, 1, 0, 0)
	f.Add(cat(d, zip64End(int64(len(d)), 3, uint64(len(d)), 0), endRecord(3, 0xffff, 16)))
	d = cat(make([]byte, 100), centralDir(3, 1, 0, 0))
	f.Add(cat(d, zip64End(int64(len(d)), 3, uint64(len(d)-100), 0), endRecord(0xffff, 0xffffffff, 0xffffffff)))
	d = centralHeader(1, 0, 0)
	f.Add(cat(d, zip64End(int64(len(d)), 1<<40, uint64(len(d)), 0), endRecord(0xffff, 0xffffffff, 0xffffffff)))
	f.Add(wrapZip(f))
	f.Add(asZip64(makeZip(f, zent{name: "a", data: []byte("x")}, zent{name: "b", data: []byte("yy"), method: zip.Deflate})))
	f.Add(cat([]byte("MZ stub"), makeZip(f, zent{name: "a", data: []byte("x")})))
	dir := f.TempDir() // one per worker process; inputs run one at a time in it
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzFile(t, dir, data, "g.zip", "g.nes.zip")
		checkMirror(t, filepath.Join(dir, "g.zip"), data)
	})
}

// checkMirror holds checkCentral to its copy of Go's rules: a directory Go's reader loads is
// never more entries or bytes than checkCentral walked.
func checkMirror(t *testing.T, path string, data []byte) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	isZip, walked, err := checkCentral(f, int64(len(data)), 1<<30)
	if err != nil || !isZip {
		return
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return
	}
	var loaded int64
	for _, zf := range zr.File {
		loaded += int64(46 + len(zf.Name) + len(zf.Extra) + len(zf.Comment))
	}
	if loaded > walked {
		t.Fatalf("Go's reader loaded %d entries, %d bytes; checkCentral walked %d bytes", len(zr.File), loaded, walked)
	}
}

// asZip64 rewrites a zip's end record as zip64 writers do: the real values in a zip64 record,
// the 32-bit ones saturated.
func asZip64(z []byte) []byte {
	end := z[len(z)-22:]
	size, off := binary.LittleEndian.Uint32(end[12:]), binary.LittleEndian.Uint32(end[16:])
	n := binary.LittleEndian.Uint16(end[10:])
	body := z[:len(z)-22]
	return cat(body, zip64End(int64(len(body)), uint64(n), uint64(size), uint64(off)), endRecord(0xffff, 0xffffffff, 0xffffffff))
}

func FuzzTar(f *testing.F) {
	plain := makeTar(f, tent{name: "b", data: []byte("bbb")}, tent{name: "a", data: []byte("a")})
	f.Add(plain)
	f.Add(gz(f, plain))
	f.Add(bz2Hello)
	f.Add([]byte{0x1f, 0x8b})
	// Names over the bound, in a PAX header and a GNU long-name one; a PAX header padded with
	// another record; sparse members whose sizes wrap.
	f.Add(makeTar(f, tent{name: strings.Repeat("n", maxTarName+1), data: []byte("x")}))
	var gnu bytes.Buffer
	w := tar.NewWriter(&gnu)
	w.WriteHeader(&tar.Header{Name: strings.Repeat("g", maxTarName+1), Typeflag: tar.TypeReg, Format: tar.FormatGNU})
	w.Close()
	f.Add(gnu.Bytes())
	var pax bytes.Buffer
	w = tar.NewWriter(&pax)
	w.WriteHeader(&tar.Header{Name: "é", Typeflag: tar.TypeReg, PAXRecords: map[string]string{"comment": strings.Repeat("p", 8<<10)}})
	w.Close()
	f.Add(pax.Bytes())
	var sparse []byte
	for _, n := range []string{"a", "b", "c", "d"} {
		sparse = append(sparse, gnuSparse(n, 1<<62)...)
	}
	f.Add(append(sparse, make([]byte, 1024)...))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFile(t, dir, data, "g.tar", "g.tar.gz", "g.gz", "g.bz2") })
}

func FuzzRomExtension(f *testing.F) {
	for _, s := range []string{"a.tar.gz", "x.nes.zip", "é.Ü", "..", "a.\n", "d/./", "/", "a//b/."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ext := romExtension(name)
		if ext != "" && !extTail(ext) {
			t.Fatalf("romExtension(%q) = %q, not an extension", name, ext)
		}
		_ = pySuffix(name)
		if got, want := pyBase(name), splitBase(name); got != want {
			t.Fatalf("pyBase(%q) = %q, want %q", name, got, want)
		}
	})
}

// splitBase is pyBase as first written, by strings.Split, which allocates a part per '/'.
func splitBase(name string) string {
	parts := strings.Split(name, "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] != "" && parts[i] != "." {
			return parts[i]
		}
	}
	return ""
}
