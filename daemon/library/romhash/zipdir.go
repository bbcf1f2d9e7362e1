package romhash

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Bounds on a zip's central directory. Go's reader loads the whole directory before any member is
// read and keeps, per entry, its name, extra field and comment (copied twice over: the field bytes,
// then the name and comment as strings) and about 200 bytes of bookkeeping; zipName then adds a
// decoded name of up to three bytes per raw byte. A directory of maxZipDir bytes of cp437 names,
// the costliest, takes 44 MiB of heap to load (and to refuse afterwards for what its members
// declare; TestCostliestListing), under the 64 MiB a refusal may add to the daemon's RSS. The
// per-entry bounds refuse the hostile shapes at their first entry, before the total does.
//
// Real ROM archives stay far below them: MAME's largest merged sets list a few thousand 8.3 names
// (under 1 MiB of directory), and a DOS or Windows game of 20,000 files (the installer's member
// limit) with 100-byte paths and NTFS and extended times takes 3.8 MB, 6.6 MB if every path is
// repeated in an Info-ZIP Unicode Path field and carries a zip64 field.
const (
	maxZipDir = 8 << 20
	// Linux's PATH_MAX; a Windows path (260 UTF-16 units) is at most 780 bytes of UTF-8.
	maxZipName = 4 << 10
	// An Info-ZIP Unicode Path or Unicode Comment field repeats its name or comment (4 KiB
	// each); the other fields writers add (zip64, NTFS and Unix times, ownership, AES) are under
	// 100 bytes in all, and the rest is room for the certificate fields of signed archives.
	maxZipExtra = 16 << 10
	// Per-entry comments are a line of text where they exist at all.
	maxZipComment = 4 << 10
	// Go's reader reads the end records and one spare directory header besides the directory:
	// a 1 KiB then a 65 KiB tail, the zip64 locator and record, a header and its fields at the
	// recorded offset, and a 4 KiB read-ahead.
	zipEndReads = 128 << 10
)

var (
	sigCentral = []byte("PK\x01\x02")
	sigEnd     = []byte("PK\x05\x06")
	sigLoc64   = []byte("PK\x06\x07")
	sigEnd64   = []byte("PK\x06\x06")
)

// errDirEscaped: Go's reader read past what checkCentral bounded, so it was walking a directory
// from somewhere checkCentral did not. That is a bug of checkCentral's copy of Go's rules (the fuzz
// target fails on it); the guard refuses the archive rather than load what nobody bounded.
var errDirEscaped = errors.New("zip reader read past the central directory the cabinet checked")

// listingTooLarge is the error of an archive whose listing is over a bound: ErrListingTooLarge,
// and so ErrTooLarge too.
func listingTooLarge(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrListingTooLarge)...)
}

// zipEnd is what Go's zip reader (archive/zip readDirectoryEnd, go1.26) makes of the end of an
// archive: the declared directory and the offsets it walks the directory from. Its rules are
// copied here, quirks included, because the bound is only as good as its agreement with them: a
// walk from another offset would load a directory nobody counted.
type zipEnd struct {
	records, dirSize uint64 // as declared
	zip64            bool   // the declarations come from a zip64 record
	// starts holds where Go walks the directory: the offset the directory's size implies, and
	// the recorded one when the two differ and Go may fall back to it. Empty: Go's reader fails
	// before walking.
	starts []int64
}

// findZipEnd finds the end-of-central-directory record. found=false: there is none, or none Go's
// reader accepts, so the file is not a zip and RomM's hash is the raw bytes (Python's zipfile
// finds the same record in the last 64 KiB; a last record whose comment runs past the end of the
// file, which Python reads and Go refuses, is hashed raw here, as before).
func findZipEnd(f *os.File, size int64) (end zipEnd, found bool, err error) {
	const eocdLen, maxComment = 22, 65535
	tail := min(int64(eocdLen+maxComment), size)
	buf := make([]byte, tail)
	if _, err := f.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return zipEnd{}, false, fmt.Errorf("hash rom: %w", err)
	}
	// Go takes the last signature that has room for a record after it, and fails if its comment
	// does not fit.
	at := -1
	if len(buf) >= eocdLen {
		at = bytes.LastIndex(buf[:len(buf)-eocdLen+len(sigEnd)], sigEnd)
	}
	if at < 0 || at+eocdLen+int(binary.LittleEndian.Uint16(buf[at+20:])) > len(buf) {
		return zipEnd{}, false, nil
	}
	rec := buf[at:]
	end.records = uint64(binary.LittleEndian.Uint16(rec[10:]))
	end.dirSize = uint64(binary.LittleEndian.Uint32(rec[12:]))
	dirOff := uint64(binary.LittleEndian.Uint32(rec[16:]))
	dirEnd := size - tail + int64(at)
	// Go looks for zip64 records when the 16-bit count or the 32-bit offset is saturated, or the
	// 32-bit size is 0xffff (sic: not 0xffffffff).
	if end.records == 0xffff || end.dirSize == 0xffff || dirOff == 0xffffffff {
		if loc := dirEnd - 20; loc >= 0 {
			var l [20]byte
			if _, err := f.ReadAt(l[:], loc); err != nil {
				return zipEnd{}, true, fmt.Errorf("hash rom: %w", err)
			}
			p := int64(binary.LittleEndian.Uint64(l[8:]))
			if bytes.Equal(l[:4], sigLoc64) && binary.LittleEndian.Uint32(l[4:]) == 0 && binary.LittleEndian.Uint32(l[16:]) == 1 && p >= 0 {
				var r [56]byte
				if _, err := f.ReadAt(r[:], p); err != nil || !bytes.Equal(r[:4], sigEnd64) {
					return end, true, nil // Go fails: no walk
				}
				end.zip64, dirEnd = true, p
				end.records = binary.LittleEndian.Uint64(r[32:])
				end.dirSize = binary.LittleEndian.Uint64(r[40:])
				dirOff = binary.LittleEndian.Uint64(r[48:])
			}
		}
	}
	if end.dirSize > 1<<63-1 || dirOff > 1<<63-1 {
		return end, true, nil
	}
	// The same int64 arithmetic as Go's, wrap-around included.
	base := dirEnd - int64(end.dirSize) - int64(dirOff)
	if o := base + int64(dirOff); o >= 0 && o < size {
		end.starts = append(end.starts, o)
		if base > 0 {
			// Go walks from the recorded offset instead when a valid header is there.
			end.starts = append(end.starts, int64(dirOff))
		}
	}
	return end, true, nil
}

