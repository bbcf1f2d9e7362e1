package sysaudio

import (
	"github.com/batocera-cabinet/cabinet/daemon/sysexec"

	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr error
	}{
		{"80\n", 80, nil},
		{"0\n", 0, nil},
		{"100", 100, nil},
		{"1000\n", 1000, nil},
		{"1001\n", 0, ErrMalformed},
		{"\n", 0, ErrNoAudio},
		{"", 0, ErrNoAudio},
		{"  \n", 0, ErrNoAudio},
		{"80\n\n", 0, ErrMalformed},
		{"80\r\n", 0, ErrMalformed},
		{" 80\n", 0, ErrMalformed},
		{"-5\n", 0, ErrMalformed},
		{"+5\n", 0, ErrMalformed},
		{"8O\n", 0, ErrMalformed},
		{"99999999999999999999\n", 0, ErrMalformed},
		{"80%\n", 0, ErrMalformed},
		{usage, 0, ErrUnsupported},
	}
	for _, tt := range tests {
		got, err := parseLevel([]byte(tt.in))
		if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("parseLevel(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseMute(t *testing.T) {
	tests := []struct {
		in      string
		want    bool
		wantErr error
	}{
		{"yes\n", true, nil},
		{"no\n", false, nil},
		{"no", false, nil},
		{"Mute: yes\n", false, ErrMalformed},
		{"YES\n", false, ErrMalformed},
		{"1\n", false, ErrMalformed},
		{"\n", false, ErrNoAudio},
		{"", false, ErrNoAudio},
		{"yes\nno\n", false, ErrMalformed},
		{usage, false, ErrUnsupported},
	}
	for _, tt := range tests {
		got, err := parseMute([]byte(tt.in))
		if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("parseMute(%q) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestSnippet(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"short", `"short"`},
		{"a\x00b\xffc", `"a\x00b\xffc"`},
		{"é", `"é"`},
	}
	for _, tt := range tests {
		if got := snippet([]byte(tt.in)); got != tt.want {
			t.Errorf("snippet(%q) = %s; want %s", tt.in, got, tt.want)
		}
	}
	long := snippet([]byte(strings.Repeat("\x01", 5000)))
	if utf8.RuneCountInString(long) > sysexec.MaxSnippet+30 || !strings.HasSuffix(long, "(5000 bytes)") {
		t.Errorf("snippet of 5000 bytes = %s (%d chars); want at most ~%d chars and the length", long, len(long), sysexec.MaxSnippet)
	}
}
