package stage

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanName(t *testing.T) {
	long := strings.Repeat("a", 250) + "é" + strings.Repeat("b", 40) // é straddles byte 251
	tests := []struct {
		name, raw, want string
		wantErr         bool
	}{
		{"plain", "Super Mario Bros. (World).nes", "Super Mario Bros. (World).nes", false},
		{"accents apostrophes emoji", "Pokémon - Édition Rouge 'n' Bleu 🎮.gb", "Pokémon - Édition Rouge 'n' Bleu 🎮.gb", false},
		{"traversal", "../../etc/passwd", "_._.._etc_passwd", false},
		{"slash", "a/b", "a_b", false},
		{"backslash", `a\b`, "a_b", false},
		{"NUL", "game\x00.iso", "game.iso", false},
		{"bidi RLO", "\u202egnp.exe", "gnp.exe", false},
		{"bidi isolates and marks", "a\u2066b\u2069c\u200e\u200f\u061c.bin", "abc.bin", false},
		{"zero width", "ze\u200bro\u200c\u200d\u2060\ufeff.chd", "zero.chd", false},
		{"exFAT refused", `what? "a"*b:c<d>e|f.zip`, "what_ _a__b_c_d_e_f.zip", false},
		{"invalid UTF-8", "caf\xe9.sfc", "caf_.sfc", false},
		{"literal replacement char kept", "a\ufffd.sfc", "a\ufffd.sfc", false},
		{"C1 control", "a\u0085b\u009fc", "abc", false},
		{"DEL", "a\x7fb", "ab", false},
		{"tabs newlines", "a\tb\nc\r", "abc", false},
		{"leading dot", ".hidden.nes", "_hidden.nes", false},
		{"leading spaces then dot", "  .x", "_x", false},
		{"trailing dots and spaces", "Game . . ", "Game", false},
		{"con kept", "con", "con", false},
		{"nbsp edges", "\u00a0Game\u00a0", "Game", false},
		{"dot", ".", "", true},
		{"dotdot", "..", "", true},
		{"space dot space", " . ", "", true},
		{"dots", "...", "", true},
		{"empty", "", "", true},
		{"only controls", "\x00\x01\x1f\u202e\u200b\ufeff", "", true},
		{"only spaces", "   ", "", true},
		{"long keeps ext", long + ".bin", strings.Repeat("a", 250) + ".bin", false},
		{"long multibyte at cut", long, strings.Repeat("a", 250) + "é" + strings.Repeat("b", 3), false},
		{"long ext too long is cut", strings.Repeat("x", 300) + "." + strings.Repeat("e", 20), strings.Repeat("x", 255), false},
		{"long cut exposes dot", strings.Repeat("x", 254) + ". tail" + strings.Repeat("y", 20), strings.Repeat("x", 254), false},
		{"long emoji no split", strings.Repeat("🎮", 70), strings.Repeat("🎮", 63), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CleanName(tt.raw)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CleanName(%q) error = %v, want error %v", tt.raw, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("CleanName(%q) = %q, want %q", tt.raw, got, tt.want)
			}
			if err == nil {
				checkName(t, tt.raw, got)
			}
		})
	}
}

func TestCleanRelPath(t *testing.T) {
	tests := []struct {
		name, raw, want string
		wantErr         bool
	}{
		{"one file", "game.chd", "game.chd", false},
		{"nested", "disc1/track01.bin", "disc1/track01.bin", false},
		{"backslashes", `disc1\track01.bin`, "disc1/track01.bin", false},
		{"empty and dot elements", "/./disc1//./track01.bin/", "disc1/track01.bin", false},
		{"dotdot refused", "disc1/../../etc/passwd", "", true},
		{"dotdot backslash refused", `..\x`, "", true},
		{"elements cleaned", ".hidden/a:b.bin", "_hidden/a_b.bin", false},
		{"element cleans to nothing", "disc1/.../x", "", true},
		{"dotdot disguised by zero width", "a/..\u200b/b", "", true},
		{"empty", "", "", true},
		{"only slashes", "///", "", true},
		{"eight levels", "1/2/3/4/5/6/7/f", "1/2/3/4/5/6/7/f", false},
		{"nine levels", "1/2/3/4/5/6/7/8/f", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CleanRelPath(tt.raw)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CleanRelPath(%q) error = %v, want error %v", tt.raw, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("CleanRelPath(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}

// checkName asserts the invariants every CleanName result keeps.
func checkName(t *testing.T, raw, got string) {
	t.Helper()
	switch {
	case got == "", got == ".", got == "..":
		t.Fatalf("CleanName(%q) = %q, an unusable name", raw, got)
	case len(got) > maxNameBytes:
		t.Fatalf("CleanName(%q) is %d bytes, over %d", raw, len(got), maxNameBytes)
	case !utf8.ValidString(got):
		t.Fatalf("CleanName(%q) = %q is not valid UTF-8", raw, got)
	case strings.ContainsAny(got, `/\"*:<>?|`):
		t.Fatalf("CleanName(%q) = %q holds a separator or a character exFAT refuses", raw, got)
	case got[0] == '.':
		t.Fatalf("CleanName(%q) = %q starts with a dot", raw, got)
	case strings.HasSuffix(got, ".") || strings.HasSuffix(got, " ") || strings.HasPrefix(got, " "):
		t.Fatalf("CleanName(%q) = %q has a space or dot at an edge", raw, got)
	}
	for _, r := range got {
		if invisible(r) {
			t.Fatalf("CleanName(%q) = %q keeps invisible %U", raw, got, r)
		}
	}
	again, err := CleanName(got)
	if err != nil || again != got {
		t.Fatalf("CleanName(CleanName(%q)) = %q, %v; want %q (idempotent)", raw, again, err, got)
	}
}

func FuzzCleanName(f *testing.F) {
	for _, s := range []string{
		"../../etc/passwd", "a/b", "game\x00.iso", "\u202egnp.exe", " . ", "...", "con",
		strings.Repeat("a", 250) + "é" + strings.Repeat("b", 40),
		strings.Repeat("x", 254) + ". tail" + strings.Repeat("y", 20),
		"\xff\xfe", ".a", "a\u00a0.", "\u200b.\u200b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CleanName(raw)
		if err != nil {
			return
		}
		checkName(t, raw, got)
	})
}

func FuzzCleanRelPath(f *testing.F) {
	for _, s := range []string{"disc1/track01.bin", `a\..\b`, "./a//b", "1/2/3/4/5/6/7/8/9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CleanRelPath(raw)
		if err != nil {
			return
		}
		elems := strings.Split(got, "/")
		if len(elems) > maxDepth {
			t.Fatalf("CleanRelPath(%q) = %q has %d levels", raw, got, len(elems))
		}
		for _, e := range elems {
			checkName(t, raw, e)
		}
		if again, err := CleanRelPath(got); err != nil || again != got {
			t.Fatalf("CleanRelPath(CleanRelPath(%q)) = %q, %v; want %q", raw, again, err, got)
		}
	})
}
