package retroarch

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits for SHOW_MSG text.
const (
	// MaxMessageRunes bounds a message; it matches the MCP tool's limit and
	// keeps the OSD line readable.
	MaxMessageRunes = 200
	// maxDatagram is what RetroArch reads of one datagram: recvfrom into a
	// 2048-byte buffer minus the terminating NUL (1.17+ source). Anything
	// longer is cut off silently. 200 runes of at most 4 bytes stay far below.
	maxDatagram = 2047
	showMsg     = "SHOW_MSG"
)

// ValidateMessage checks that text can go out as one SHOW_MSG line: valid
// UTF-8, not empty or blank (RetroArch would show stale bytes of an earlier
// datagram for an empty argument), no newline (it would split the datagram
// into a second command), no control or line/paragraph separator characters,
// at most MaxMessageRunes. Errors wrap ErrInvalidMessage and say what to fix.
func ValidateMessage(text string) error {
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: it is not valid UTF-8 text", ErrInvalidMessage)
	}
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w: it is empty; give a line of text to show", ErrInvalidMessage)
	}
	for _, r := range text {
		if r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' {
			return fmt.Errorf("%w: it must be a single line; remove the line breaks", ErrInvalidMessage)
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: it contains control character %U; remove it", ErrInvalidMessage, r)
		}
	}
	if n := utf8.RuneCountInString(text); n > MaxMessageRunes {
		return fmt.Errorf("%w: it has %d characters, at most %d fit; shorten it", ErrInvalidMessage, n, MaxMessageRunes)
	}
	if len(showMsg)+1+len(text) > maxDatagram {
		return fmt.Errorf("%w: it is %d bytes, too long for one command; shorten it", ErrInvalidMessage, len(text))
	}
	return nil
}
