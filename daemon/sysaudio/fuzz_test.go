package sysaudio

import (
	"github.com/batocera-cabinet/cabinet/daemon/sysexec"

	"errors"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{"80\n", "0", "yes\n", "no\n", "\n", "", usage, "1000\n", "9999\n", "80\r\n", "\xff\xfe", "yes\nno"}

// An error may quote output, but never more than about maxSnippet chars.
const maxErrorLen = sysexec.MaxSnippet + 200

func FuzzParseLevel(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseLevel(b)
		if err != nil {
			checkError(t, err)
			return
		}
		if n < 0 || n > maxReported {
			t.Fatalf("parseLevel(%q) = %d: out of range", b, n)
		}
	})
}

func FuzzParseMute(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		muted, err := parseMute(b)
		if err != nil {
			checkError(t, err)
			return
		}
		if want := string(b) == "yes" || string(b) == "yes\n"; muted != want {
			t.Fatalf("parseMute(%q) = %v", b, muted)
		}
	})
}

func checkError(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNoAudio) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("error %q is none of ErrMalformed, ErrNoAudio, ErrUnsupported", err)
	}
	if s := err.Error(); utf8.RuneCountInString(s) > maxErrorLen || !utf8.ValidString(s) {
		t.Fatalf("error too long or not UTF-8 (%d chars): %q", len(s), s)
	}
}