// checkCentral bounds the central directory before Go's reader loads it, for every start it may
// walk from: the declared entry count (Go sizes its entry table by it) and size, the number of
// entries, each entry's name, extra field and comment, and the bytes walked (the declared size
// may lie; Go walks headers until one does not parse). It returns whether the file is a zip at all,
// and the most bytes a walk covered. It reads the directory once per start, in 64 KiB reads.
func checkCentral(f *os.File, size int64, maxMembers int) (isZip bool, walked int64, err error) {
	end, found, err := findZipEnd(f, size)
	if err != nil || !found {
		return false, 0, err
	}
	if len(end.starts) > 0 && end.zip64 && end.records > uint64(maxMembers) {
		return true, 0, listingTooLarge("zip directory declares %d entries, over the %d the cabinet reads", end.records, maxMembers)
	}
	for _, start := range end.starts {
		n, err := walkCentral(f, start, size, end.dirSize, maxMembers)
		if err != nil {
			return true, 0, err
		}
		walked = max(walked, n)
	}
	return true, walked, nil
}

// walkCentral walks the directory from off, header by header, as Go's reader will (which stops
// at the first header without the signature, or cut short by the end of the file), and refuses
// it at the first bound it goes over. declared is refused only once a header is there: a stray end
// record in a file that is no zip is not a directory Go loads.
func walkCentral(f *os.File, off, size int64, declared uint64, maxMembers int) (int64, error) {
	if off < 0 || off >= size {
		return 0, nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, off, size-off), chunk)
	var hdr [46]byte
	var walked int64
	for n := 0; ; n++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return walked, nil
			}
			return 0, fmt.Errorf("hash rom: %w", err)
		}
		if !bytes.Equal(hdr[:4], sigCentral) {
			return walked, nil
		}
		if n == 0 && declared > maxZipDir {
			return 0, listingTooLarge("zip central directory of %d bytes, over the %d the cabinet reads", declared, maxZipDir)
		}
		if n >= maxMembers {
			return 0, listingTooLarge("zip holds over %d entries", maxMembers)
		}
		name := int64(binary.LittleEndian.Uint16(hdr[28:]))
		extra := int64(binary.LittleEndian.Uint16(hdr[30:]))
		comment := int64(binary.LittleEndian.Uint16(hdr[32:]))
		switch {
		case name > maxZipName:
			return 0, listingTooLarge("zip entry name of %d bytes, over the %d the cabinet reads", name, maxZipName)
		case extra > maxZipExtra:
			return 0, listingTooLarge("zip entry extra field of %d bytes, over the %d the cabinet reads", extra, maxZipExtra)
		case comment > maxZipComment:
			return 0, listingTooLarge("zip entry comment of %d bytes, over the %d the cabinet reads", comment, maxZipComment)
		}
		walked += int64(len(hdr)) + name + extra + comment
		if walked > maxZipDir {
			return 0, listingTooLarge("zip central directory of at least %d bytes, over the %d the cabinet reads", walked, maxZipDir)
		}
		if _, err := r.Discard(int(name + extra + comment)); err != nil {
			if err == io.EOF {
				return walked, nil
			}
			return 0, fmt.Errorf("hash rom: %w", err)
		}
	}
}

// dirGuard is the io.ReaderAt Go's reader loads the directory through: while armed it reads no
// more than checkCentral walked plus the end records, so whatever Go makes of an archive, the
// directory it loads is one that was bounded. Disarmed, it reads members without a bound of its
// own (MaxExpandedBytes applies to them).
type dirGuard struct {
	f    *os.File
	left int64 // bytes it may still read; armed while >= 0
}

func (g *dirGuard) ReadAt(p []byte, off int64) (int, error) {
	if g.left >= 0 {
		if int64(len(p)) > g.left {
			g.left = 0
			return 0, fmt.Errorf("%w: %w", errDirEscaped, ErrListingTooLarge)
		}
		g.left -= int64(len(p))
	}
	return g.f.ReadAt(p, off)
}
