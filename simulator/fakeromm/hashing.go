package fakeromm

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"path"
	"sort"
	"strings"
)

// Hashes are lowercase hex digests as RomM reports them; "" where RomM
// leaves a hash empty (a platform it does not hash, or no bytes at all).
type Hashes struct {
	CRC  string // crc_hash: CRC-32 (IEEE), 8 hex digits, big-endian
	MD5  string // md5_hash
	SHA1 string // sha1_hash
}

// Member is one entry of archive_members on an archive's RomFile.
type Member struct {
	Name string
	Size int64
	Hashes
}

// Which files RomM's scanner leaves out of archive and folder hashes
// (config/config_manager.py DEFAULT_EXCLUDED_EXTENSIONS and
// DEFAULT_EXCLUDED_FILES; fnmatch patterns on the base name).
var (
	excludedExts  = []string{"db", "ini", "tmp", "bak", "lock", "log", "cache", "crdownload"}
	excludedNames = []string{".DS_Store", ".localized", ".Trashes", ".stfolder", "@SynoResource",
		"*:Zone.Identifier", "gamelist.xml", "metadata.pegasus.txt"}
)

func excludedMember(name string) bool {
	base := path.Base(name)
	lower := strings.ToLower(base)
	for _, ext := range excludedExts {
		if strings.HasSuffix(lower, "."+ext) {
			return true
		}
	}
	for _, pat := range excludedNames {
		if ok, _ := path.Match(pat, base); ok || base == pat {
			return true
		}
	}
	return false
}

// hasher accumulates the three digests over a stream.
type hasher struct {
	crc  hash.Hash32
	md5  hash.Hash
	sha1 hash.Hash
	n    int64
}

func newHasher() *hasher {
	return &hasher{crc: crc32.NewIEEE(), md5: md5.New(), sha1: sha1.New()}
}

func (h *hasher) Write(p []byte) (int, error) {
	h.crc.Write(p)
	h.md5.Write(p)
	h.sha1.Write(p)
	h.n += int64(len(p))
	return len(p), nil
}

// sum blanks every digest of an empty stream, as RomM does: its
// _make_file_hash and ParsedRomFiles compare each hasher with its initial
// state (crc 0, the digests of no bytes) and report "" for those.
func (h *hasher) sum() Hashes {
	if h.n == 0 {
		return Hashes{}
	}
	out := Hashes{MD5: hex.EncodeToString(h.md5.Sum(nil)), SHA1: hex.EncodeToString(h.sha1.Sum(nil))}
	if c := h.crc.Sum32(); c != 0 {
		out.CRC = fmt.Sprintf("%08x", c)
	}
	return out
}

func hashBytes(b []byte) Hashes {
	h := newHasher()
	h.Write(b)
	return h.sum()
}

// hashArchive is RomM's rule for a ROM that is one archive
// (handler/filesystem/roms_handler.py get_rom_files, the ARCHIVE_READERS
// branch, and utils/archives.py read_zip_archive_files): the members,
// directories and excluded names skipped, sorted by their path as Python
// sorts str (code point order, so "DELTA.CFG" before "Delta ..." before
// "readme.txt"), are streamed through one set of hashers for the composite
// and one per member for archive_members. An archive that cannot be read
// in full, or has no eligible member, is hashed as raw bytes with no members.
func hashArchive(data []byte) (Hashes, []Member) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return hashBytes(data), nil
	}
	files := append([]*zip.File(nil), zr.File...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	all := newHasher()
	var members []Member
	for _, f := range files {
		if f.FileInfo().IsDir() || excludedMember(f.Name) {
			continue
		}
		one := newHasher()
		rc, err := f.Open()
		if err != nil {
			return hashBytes(data), nil
		}
		_, err = io.Copy(io.MultiWriter(all, one), rc)
		rc.Close()
		if err != nil {
			return hashBytes(data), nil
		}
		members = append(members, Member{Name: f.Name, Size: int64(f.UncompressedSize64), Hashes: one.sum()})
	}
	if len(members) == 0 {
		return hashBytes(data), nil
	}
	return all.sum(), members
}

// folderStream is what RomM hashes for one file of a folder ROM
// (_calculate_rom_hashes), for the file's own hashes and the ROM-level
// ones alike: a readable zip's largest member (the first of equal size, as
// Python's max picks), anything else raw.
func folderStream(name string, data []byte) []byte {
	if !isArchive(name) {
		return data
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(zr.File) == 0 {
		return data
	}
	largest := zr.File[0]
	for _, f := range zr.File[1:] {
		if f.UncompressedSize64 > largest.UncompressedSize64 {
			largest = f
		}
	}
	rc, err := largest.Open()
	if err != nil {
		return data
	}
	defer rc.Close()
	out, err := io.ReadAll(io.LimitReader(rc, maxFolderMember))
	if err != nil {
		return data
	}
	return out
}

// maxFolderMember bounds a decompressed member (the fixture's are KBs).
const maxFolderMember = 64 << 20

func isArchive(name string) bool { return strings.EqualFold(path.Ext(name), ".zip") }
