// Package untrusted cleans text that comes from outside the program (game names and descriptions from
// EmulationStation's argv and API, RomM/ROMarr metadata, server messages) before it reaches Home
// Assistant or a model: no control, bidi, zero-width, tag or other format characters, valid UTF-8,
// collapsed whitespace, and a hard cap in runes.
//
// Both functions return their argument unchanged, without allocating, when it is already clean, so
// callers can run every string through them on hot paths.
package untrusted

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis ends a string that was cut to fit its cap.
const Ellipsis = "…"

// Clean returns s as one line: invalid UTF-8 becomes U+FFFD, control characters (C0, C1), bidi
// controls, zero-width and other format (Cf) characters, Unicode tag characters and noncharacters
// are removed, every run of whitespace (tabs and newlines included) becomes one space, and the result
// is trimmed. If it then has more than maxRunes runes it is cut at a rune boundary and ends with "…"
// (the ellipsis counts in maxRunes). maxRunes <= 0 means no cap.
func Clean(s string, maxRunes int) string {
	if isCleanLine(s, maxRunes) {
		return s
	}
	return cleanSlow(s, maxRunes, false)
}

// CleanText is Clean for multi-line text such as game descriptions: line breaks (\n, \r\n, \r,
// U+2028, U+2029) are kept as \n, at most one empty line is kept between paragraphs, spaces are
// collapsed within a line and trimmed at both ends of every line, and leading and trailing empty
// lines are removed. The cap and the other removals are those of Clean.
func CleanText(s string, maxRunes int) string {
	if isCleanText(s, maxRunes) {
		return s
	}
	return cleanSlow(s, maxRunes, true)
}

// drop reports whether r is removed outright (never turned into a space).
func drop(r rune) bool {
	switch {
	case r < 0x80:
		// C0 controls and DEL; whitespace controls are handled before drop is asked.
		return r < 0x20 || r == 0x7f
	case r < 0xa0:
		return true // C1 controls
	case r == utf8.RuneError:
		return false // kept: it marks bytes that were not UTF-8
	case r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe:
		return true // noncharacters
	case r >= 0xe0000 && r <= 0xe007f:
		return true // tag characters (also Cf, listed for clarity)
	}
	// Cf covers the bidi controls (U+200E/F, U+202A–U+202E, U+2066–U+2069, U+061C), the zero-width
	// characters (U+200B–U+200D, U+2060, U+FEFF), the soft hyphen and the other invisible formatters.
	return unicode.Is(unicode.Cf, r)
}

// space reports whether r is whitespace that collapses into a single space.
func space(r rune) bool {
	if r < 0x80 {
		return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
	}
	return unicode.IsSpace(r)
}

// lineBreak reports whether r ends a line in CleanText. \r is handled by the caller (\r\n is one break).
func lineBreak(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029 || r == 0x85
}

// isCleanLine reports whether Clean would return s unchanged.
func isCleanLine(s string, maxRunes int) bool {
	n := 0
	prevSpace := true // a leading space is not clean
	for i := 0; i < len(s); {
		r, size, ok := nextRune(s, i)
		if !ok {
			return false
		}
		i += size
		n++
		if r == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		}
		if space(r) || drop(r) {
			return false
		}
		prevSpace = false
	}
	if len(s) > 0 && prevSpace {
		return false // trailing space
	}
	return maxRunes <= 0 || n <= maxRunes
}

// isCleanText reports whether CleanText would return s unchanged.
func isCleanText(s string, maxRunes int) bool {
	n := 0
	lineStart := true // at the start of a line: a space here is not clean
	prevSpace := false
	newlines := 0 // consecutive \n seen
	for i := 0; i < len(s); {
		r, size, ok := nextRune(s, i)
		if !ok {
			return false
		}
		i += size
		n++
		switch {
		case r == '\n':
			if prevSpace || n == 1 {
				return false // space before a break, or a leading break
			}
			newlines++
			if newlines > 2 {
				return false
			}
			lineStart, prevSpace = true, false
			continue
		case r == ' ':
			if prevSpace || lineStart {
				return false
			}
			prevSpace = true
		case space(r) || drop(r):
			return false
		default:
			prevSpace, lineStart = false, false
		}
		newlines = 0
	}
	if len(s) > 0 && (prevSpace || lineStart) {
		return false // trailing space or trailing break
	}
	return maxRunes <= 0 || n <= maxRunes
}

// cleanSlow builds the cleaned string. It is only reached for dirty input.
func cleanSlow(s string, maxRunes int, multiline bool) string {
	var b strings.Builder
	b.Grow(len(s))
	pendingSpace := false
	pendingBreaks := 0
	wrote := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if multiline && lineBreak(r) {
			if r == '\r' && i < len(s) && s[i] == '\n' {
				i++
			}
			pendingSpace = false // spaces at the end of a line go
			if wrote && pendingBreaks < 2 {
				pendingBreaks++
			}
			continue
		}
		if space(r) {
			pendingSpace = wrote && pendingBreaks == 0
			continue
		}
		if r != utf8.RuneError && drop(r) {
			continue
		}
		switch {
		case pendingBreaks > 0:
			b.WriteString("\n\n"[:pendingBreaks])
		case pendingSpace:
			b.WriteByte(' ')
		}
		pendingSpace, pendingBreaks = false, 0
		b.WriteRune(r) // RuneError from a bad byte is written as U+FFFD
		wrote = true
	}
	return capRunes(b.String(), maxRunes)
}

// capRunes cuts s (already clean) to maxRunes runes, ending it with the ellipsis.
func capRunes(s string, maxRunes int) string {
	if maxRunes <= 0 || utf8.RuneCountInString(s) <= maxRunes {
		return s
	}
	keep := maxRunes - 1 // room for the ellipsis
	cut := 0
	for i := range s {
		if keep == 0 {
			cut = i
			break
		}
		keep--
	}
	head := strings.TrimRight(s[:cut], " \n")
	return head + Ellipsis
}

// nextRune decodes the rune at s[i:] (ASCII without a call); ok is false for
// invalid UTF-8.
func nextRune(s string, i int) (r rune, size int, ok bool) {
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), 1, true
	}
	r, size = utf8.DecodeRuneInString(s[i:])
	return r, size, !(r == utf8.RuneError && size == 1)
}
