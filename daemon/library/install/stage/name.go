package stage

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// maxNameBytes is NAME_MAX on ext4, exFAT (in UTF-16 units, which 255
	// bytes of UTF-8 never exceed) and btrfs, the filesystems Batocera's
	// share is formatted with.
	maxNameBytes = 255
	// maxExtBytes bounds what counts as an extension worth keeping when a name
	// is shortened: ".chd", ".m3u", ".7z" are kept, ". a long subtitle" is not.
	maxExtBytes = 16
	// maxDepth bounds the folders of a multi-file game; RomM sets nest one or
	// two levels, so eight is generous and keeps paths far below PATH_MAX.
	maxDepth = 8
)

// errBadName is wrapped by every refusal of CleanName and CleanRelPath.
var errBadName = errors.New("unusable file name")

// CleanName turns one untrusted file name from the server into a single safe
// path element, or refuses it when nothing usable is left.
//
// It drops control characters (C0, DEL, C1), Unicode bidi controls and
// zero-width characters, which can make "gnp.exe" display as "exe.png" or
// make two names look identical. It replaces '/', '\', the characters exFAT
// refuses (" * : < > ? |) and invalid UTF-8 bytes with '_'. It trims white
// space at both ends and dots at the end: Windows drops those, Linux's exFAT
// driver drops the dots unless mounted with keep_last_dots, and ES trims
// playlist lines, so such a name would not survive. It replaces a leading '.'
// with '_' because EmulationStation hides dot files, and shortens the name to
// 255 bytes at a rune boundary, keeping an extension of up to 16 bytes.
// Everything else (spaces, parentheses, apostrophes, accents, emoji, "con") is
// kept: on Linux they are ordinary names and they are what the household
// sees in ES.
//
// CleanName is deterministic and idempotent.
func CleanName(raw string) (string, error) {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRuneInString(raw[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteByte('_')
		case invisible(r):
		case strings.ContainsRune(`/\"*:<>?|`, r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	name := trimEdges(b.String())
	if strings.HasPrefix(name, ".") {
		name = "_" + name[1:]
	}
	name = shorten(name)
	if name == "" || name == "." || name == ".." {
		return "", fmt.Errorf("clean name %q: nothing printable is left; ask the RomM admin to rename the file: %w", raw, errBadName)
	}
	return name, nil
}

// invisible reports whether r is a character CleanName drops: it changes how
// a name displays or compares without being visible itself.
func invisible(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL and C1, NUL included
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069,
		r == 0x200E, r == 0x200F, r == 0x061C: // bidi embeddings, isolates, marks
		return true
	case r >= 0x200B && r <= 0x200D, r == 0x2060, r == 0xFEFF: // zero-width
		return true
	}
	return false
}

// trimEdges trims spaces at both ends and dots at the end until neither is
// left, so "a . " and "a. ." both become "a".
func trimEdges(s string) string {
	for {
		t := strings.TrimRight(strings.TrimFunc(s, unicode.IsSpace), ".")
		if t == s {
			return s
		}
		s = t
	}
}

// shorten cuts name to maxNameBytes without splitting a rune, keeping its
// extension so the emulator still recognises the file.
func shorten(name string) string {
	if len(name) <= maxNameBytes {
		return name
	}
	stem, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 && len(name)-i <= maxExtBytes {
		stem, ext = name[:i], name[i:]
	}
	stem = cutRunes(stem, maxNameBytes-len(ext))
	if ext == "" {
		// The cut may expose a trailing space or dot; trim it so a second
		// CleanName leaves the result unchanged.
		stem = trimEdges(stem)
	}
	return stem + ext
}

// cutRunes returns the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// CleanRelPath cleans the relative path of one file inside a multi-file game
// (RomM gives e.g. "disc1/track01.bin"). It splits on both '/' and '\'
// (sets packed on Windows use the latter), drops empty and "." elements,
// refuses ".." and more than 8 levels, and cleans each element with
// CleanName. The result is joined with '/'.
func CleanRelPath(raw string) (string, error) {
	return cleanRelPath(raw, maxDepth)
}

func cleanRelPath(raw string, depth int) (string, error) {
	elems := strings.FieldsFunc(raw, func(r rune) bool { return r == '/' || r == '\\' })
	clean := make([]string, 0, len(elems))
	for _, e := range elems {
		switch e {
		case ".":
			continue
		case "..":
			return "", fmt.Errorf("clean path %q: it climbs out of the game folder with \"..\"; ask the RomM admin to fix the set: %w", raw, errBadName)
		}
		c, err := CleanName(e)
		if err != nil {
			return "", fmt.Errorf("clean path %q: %w", raw, err)
		}
		clean = append(clean, c)
	}
	if len(clean) == 0 {
		return "", fmt.Errorf("clean path %q: no file name in it: %w", raw, errBadName)
	}
	if len(clean) > depth {
		return "", fmt.Errorf("clean path %q: %d folder levels, at most %d are installed; flatten the set on the RomM server: %w", raw, len(clean), depth, errBadName)
	}
	return strings.Join(clean, "/"), nil
}
