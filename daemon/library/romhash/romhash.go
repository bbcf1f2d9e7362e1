// Package romhash reproduces the crc32/md5/sha1 that RomM reports for a ROM file, so a file on the
// cabinet can be compared with a RomM ROM by content. RomM does not hash every file's raw bytes:
// archives are hashed by what they hold, with rules that depend on the file name. The rules here are
// those of rommapp/romm at 57badfd6 (backend/handler/filesystem/roms_handler.py get_rom_files and
// _calculate_rom_hashes, backend/utils/archives.py); the comments cite them.
//
// Everything is streamed and bounded by Limits: no member is read into memory, a file or an
// archive that would take more than the limits stops early with ErrTooLarge. An archive's listing,
// which the readers do hold in memory (a zip's central directory, a tar's member names), has fixed
// bounds besides, which no ROM archive reaches (ErrListingTooLarge).
package romhash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

var (
	// ErrTooLarge: the file, its expanded contents or its listing is over Limits or the bounds
	// of a listing (ErrListingTooLarge).
	ErrTooLarge = errors.New("romhash: file too large to hash within the limits; raise the limit or compare by name and size")
	// ErrListingTooLarge: the archive lists more members, or longer names and fields, than the
	// cabinet reads (a zip's central directory, a tar's member names): the shape of a damaged or
	// hostile archive, not of a ROM. It is ErrTooLarge too.
	ErrListingTooLarge error = listingError("romhash: the archive's list of members is larger than any ROM archive's; compare by name and size")
	// ErrUnsupported: RomM decompresses this format (7z, rar, xz, LZMA or Deflate64 zip members) and
	// the Go standard library cannot, so RomM's value cannot be reproduced here.
	ErrUnsupported = errors.New("romhash: RomM hashes this archive format by its contents, which the standard library cannot read; compare by name and size instead")
	// ErrNoHash: RomM stores no hash for this file (its scan blanks the hashes on corrupt compressed
	// data, or fails on the file), so there is nothing to compare with.
	ErrNoHash = errors.New("romhash: RomM records no hash for this file (corrupt or unreadable archive); compare by name and size instead")
)

// listingError is ErrListingTooLarge's type, which makes it ErrTooLarge as well.
type listingError string

func (e listingError) Error() string        { return string(e) }
func (e listingError) Is(target error) bool { return target == ErrTooLarge }

// Limits bound the work for one file. Zero fields take the defaults.
type Limits struct {
	MaxFileBytes     int64 // size of the file on disk; default 256 MiB
	MaxExpandedBytes int64 // bytes decompressed out of an archive, re-reads included; default 1 GiB
	MaxMembers       int   // entries in an archive, or files in a folder; default 10000
}

// Defaults of Limits.
const (
	DefaultMaxFileBytes     = 256 << 20
	DefaultMaxExpandedBytes = 1 << 30
	DefaultMaxMembers       = 10000
)

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxExpandedBytes <= 0 {
		l.MaxExpandedBytes = DefaultMaxExpandedBytes
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultMaxMembers
	}
	return l
}

// Member is one hashed entry: an archive member (an item of RomM's RomFile.archive_members, whose
// hashes RomM never blanks) or, for Folder, one file of the folder (a RomFile, blanked like Sums).
type Member struct {
	Name           string // path inside the archive or the folder, '/'-separated
	Size           int64  // the size the archive declares (RomM's "size"), or the file's size
	CRC, MD5, SHA1 string
}

// Sums is what RomM reports for a ROM file: lowercase hex, crc32 as 8 digits. A field is "" where
// RomM blanks it: RomM's _make_file_hash (roms_handler.py L136-147) leaves the crc empty when the
// crc32 is 0 and the md5/sha1 empty when nothing was hashed.
type Sums struct {
	CRC, MD5, SHA1 string
	// Members is RomM's archive_members: set when the file is a .zip/.tar[.gz|.bz2]/.tgz/.tbz2
	// that RomM hashes as the composite of its members, in name order. Nil when it was hashed raw or
	// by its largest member.
	Members []Member
	// Files is set by Folder: every file RomM lists for a multi-file ROM, with its own hashes.
	Files []Member
}

// File hashes one ROM file the way RomM reports it when the file is a single-file ROM (a file
// directly in the platform folder); see FileContext.
func File(path string, lim Limits) (Sums, error) {
	return FileContext(context.Background(), path, lim)
}

// FileContext is File, stopped by ctx between chunks. RomM's rule (get_rom_files, L461-610):
//
//   - The extension is RomM's fs_extension: the longest ".a.b.c" tail whose inner parts are
//     lowercase letters (models/base.py EXTENSION_REGEX), lowercased. If it is .zip, .tar, .tar.gz,
//     .tgz, .tar.bz2, .tbz2 (or .tar.xz/.txz/.7z/.rar: ErrUnsupported), the file is hashed as the
//     concatenation of its members in name order, excluding directories and RomM's default
//     excluded names and extensions, with per-member sums in Members. An archive that cannot be
//     read in full, is empty or holds only excluded entries is hashed raw.
//   - Otherwise the file is hashed by _calculate_rom_hashes (see the per-file rule in single.go):
//     raw bytes, or the largest member of a zip or tar, or a decompressed .bz2. So "Foo.nes.zip"
//     (fs_extension "nes.zip") is hashed by its largest member, without Members.
func FileContext(ctx context.Context, path string, lim Limits) (Sums, error) {
	return fileNamed(ctx, path, filepath.Base(path), lim)
}

// RomFile hashes one file of a ROM kept at path under another name (a
// download in progress has a temporary one): name is RomM's file name,
// which picks RomM's rule. A file of a multi-file ROM (inFolder) is hashed
// by the per-file rule, as FolderContext does, never as a composite.
func RomFile(ctx context.Context, path, name string, inFolder bool, lim Limits) (Sums, error) {
	if !inFolder {
		return fileNamed(ctx, path, name, lim)
	}
	h := newHasher(ctx, lim)
	f, size, err := h.open(path)
	if err != nil {
		return Sums{}, err
	}
	defer f.Close()
	d, err := h.partFile(f, size, name)
	if err != nil {
		return Sums{}, err
	}
	var s Sums
	s.CRC, s.MD5, s.SHA1 = d.blanked()
	return s, nil
}

func fileNamed(ctx context.Context, path, name string, lim Limits) (Sums, error) {
	h := newHasher(ctx, lim)
	f, size, err := h.open(path)
	if err != nil {
		return Sums{}, err
	}
	defer f.Close()
	switch ext := "." + strings.ToLower(romExtension(name)); ext {
	case ".zip":
		return h.zipComposite(f, size)
	case ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz":
		return h.tarComposite(f, size)
	case ".7z", ".rar":
		return Sums{}, fmt.Errorf("%s: %w", name, ErrUnsupported)
	}
	d, err := h.partFile(f, size, name)
	if err != nil {
		return Sums{}, err
	}
	var s Sums
	s.CRC, s.MD5, s.SHA1 = d.blanked()
	return s, nil
}

// open opens a regular file and checks its size against the limit.
func (h *hasher) open(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("hash rom: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("hash rom: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("hash rom %s: not a regular file; pass a ROM file", filepath.Base(path))
	}
	if fi.Size() > h.lim.MaxFileBytes {
		f.Close()
		return nil, 0, fmt.Errorf("hash rom %s: %d bytes over the %d-byte limit: %w", filepath.Base(path), fi.Size(), h.lim.MaxFileBytes, ErrTooLarge)
	}
	return f, fi.Size(), nil
}
