package romhash

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// want computes RomM's blanked sums of b independently of the package.
func want(b []byte) (crc, md5s, sha1s string) {
	if c := crc32.ChecksumIEEE(b); c != 0 {
		crc = fmt.Sprintf("%08x", c)
	}
	if len(b) > 0 {
		m := md5.Sum(b)
		s := sha1.Sum(b)
		md5s, sha1s = hex.EncodeToString(m[:]), hex.EncodeToString(s[:])
	}
	return
}

// wantMember is the unblanked form RomM stores for archive members.
func wantMember(name string, b []byte) Member {
	m := md5.Sum(b)
	s := sha1.Sum(b)
	return Member{Name: name, Size: int64(len(b)), CRC: fmt.Sprintf("%08x", crc32.ChecksumIEEE(b)),
		MD5: hex.EncodeToString(m[:]), SHA1: hex.EncodeToString(s[:])}
}

func checkSums(t *testing.T, got Sums, b []byte) {
	t.Helper()
	c, m, s := want(b)
	if got.CRC != c || got.MD5 != m || got.SHA1 != s {
		t.Errorf("sums = %s/%s/%s, want %s/%s/%s", got.CRC, got.MD5, got.SHA1, c, m, s)
	}
}

type zent struct {
	name   string
	data   []byte
	method uint16
	flags  uint16
}

func makeZip(t testing.TB, ents ...zent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range ents {
		fh := &zip.FileHeader{Name: e.name, Method: e.method, Flags: e.flags}
		fw, err := w.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type tent struct {
	name string
	data []byte
	typ  byte
}

func makeTar(t testing.TB, ents ...tent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, e := range ents {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(e.data))
		}
		if typ == tar.TypeSymlink {
			hdr.Linkname = "elsewhere"
		}
		if err := w.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			w.Write(e.data)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// bz2Hello is "hello hello hello\n" compressed by bzip2 (Python's bz2.compress; the standard
// library has no bzip2 writer).
var bz2Hello = []byte{
	0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0xe5, 0xb5, 0xf3, 0x09, 0x00, 0x00,
	0x04, 0x51, 0x00, 0x00, 0x10, 0x40, 0x00, 0x02, 0x44, 0xa0, 0x00, 0x21, 0xb5, 0x18, 0x0c, 0x02,
	0x90, 0x69, 0xc2, 0xa3, 0x0b, 0xb9, 0x22, 0x9c, 0x28, 0x48, 0x72, 0xda, 0xf9, 0x84, 0x80,
}
