package romhash

import (
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Zip compression methods Python's zipfile decompresses in RomM's image: stored, deflate, bzip2,
// and, through the zipfile-inflate64 patch and the lzma module, Deflate64 and LZMA. Go's standard
// library has no Deflate64 or LZMA reader.
const (
	methodBzip2     = 12
	methodDeflate64 = 9
	methodLZMA      = 14
)

// openZip opens f as Python's zipfile would. ok=false means zipfile rejects the archive
// (BadZipFile), so RomM hashes it raw. The central directory is counted first: Go's reader keeps
// every entry in memory, so a directory of millions of tiny entries must be refused before it.
func (h *hasher) openZip(f *os.File, size int64) (zr *zip.Reader, names []string, ok bool, err error) {
	n, err := countCentral(f, size, h.lim.MaxMembers)
	if err != nil {
		return nil, nil, false, err
	}
	if n < 0 {
		return nil, nil, false, nil
	}
	zr, err = zip.NewReader(f, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, nil, false, nil
	}
	if len(zr.File) > h.lim.MaxMembers {
		return nil, nil, false, fmt.Errorf("zip holds over %d entries: %w", h.lim.MaxMembers, ErrTooLarge)
	}
	zr.RegisterDecompressor(methodBzip2, func(r io.Reader) io.ReadCloser { return io.NopCloser(bzip2.NewReader(r)) })
	names = make([]string, len(zr.File))
	for i, zf := range zr.File {
		name, bad, err := zipName(&zf.FileHeader)
		if err != nil {
			return nil, nil, false, err
		}
		if bad {
			return nil, nil, false, nil
		}
		names[i] = name
	}
	return zr, names, true, nil
}

// openMember opens a member as zipfile.open does. ok=false: zipfile raises (encrypted, patched
// data, strong encryption, unknown method, bad local header), which RomM's readers catch.
func openMember(zf *zip.File) (rc io.ReadCloser, ok bool, err error) {
	switch zf.Method {
	case zip.Store, zip.Deflate, methodBzip2:
	case methodDeflate64, methodLZMA:
		return nil, false, ErrUnsupported
	default:
		return nil, false, nil // NotImplementedError, a RuntimeError: caught
	}
	if zf.Flags&(0x1|0x20|0x40) != 0 {
		return nil, false, nil // encrypted (RuntimeError) or unsupported features (NotImplementedError)
	}
	rc, err = zf.Open()
	if err != nil {
		return nil, false, nil
	}
	return rc, true, nil
}

// zipComposite is RomM's multi-member hash of a top-level .zip (roms_handler.py L461-558 with
// archives.py read_zip_archive_files): members sorted by name (a stable sort, as Python's), no
// directories (names ending in "/"), no excluded names; the ROM hash is over their concatenation.
// Any read failure (ArchiveReadError) or no member at all: the raw bytes.
func (h *hasher) zipComposite(f *os.File, size int64) (Sums, error) {
	zr, names, ok, err := h.openZip(f, size)
	if err != nil {
		return Sums{}, err
	}
	if !ok {
		return h.rawSums(f)
	}
	var order []int
	var declared uint64
	for i := range zr.File {
		if n := names[i]; n == "" || n[len(n)-1] == '/' || excluded(pyBase(n)) {
			continue
		}
		order = append(order, i)
		declared += zr.File[i].UncompressedSize64
	}
	if declared > uint64(h.lim.MaxExpandedBytes) {
		return Sums{}, fmt.Errorf("zip members declare %d bytes, over %d: %w", declared, h.lim.MaxExpandedBytes, ErrTooLarge)
	}
	sort.SliceStable(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
	comp := newDigest()
	members := make([]Member, 0, len(order))
	for _, i := range order {
		zf := zr.File[i]
		rc, ok, err := openMember(zf)
		if err != nil {
			return Sums{}, fmt.Errorf("zip member %q: %w", names[i], err)
		}
		if !ok {
			return h.rawSums(f)
		}
		md := newDigest()
		err = h.drain(io.MultiWriter(md, comp), rc, true)
		rc.Close()
		if isReadError(err) {
			return h.rawSums(f)
		}
		if err != nil {
			return Sums{}, err
		}
		members = append(members, md.member(names[i], int64(zf.UncompressedSize64)))
	}
	if len(members) == 0 {
		return h.rawSums(f)
	}
	s := Sums{Members: members}
	s.CRC, s.MD5, s.SHA1 = comp.blanked()
	return s, nil
}

// zipLargest is archives.py read_zip_file, used by _calculate_rom_hashes for a .zip that is not a
// top-level .zip ROM: the first entry of greatest declared size in directory order, directories
// and excluded names included. An archive zipfile cannot open, or a member it cannot open: the
// raw bytes. A member that fails while being read gives ErrNoHash: on corrupt deflate data
// (zlib.error) RomM blanks the hashes, an empty or truncated archive fails its scan, and on a bad
// CRC it hashes the member minus the chunk the CRC check was raised in, then the whole file again
// (the except clause re-yields it), a value that depends on Python's buffering.
func (h *hasher) zipLargest(f *os.File, size int64, d *digest) error {
	zr, _, ok, err := h.openZip(f, size)
	if err != nil {
		return err
	}
	if !ok {
		return h.raw(f, d)
	}
	if len(zr.File) == 0 {
		return ErrNoHash // max() of an empty list
	}
	best := zr.File[0]
	for _, zf := range zr.File[1:] {
		if zf.UncompressedSize64 > best.UncompressedSize64 {
			best = zf
		}
	}
	if best.UncompressedSize64 > uint64(h.lim.MaxExpandedBytes) {
		return fmt.Errorf("zip member declares %d bytes, over %d: %w", best.UncompressedSize64, h.lim.MaxExpandedBytes, ErrTooLarge)
	}
	rc, ok, err := openMember(best)
	if err != nil {
		return err
	}
	if !ok {
		return h.raw(f, d)
	}
	err = h.drain(d, rc, true)
	rc.Close()
	if isReadError(err) {
		return ErrNoHash
	}
	return err
}

// countCentral counts the central directory records the way Go's reader will find them, stopping
// past max (ErrTooLarge). -1: no end-of-directory record, so not a zip at all.
func countCentral(f *os.File, size int64, max int) (int, error) {
	const eocdLen, maxComment = 22, 65535
	tail := int64(eocdLen + maxComment)
	if tail > size {
		tail = size
	}
	buf := make([]byte, tail)
	if _, err := f.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, fmt.Errorf("hash rom: %w", err)
	}
	at := -1
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if bytes.Equal(buf[i:i+4], []byte("PK\x05\x06")) && i+eocdLen+int(binary.LittleEndian.Uint16(buf[i+20:])) <= len(buf) {
			at = i
			break
		}
	}
	if at < 0 {
		return -1, nil
	}
	eocd := buf[at:]
	dirSize := int64(binary.LittleEndian.Uint32(eocd[12:]))
	dirOff := int64(binary.LittleEndian.Uint32(eocd[16:]))
	eocdOff := size - tail + int64(at)
	if loc := eocdOff - 20; loc >= 0 && (dirOff == 0xffffffff || dirSize == 0xffffffff || binary.LittleEndian.Uint16(eocd[10:]) == 0xffff) {
		var l [20]byte
		if _, err := f.ReadAt(l[:], loc); err == nil && bytes.Equal(l[:4], []byte("PK\x06\x07")) {
			var r [56]byte
			if o := int64(binary.LittleEndian.Uint64(l[8:])); o >= 0 && o < size {
				if _, err := f.ReadAt(r[:], o); err == nil && bytes.Equal(r[:4], []byte("PK\x06\x06")) {
					dirSize = int64(binary.LittleEndian.Uint64(r[40:]))
					dirOff = int64(binary.LittleEndian.Uint64(r[48:]))
				}
			}
		}
	}
	// Go tries the recorded offset, and the one implied by the directory's size when data was
	// prepended; both walks are counted and the larger is what memory has to hold.
	n := 0
	for _, start := range []int64{dirOff, eocdOff - dirSize} {
		c, err := walkCentral(f, start, size, max)
		if err != nil {
			return 0, err
		}
		if c > n {
			n = c
		}
	}
	return n, nil
}

func walkCentral(f *os.File, off, size int64, max int) (int, error) {
	var hdr [46]byte
	n := 0
	for off >= 0 && off+46 <= size {
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			break
		}
		if !bytes.Equal(hdr[:4], []byte("PK\x01\x02")) {
			break
		}
		n++
		if n > max {
			return 0, fmt.Errorf("zip holds over %d entries: %w", max, ErrTooLarge)
		}
		off += 46 + int64(binary.LittleEndian.Uint16(hdr[28:])) + int64(binary.LittleEndian.Uint16(hdr[30:])) + int64(binary.LittleEndian.Uint16(hdr[32:]))
	}
	return n, nil
}
