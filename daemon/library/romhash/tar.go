package romhash

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Compression under a tar, as tarfile.open(mode "r:*") finds it: by trying each opener on the
// content, whatever the extension says.
type tarCompression int

const (
	tarPlain tarCompression = iota
	tarGzip
	tarBzip2
)

// sniffTar picks the opener tarfile "r:*" would succeed with. xz: Python's lzma reads it, the
// standard library cannot.
func sniffTar(f *os.File) (tarCompression, error) {
	var magic [6]byte
	n, err := f.ReadAt(magic[:], 0)
	if err != nil && err != io.EOF {
		return 0, fmt.Errorf("hash rom: %w", err)
	}
	m := magic[:n]
	switch {
	case bytes.HasPrefix(m, []byte{0x1f, 0x8b}):
		return tarGzip, nil
	case bytes.HasPrefix(m, []byte("BZh")):
		return tarBzip2, nil
	case bytes.HasPrefix(m, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return 0, ErrUnsupported
	}
	return tarPlain, nil
}

// counted wraps a decompressor: every byte it produces counts against MaxExpandedBytes, and the
// context is checked on every read, so a tar bomb stops during listing as well as during hashing.
type counted struct {
	h *hasher
	r io.Reader
}

func (c counted) Read(p []byte) (int, error) {
	if err := c.h.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.h.expanded += int64(n)
	if c.h.expanded > c.h.lim.MaxExpandedBytes {
		return 0, fmt.Errorf("expanded contents over %d bytes: %w", c.h.lim.MaxExpandedBytes, ErrTooLarge)
	}
	return n, err
}

// openTar starts a fresh pass over the archive. ok=false: the compression layer does not open.
func (h *hasher) openTar(f *os.File, c tarCompression) (tr *tar.Reader, ok bool, err error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, false, fmt.Errorf("hash rom: %w", err)
	}
	switch c {
	case tarGzip:
		gz, err := gzip.NewReader(bufio.NewReaderSize(f, chunk))
		if err != nil {
			return nil, false, nil
		}
		return tar.NewReader(counted{h, gz}), true, nil
	case tarBzip2:
		return tar.NewReader(counted{h, bzip2.NewReader(bufio.NewReaderSize(f, chunk))}), true, nil
	}
	return tar.NewReader(f), true, nil // *os.File seeks over member data
}

// Bounds on a tar's listing. listTar keeps every regular member's name until the archive is
// hashed, and Go's reader takes PAX and GNU names up to 1 MiB each: Linux's PATH_MAX is 4 KiB, a
// name longer than any path a file system holds is no ROM's, and 8 MiB of names is 20,000 members
// (the installer's member limit) of 400-byte paths, where real ROM tarballs, even of PC games,
// average well under 100. Go's reader also parses every header's PAX records, long names and
// links into about three times their size of garbage, which a stream of 1 MiB headers turns into
// 60 MiB and more of resident memory; 32 MiB of them is 20,000 entries of 1.6 KiB (tar --posix
// writes about 100 bytes of times per entry, bsdtar as much again with SELinux labels and ACLs).
const (
	maxTarName    = 4 << 10
	maxTarNames   = 8 << 20
	maxTarHeaders = 32 << 20
)

// headerBytes is what Go's reader parsed out of a header's extensions: its names and PAX records.
func headerBytes(hdr *tar.Header) int64 {
	n := int64(len(hdr.Name) + len(hdr.Linkname))
	for k, v := range hdr.PAXRecords {
		if k != "path" && k != "linkpath" { // counted as the names
			n += int64(len(k) + len(v))
		}
	}
	return n
}

type tarEntry struct {
	ordinal int // position among all headers, for a later pass to skip to
	name    string
	size    int64
	// data is where a plain tar's contiguous member starts in the file, -1 otherwise: members
	// are then read where they are, in any order, instead of a pass over every header before
	// them for each (a tar of 20,000 members in reverse name order took most of an hour).
	data int64
}

// listTar is tarfile's getmembers() over regular files (isfile(): regular, contiguous, GNU sparse).
// ok=false: the first header cannot be read (ReadError at offset 0). A bad header after the
// first ends the listing, as tarfile.next() ends the archive there.
func (h *hasher) listTar(f *os.File, c tarCompression) (entries []tarEntry, ok bool, err error) {
	tr, ok, err := h.openTar(f, c)
	if err != nil || !ok {
		return nil, ok, err
	}
	var names, headers int64
	for i := 0; ; i++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries, true, nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			if ours(err) {
				return nil, false, err
			}
			if i > 0 && (errors.Is(err, tar.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF)) {
				return entries, true, nil
			}
			return nil, false, nil
		}
		if i >= h.lim.MaxMembers {
			return nil, false, listingTooLarge("tar holds over %d entries", h.lim.MaxMembers)
		}
		if headers += headerBytes(hdr); headers > maxTarHeaders {
			return nil, false, listingTooLarge("tar headers of at least %d bytes of names and PAX records, over the %d the cabinet reads", headers, maxTarHeaders)
		}
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeCont, tar.TypeGNUSparse, 0:
			if len(hdr.Name) > maxTarName {
				return nil, false, listingTooLarge("tar entry name of %d bytes, over the %d the cabinet reads", len(hdr.Name), maxTarName)
			}
			if names += int64(len(hdr.Name)); names > maxTarNames {
				return nil, false, listingTooLarge("tar member names of at least %d bytes in all, over the %d the cabinet reads", names, maxTarNames)
			}
			// A copy: a PAX path is a substring of its whole header (up to 1 MiB), which
			// keeping the name would keep.
			entries = append(entries, tarEntry{ordinal: i, name: strings.Clone(hdr.Name), size: hdr.Size, data: dataOffset(f, c, hdr)})
		}
	}
}

