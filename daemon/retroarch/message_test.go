package retroarch

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateMessage(t *testing.T) {
	tests := []struct {
		name, text string
		ok         bool
	}{
		{"plain", "Dinner is ready!", true},
		{"accents and emoji", "Bon appétit 🎮", true},
		{"leading space kept", " indented", true},
		{"exactly the limit", strings.Repeat("é", MaxMessageRunes), true},
		{"empty: RetroArch would show stale bytes", "", false},
		{"blank", "   \t ", false},
		{"newline would be a second command", "hi\nQUIT", false},
		{"carriage return", "hi\r", false},
		{"line separator", "a\u2028b", false},
		{"paragraph separator", "a\u2029b", false},
		{"NUL", "a\x00b", false},
		{"escape", "a\x1b[2Jb", false},
		{"DEL", "a\x7fb", false},
		{"C1 control", "a\u0085b", false},
		{"tab", "a\tb", false},
		{"invalid UTF-8", "a\xffb", false},
		{"one over the limit", strings.Repeat("a", MaxMessageRunes+1), false},
	}
	for _, tt := range tests {
		err := ValidateMessage(tt.text)
		if (err == nil) != tt.ok {
			t.Errorf("%s: ValidateMessage(%q) = %v, want ok=%v", tt.name, tt.text, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("%s: error %v does not wrap ErrInvalidMessage", tt.name, err)
		}
	}
}

func FuzzValidateMessage(f *testing.F) {
	f.Add("hello")
	f.Add("a\nb")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		if ValidateMessage(text) != nil {
			return
		}
		// What passes must be one datagram and one command for RetroArch.
		wire := showMsg + " " + text
		if len(wire) > maxDatagram || strings.ContainsAny(text, "\n\r\x00") || strings.TrimSpace(text) == "" {
			t.Fatalf("ValidateMessage accepted %q", text)
		}
	})
}

func TestCommandNames(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Commands() {
		name := c.String()
		if name == "" || seen[name] {
			t.Errorf("command %d: name %q empty or duplicated", int(c), name)
		}
		seen[name] = true
	}
	if len(seen) != 11 {
		t.Errorf("got %d commands, want the 11 allowed ones", len(seen))
	}
	for _, n := range ConfigNames() {
		if n.String() == "" {
			t.Errorf("config name %d has no wire name", int(n))
		}
	}
	if Command(0).String() != "" || Command(99).String() != "" || ConfigName(0).String() != "" {
		t.Error("values outside the constants have wire names")
	}
}
