package fakeromm

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
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

// resourcesPath is RomM's FRONTEND_RESOURCES_PATH: nginx serves the
// resources (covers, screenshots) there as static files.
const resourcesPath = "/assets/romm/resources"

// hasCover: the fixture ROMs matched to a metadata source have covers (RomM
// fetches them when it matches); unidentified and synthetic ROMs have none.
func (l *library) hasCover(r ROM) bool {
	return r.IGDBID != 0 && r.ID >= 1 && r.ID <= len(l.fixture)
}

// coverPath is path_cover_large ("big") or path_cover_small ("small") as
// RomM's models render it: FRONTEND_RESOURCES_PATH, the stored path
// (roms/{platform_id}/{id}/cover/big.png) and ?ts= with str(updated_at), a
// Python datetime with a space in it; "" for a ROM without a cover.
func (s *Server) coverPath(r ROM, size string) string {
	if !s.lib.hasCover(r) {
		return ""
	}
	ts := s.lib.now.UTC().Format("2006-01-02 15:04:05.999999") + "+00:00"
	return fmt.Sprintf("%s/roms/%d/%d/cover/%s.png?ts=%s", resourcesPath, r.PlatformID, r.ID, size, ts)
}

// coverPNG draws ROM id's cover: a small PNG in a colour of its own with a
// band across, made on request (no package state, nothing at start).
func coverPNG(id int, size string) []byte {
	w, h := 90, 120
	if size == "small" {
		w, h = 45, 60
	}
	x := splitmix64(uint64(id))
	bg := color.RGBA{uint8(x), uint8(x >> 8), uint8(x >> 16), 0xff}
	band := color.RGBA{^bg.R, ^bg.G, ^bg.B, 0xff}
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{bg, band})
	for py := h / 3; py < h/3+h/6; py++ {
		for px := 0; px < w; px++ {
			img.SetColorIndex(px, py, 1)
		}
	}
	var buf bytes.Buffer
	// Encoding an in-memory paletted image cannot fail.
	_ = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	return buf.Bytes()
}

// Cover returns the large cover the server serves for ROM id, and whether
// it has one.
func (s *Server) Cover(id int) ([]byte, bool) {
	s.init()
	s.libMu.RLock()
	defer s.libMu.RUnlock()
	r, ok := s.lib.meta(id)
	if !ok || !s.lib.hasCover(r) {
		return nil, false
	}
	return coverPNG(id, "big"), true
}
