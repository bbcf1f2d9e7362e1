package sysaudio

import (
	"github.com/batocera-cabinet/cabinet/daemon/sysexec"

	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// parseLevel reads getSystemVolume's answer: the default sink's volume
// in percent on one line ("80\n"), as batocera-audio cuts it out of
// pactl's sinks-raw listing.
func parseLevel(out []byte) (int, error) {
	line, err := oneLine(out)
	if err != nil {
		return 0, err
	}
	if len(line) > len(strconv.Itoa(maxReported)) || !allDigits(line) {
		return 0, fmt.Errorf("%w %s: want the volume in percent, such as \"80\"", ErrMalformed, snippet(out))
	}
	n, _ := strconv.Atoi(line) // digits only, at most 4: cannot fail
	if n > maxReported {
		return 0, fmt.Errorf("%w %s: a volume above %d%% is not one PipeWire reports", ErrMalformed, snippet(out), maxReported)
	}
	return n, nil
}

// parseMute reads getSystemMute's answer: "yes" or "no" on one line, the
// value of pactl's "Mute: yes".
func parseMute(out []byte) (bool, error) {
	line, err := oneLine(out)
	if err != nil {
		return false, err
	}
	switch line {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("%w %s: want \"yes\" or \"no\"", ErrMalformed, snippet(out))
}

// oneLine is out's single line without its newline. Nothing at all is
// ErrNoAudio (what batocera-audio prints when PipeWire is down); its
// usage text, which it prints for a command it does not know, is
// ErrUnsupported.
func oneLine(out []byte) (string, error) {
	s := strings.TrimSuffix(string(out), "\n")
	switch {
	case strings.TrimSpace(s) == "":
		return "", ErrNoAudio
	case isUsage(out):
		return "", ErrUnsupported
	case strings.ContainsAny(s, "\n\r"):
		return "", fmt.Errorf("%w %s: want one line", ErrMalformed, snippet(out))
	}
	return s, nil
}

// isUsage reports whether out is batocera-audio's usage text, which
// lists the setSystemVolume syntax.
func isUsage(out []byte) bool {
	return bytes.Contains(out, []byte(" setSystemVolume {"))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// snippet quotes at most sysexec.MaxSnippet characters of b.
func snippet(b []byte) string { return sysexec.Snippet(b) }
