package romhash

import (
	"archive/zip"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// romExtension is RomM's compute_file_extension (models/base.py L15, L49): the first match of
// \.(([a-z]+\.)*\w+)$, so every part but the last is lowercase ASCII letters. "Foo.tar.gz" gives
// "tar.gz", "Foo.nes.zip" gives "nes.zip", "Foo.NES.zip" gives "zip". Python's $ also matches
// before a final newline.
func romExtension(name string) string {
	name = strings.TrimSuffix(name, "\n")
	for i := 0; i < len(name); i++ {
		if name[i] == '.' && extTail(name[i+1:]) {
			return name[i+1:]
		}
	}
	return ""
}

func extTail(s string) bool {
	parts := strings.Split(s, ".")
	for _, p := range parts[:len(parts)-1] {
		if p == "" {
			return false
		}
		for j := 0; j < len(p); j++ {
			if p[j] < 'a' || p[j] > 'z' {
				return false
			}
		}
	}
	last := parts[len(parts)-1]
	if last == "" {
		return false
	}
	for _, r := range last {
		// Python's \w on str: alphanumeric (str.isalnum) or underscore.
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return false
		}
	}
	return true
}

// pySuffix is pathlib's PurePath.suffix, lowercased as _calculate_rom_hashes uses it (L641).
func pySuffix(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i > 0 && i < len(name)-1 {
		return strings.ToLower(name[i:])
	}
	return ""
}

// pyBase is pathlib's Path(name).name for an archive member path: the last part that is neither
// empty nor ".". It allocates nothing: it runs on every member name of a listing.
func pyBase(name string) string {
	for {
		i := strings.LastIndexByte(name, '/')
		if part := name[i+1:]; part != "" && part != "." {
			return part
		}
		if i < 0 {
			return ""
		}
		name = name[:i]
	}
}

// RomM's DEFAULT_EXCLUDED_FILES and DEFAULT_EXCLUDED_EXTENSIONS (config/config_manager.py L34-53),
// applied to archive members (utils/archives.py read_zip_archive_files) and, as the defaults of
// EXCLUDED_MULTI_PARTS_*, to the files of a folder ROM. A server can add its own in config.yml;
// those cannot be known here.
var (
	excludedNames = []string{".DS_Store", ".localized", ".Trashes", ".stfolder", "@SynoResource", "gamelist.xml", "metadata.pegasus.txt"}
	excludedExts  = []string{"db", "ini", "tmp", "bak", "lock", "log", "cache", "crdownload"}
)

// excluded reports whether RomM skips a member or folder file with this base name. The only glob
// of the defaults is "*:Zone.Identifier" (fnmatch, case-sensitive on POSIX).
func excluded(base string) bool {
	lower := strings.ToLower(base)
	for _, e := range excludedExts {
		if strings.HasSuffix(lower, "."+e) {
			return true
		}
	}
	for _, n := range excludedNames {
		if base == n {
			return true
		}
	}
	return strings.HasSuffix(base, ":Zone.Identifier")
}

// cp437 is the upper half of code page 437, which Python's zipfile uses for names without the
// UTF-8 flag.
const cp437 = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0"

var cp437Runes = sync.OnceValue(func() []rune { return []rune(cp437) })

// zipName is the member name as Python 3.13's zipfile reports it (RomM's image runs 3.13): UTF-8
// when flag bit 11 is set (invalid UTF-8 raises, and RomM's scan fails: ErrNoHash), else cp437;
// then the Info-ZIP Unicode Path extra field (0x7075) when its crc matches the raw name; then cut
// at the first NUL. A malformed extra field makes zipfile reject the whole archive (bad=true:
// RomM hashes it raw).
func zipName(f *zip.FileHeader) (name string, bad bool, err error) {
	raw := f.Name
	if f.Flags&0x800 != 0 {
		if !utf8.ValidString(raw) {
			return "", false, ErrNoHash
		}
		name = raw
	} else {
		var b strings.Builder
		b.Grow(len(raw) + 2*high(raw)) // once: cp437's upper half is at most 3 bytes of UTF-8
		for i := 0; i < len(raw); i++ {
			if c := raw[i]; c < 0x80 {
				b.WriteByte(c)
			} else {
				b.WriteRune(cp437Runes()[c-0x80])
			}
		}
		name = b.String()
	}
	name = cutNUL(name)
	extra := f.Extra
	// The raw name's crc is taken once, however many Unicode Path fields the entry repeats.
	var rawCRC uint32
	crcDone := false
	for len(extra) >= 4 {
		tag, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		if n+4 > len(extra) {
			return "", true, nil // "Corrupt extra field"
		}
		if tag == 0x7075 {
			data := extra[4 : 4+n]
			if len(data) < 5 {
				return "", true, nil // struct.error → BadZipFile
			}
			if !crcDone {
				rawCRC, crcDone = crc32.ChecksumIEEE([]byte(raw)), true
			}
			if data[0] == 1 && binary.LittleEndian.Uint32(data[1:]) == rawCRC {
				up := string(data[5:])
				if !utf8.ValidString(up) {
					return "", false, ErrNoHash
				}
				if up != "" {
					name = cutNUL(up)
				}
			}
		}
		extra = extra[4+n:]
	}
	return name, false, nil
}

// high counts the bytes of s outside ASCII.
func high(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			n++
		}
	}
	return n
}

func cutNUL(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}
