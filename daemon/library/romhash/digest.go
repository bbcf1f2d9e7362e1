package romhash

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
)

// digest runs RomM's three hashes over one stream.
type digest struct {
	crc  hash.Hash32
	md5  hash.Hash
	sha1 hash.Hash
	n    int64
}

func newDigest() *digest {
	return &digest{crc: crc32.NewIEEE(), md5: md5.New(), sha1: sha1.New()}
}

func (d *digest) Write(p []byte) (int, error) {
	d.crc.Write(p)
	d.md5.Write(p)
	d.sha1.Write(p)
	d.n += int64(len(p))
	return len(p), nil
}

// crcHex formats a crc32 as RomM's crc32_to_hex does (utils/hashing.py): 4 big-endian bytes in
// lowercase hex, so always 8 digits.
func crcHex(v uint32) string { return fmt.Sprintf("%08x", v) }

// member returns the unblanked sums, as RomM stores archive members (roms_handler.py L495-500).
func (d *digest) member(name string, size int64) Member {
	return Member{Name: name, Size: size, CRC: crcHex(d.crc.Sum32()),
		MD5: hex.EncodeToString(d.md5.Sum(nil)), SHA1: hex.EncodeToString(d.sha1.Sum(nil))}
}

// blanked returns the sums as _make_file_hash does: crc "" when the crc32 is 0 (RomM cannot tell
// that from "not hashed"), md5/sha1 "" when their state is the initial one, i.e. nothing was hashed.
func (d *digest) blanked() (crc, md5sum, sha1sum string) {
	if v := d.crc.Sum32(); v != 0 {
		crc = crcHex(v)
	}
	if d.n > 0 {
		md5sum = hex.EncodeToString(d.md5.Sum(nil))
		sha1sum = hex.EncodeToString(d.sha1.Sum(nil))
	}
	return crc, md5sum, sha1sum
}

// readError marks a failure of the archive reader (corrupt or truncated data), as opposed to the
// limits, the context or the file system. RomM reacts to those per reader; see the callers.
type readError struct{ err error }

func (e readError) Error() string { return "read archive: " + e.err.Error() }
func (e readError) Unwrap() error { return e.err }

func isReadError(err error) bool {
	var re readError
	return errors.As(err, &re)
}

// hasher carries the limits, the context and the one copy buffer of a File or Folder call.
type hasher struct {
	ctx      context.Context
	lim      Limits
	expanded int64 // bytes decompressed so far, against lim.MaxExpandedBytes
	buf      []byte
}

const chunk = 64 << 10

func newHasher(ctx context.Context, lim Limits) *hasher {
	return &hasher{ctx: ctx, lim: lim.withDefaults()}
}

// drain copies r into w in chunks, counting decompressed bytes against the limit when counted is
// set. Errors from r are readErrors; the context and the limit come back as they are.
func (h *hasher) drain(w io.Writer, r io.Reader, counted bool) error {
	if h.buf == nil {
		h.buf = make([]byte, chunk)
	}
	for {
		if err := h.ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(h.buf)
		if n > 0 {
			if counted {
				h.expanded += int64(n)
				if h.expanded > h.lim.MaxExpandedBytes {
					return fmt.Errorf("expanded contents over %d bytes: %w", h.lim.MaxExpandedBytes, ErrTooLarge)
				}
			}
			w.Write(h.buf[:n])
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ours(err) {
				return err
			}
			return readError{err}
		}
	}
}

// ours reports errors that are not the archive's fault: limits, context, unsupported formats.
func ours(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnsupported) || errors.Is(err, ErrNoHash) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// raw hashes the file's own bytes from the start into d.
func (h *hasher) raw(f *os.File, d *digest) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("hash rom: %w", err)
	}
	if err := h.drain(d, f, false); err != nil {
		if isReadError(err) {
			return fmt.Errorf("hash rom: %w", errors.Unwrap(err))
		}
		return err
	}
	return nil
}

// rawSums is the raw fallback RomM takes for an archive it cannot read (_hash_raw_archive, L540).
func (h *hasher) rawSums(f *os.File) (Sums, error) {
	d := newDigest()
	if err := h.raw(f, d); err != nil {
		return Sums{}, err
	}
	var s Sums
	s.CRC, s.MD5, s.SHA1 = d.blanked()
	return s, nil
}
