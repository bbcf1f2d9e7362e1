package osupdate

import (
	"github.com/batocera-cabinet/cabinet/daemon/sysexec"

	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseCheck reads a check's stdout and exit status.
func parseCheck(out []byte, code int) (Result, error) {
	switch code {
	case exitUpdate, exitUpToDate:
		v, err := parseVersion(out)
		if err != nil {
			return Result{}, err
		}
		if v == "" {
			// batocera-upgrade offline: see the package comment.
			return Result{}, fmt.Errorf("%w (no version came back)", ErrOffline)
		}
		return Result{Latest: v, Available: code == exitUpdate}, nil
	case exitNoServer:
		return Result{}, ErrOffline
	case exitNoCommand:
		return Result{}, ErrUnsupported
	}
	return Result{}, fmt.Errorf("exit status %d", code)
}

// parseVersion reads the one line a check prints: the published
// batocera.version ("43 2026/05/14 10:00", "44-dev-0a1b2c3d 2026/06/01 12:00"),
// or nothing. It must be printable, at most MaxVersion bytes, and start
// with a digit, as every Batocera version does: a web server's error
// page is not a version.
func parseVersion(out []byte) (string, error) {
	s := strings.TrimSuffix(string(out), "\n")
	s = strings.TrimSuffix(s, "\r") // a batocera.version saved with CRLF
	if strings.ContainsAny(s, "\r\n") {
		return "", fmt.Errorf("%w %s: want one line", ErrMalformed, snippet(out))
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", nil
	case len(s) > MaxVersion:
		return "", fmt.Errorf("%w %s: a version is at most %d bytes", ErrMalformed, snippet(out), MaxVersion)
	case !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return "", fmt.Errorf("%w %s: a version is printable text", ErrMalformed, snippet(out))
	case s[0] < '0' || s[0] > '9':
		return "", fmt.Errorf("%w %s: want a Batocera version such as \"43 2026/05/14 10:00\"", ErrMalformed, snippet(out))
	}
	return s, nil
}

// snippet quotes at most sysexec.MaxSnippet characters of b.
func snippet(b []byte) string { return sysexec.Snippet(b) }