// dataOffset is where hdr's data starts in a plain tar: Next leaves the file there, having read
// the header's blocks and nothing more. -1 for a compressed tar and for a sparse member, whose
// bytes in the file are not its contents.
func dataOffset(f *os.File, c tarCompression, hdr *tar.Header) int64 {
	if c != tarPlain || hdr.Typeflag == tar.TypeGNUSparse {
		return -1
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return -1
		}
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return off
}

// member reads e's contents: where they are for a plain tar's contiguous member that the file
// holds whole, else through the cursor.
func (t *tarCursor) member(e tarEntry, size int64) (io.Reader, error) {
	if e.data >= 0 && e.size <= size-e.data {
		return io.NewSectionReader(t.f, e.data, e.size), nil
	}
	if err := t.seek(e.ordinal); err != nil {
		return nil, err
	}
	return t.tr, nil
}

// tarCursor reads members in any order over a stream that only goes forward: a member before the
// current position restarts the pass (the re-read counts against MaxExpandedBytes).
type tarCursor struct {
	h   *hasher
	f   *os.File
	c   tarCompression
	tr  *tar.Reader
	pos int // ordinal of the header tr returned last; -1 before the first
}

func (t *tarCursor) seek(ordinal int) error {
	if t.tr == nil || ordinal <= t.pos {
		tr, ok, err := t.h.openTar(t.f, t.c)
		if err != nil {
			return err
		}
		if !ok {
			return readError{errors.New("compression layer no longer opens")}
		}
		t.tr, t.pos = tr, -1
	}
	for t.pos < ordinal {
		if err := t.h.ctx.Err(); err != nil {
			return err
		}
		if _, err := t.tr.Next(); err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			if ours(err) {
				return err
			}
			return readError{err}
		}
		t.pos++
	}
	return nil
}

// tarComposite is RomM's multi-member hash of a top-level tar (archives.py read_tar_archive_files):
// regular members sorted by name, excluded names left out, the ROM hash over their concatenation;
// anything unreadable: the raw bytes.
func (h *hasher) tarComposite(f *os.File, size int64) (Sums, error) {
	c, err := sniffTar(f)
	if err != nil {
		return Sums{}, err
	}
	entries, ok, err := h.listTar(f, c)
	if err != nil {
		return Sums{}, err
	}
	if !ok {
		return h.rawSums(f)
	}
	var keep []tarEntry
	var declared int64
	for _, e := range entries {
		if !excluded(pyBase(e.name)) {
			keep = append(keep, e)
			// Compared before adding: sizes are up to 2^63-1, and a sum that wrapped would pass.
			if e.size > h.lim.MaxExpandedBytes-declared {
				return Sums{}, fmt.Errorf("tar members declare over %d bytes: %w", h.lim.MaxExpandedBytes, ErrTooLarge)
			}
			declared += e.size
		}
	}
	sort.SliceStable(keep, func(a, b int) bool { return keep[a].name < keep[b].name })
	cur := &tarCursor{h: h, f: f, c: c}
	comp := newDigest()
	members := make([]Member, 0, len(keep))
	for _, e := range keep {
		md := newDigest()
		r, err := cur.member(e, size)
		if err == nil {
			err = h.drain(io.MultiWriter(md, comp), r, c == tarPlain)
		}
		if isReadError(err) {
			return h.rawSums(f)
		}
		if err != nil {
			return Sums{}, err
		}
		members = append(members, md.member(e.name, e.size))
	}
	if len(members) == 0 {
		return h.rawSums(f)
	}
	s := Sums{Members: members}
	s.CRC, s.MD5, s.SHA1 = comp.blanked()
	return s, nil
}

// tarLargest is archives.py read_tar_file: the first regular member of greatest size. gzOnly is
// the "r:gz" mode read_gz_file uses for .gz files: a gzip that is not a tar, or not a gzip at all,
// is a ReadError and hashed raw. A tar with no regular member fails RomM's max(): ErrNoHash. A
// member that fails while being read: ErrNoHash, since RomM then hashes the member's bytes up to
// the last whole buffer before the failure followed by the raw file (read_tar_file's fallback), a
// value that depends on Python's buffering, or fails on a compressed stream's EOFError.
func (h *hasher) tarLargest(f *os.File, d *digest, gzOnly bool) error {
	c, err := sniffTar(f)
	if gzOnly && (c != tarGzip || err != nil) {
		return h.raw(f, d)
	}
	if err != nil {
		return err
	}
	entries, ok, err := h.listTar(f, c)
	if err != nil {
		return err
	}
	if !ok {
		return h.raw(f, d)
	}
	if len(entries) == 0 {
		return ErrNoHash
	}
	best := entries[0]
	for _, e := range entries[1:] {
		if e.size > best.size {
			best = e
		}
	}
	if best.size > h.lim.MaxExpandedBytes {
		return fmt.Errorf("tar member declares %d bytes, over %d: %w", best.size, h.lim.MaxExpandedBytes, ErrTooLarge)
	}
	cur := &tarCursor{h: h, f: f, c: c}
	err = cur.seek(best.ordinal)
	if err == nil {
		err = h.drain(d, cur.tr, c == tarPlain)
	}
	if isReadError(err) {
		return ErrNoHash
	}
	return err
}
