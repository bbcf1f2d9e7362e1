package romhash

import (
	"archive/zip"
	"compress/bzip2"
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
// (BadZipFile), so RomM hashes it raw. The central directory is checked first (checkCentral): Go's
// reader keeps all of it in memory, so a directory of too many entries, or of entries too long, must
// be refused before it loads.
func (h *hasher) openZip(f *os.File, size int64) (zr *zip.Reader, names []string, ok bool, err error) {
	isZip, walked, err := checkCentral(f, size, h.lim.MaxMembers)
	if err != nil {
		return nil, nil, false, err
	}
	if !isZip {
		return nil, nil, false, nil
	}
	guard := &dirGuard{f: f, left: walked + zipEndReads}
	zr, err = zip.NewReader(guard, size)
	guard.left = -1
	if errors.Is(err, ErrTooLarge) {
		return nil, nil, false, err
	}
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, nil, false, nil
	}
	if len(zr.File) > h.lim.MaxMembers {
		return nil, nil, false, listingTooLarge("zip holds over %d entries", h.lim.MaxMembers)
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
		// Compared before adding: sizes are up to 2^64-1, and a sum that wrapped would pass.
		if size := zr.File[i].UncompressedSize64; size > uint64(h.lim.MaxExpandedBytes)-declared {
			return Sums{}, fmt.Errorf("zip members declare over %d bytes: %w", h.lim.MaxExpandedBytes, ErrTooLarge)
		}
		declared += zr.File[i].UncompressedSize64
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
