package fakeromm

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"
)

// fill returns n deterministic pseudo-random bytes named by label: SHA-256
// in counter mode, so every run and every machine builds the same files.
func fill(label string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	var ctr [8]byte
	for i := uint64(0); len(out) < n; i++ {
		binary.BigEndian.PutUint64(ctr[:], i)
		h := sha256.New()
		h.Write([]byte(label))
		h.Write(ctr[:])
		out = h.Sum(out)
	}
	return out[:n]
}

// nesImage is an iNES file: the 16-byte header (one 16 KiB PRG bank, one
// 8 KiB CHR bank, mapper 0) and deterministic banks, so tools that sniff
// the magic see a NES ROM.
func nesImage(label string) []byte {
	header := []byte{'N', 'E', 'S', 0x1a, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	return append(header, fill(label, 16384+8192)...)
}

// cueSheet is a one-track MODE2 cue sheet for bin.
func cueSheet(bin string) []byte {
	return fmt.Appendf(nil, "FILE \"%s\" BINARY\r\n  TRACK 01 MODE2/2352\r\n    INDEX 01 00:00:00\r\n", bin)
}

// zipEntry is one member to put in a generated archive; a name ending in
// "/" is a directory entry.
type zipEntry struct {
	name string
	data []byte
}

// zipTime is the modification time of every generated archive member, so
// archives are byte-for-byte reproducible.
var zipTime = time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)

// buildZip writes entries in the given order (deliberately not sorted: RomM
// sorts them itself before hashing), deflated.
func buildZip(entries []zipEntry) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: zipTime}
		if e.name[len(e.name)-1] == '/' {
			hdr.Method = zip.Store
		}
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, fmt.Errorf("zip %s: %w", e.name, err)
		}
		if _, err := w.Write(e.data); err != nil {
			return nil, fmt.Errorf("zip %s: %w", e.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zip: %w", err)
	}
	return buf.Bytes(), nil
}
