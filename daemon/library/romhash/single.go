package romhash

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
)

// partFile hashes one file by RomM's _calculate_rom_hashes (roms_handler.py L628-700), which
// decides on the last suffix or the libmagic MIME type, first match wins:
//
//	.zip or application/zip       largest member (zipLargest)
//	.tar or application/x-tar     largest regular member, any compression (tarLargest)
//	.gz                           largest member of a gzipped tar; any other .gz is hashed raw
//	.7z or x-7z-compressed        largest member through 7zz: ErrUnsupported
//	.bz2 or application/x-bzip2   the decompressed stream
//	anything else                 the raw bytes
//
// libmagic reports gzip as application/gzip, not the application/x-gzip RomM tests for, so gzip
// content only counts with the .gz suffix.
func (h *hasher) partFile(f *os.File, size int64, name string) (*digest, error) {
	suffix := pySuffix(name)
	mime, err := sniffMIME(f)
	if err != nil {
		return nil, err
	}
	d := newDigest()
	switch {
	case suffix == ".zip" || mime == mimeZip:
		err = h.zipLargest(f, size, d)
	case suffix == ".tar" || mime == mimeTar:
		err = h.tarLargest(f, d, false)
	case suffix == ".gz":
		err = h.tarLargest(f, d, true)
	case suffix == ".7z" || mime == mime7z:
		err = ErrUnsupported
	case suffix == ".bz2" || mime == mimeBzip2:
		err = h.bz2(f, d)
	default:
		err = h.raw(f, d)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

const (
	mimeZip   = "application/zip"
	mimeTar   = "application/x-tar"
	mime7z    = "application/x-7z-compressed"
	mimeBzip2 = "application/x-bzip2"
)

// sniffMIME stands in for libmagic on the four types RomM tests: the magic numbers libmagic keys
// them on. libmagic names some zips otherwise (jar, epub, office files); those are taken as zip
// here, which only matters for such a file without a .zip suffix.
func sniffMIME(f *os.File) (string, error) {
	var b [512]byte
	n, err := f.ReadAt(b[:], 0)
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("hash rom: %w", err)
	}
	m := b[:n]
	switch {
	case bytes.HasPrefix(m, []byte("PK\x03\x04")), bytes.HasPrefix(m, []byte("PK\x05\x06")):
		return mimeZip, nil
	case bytes.HasPrefix(m, []byte("7z\xbc\xaf\x27\x1c")):
		return mime7z, nil
	case bytes.HasPrefix(m, []byte("BZh")):
		return mimeBzip2, nil
	case n >= 262 && bytes.Equal(m[257:262], []byte("ustar")):
		return mimeTar, nil
	}
	return "", nil
}

// bz2 is archives.py read_bz2_file: bz2.BZ2File over the whole file, concatenated streams
// included. A truncated stream (EOFError) keeps what was hashed and appends the raw bytes, as the
// except clause does; invalid data is an OSError nothing catches, so RomM's scan fails: ErrNoHash.
func (h *hasher) bz2(f *os.File, d *digest) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("hash rom: %w", err)
	}
	err := h.drain(d, bzip2.NewReader(bufio.NewReaderSize(f, chunk)), true)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return h.raw(f, d)
	case isReadError(err):
		return ErrNoHash
	}
	return err
}
