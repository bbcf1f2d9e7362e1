package untrusted

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"empty", "", 10, ""},
		{"clean ascii", "Super Mario Bros. (World)", 255, "Super Mario Bros. (World)"},
		{"clean unicode", "ストリートファイターII", 255, "ストリートファイターII"},
		{"trim and collapse", "  Pac \t Man \n", 255, "Pac Man"},
		{"newlines become spaces", "line1\r\nline2\nline3", 255, "line1 line2 line3"},
		{"c0 controls", "a\x00b\x07c\x1bd\x7f", 255, "abcd"},
		{"c1 controls", "a\u0080b\u009fc", 255, "abc"},
		{"nel is whitespace", "a\u0085b", 255, "a b"},
		{"bidi overrides", "evil\u202egnp.exe\u202c", 255, "evilgnp.exe"},
		{"bidi marks and isolates", "\u200ea\u200fb\u2066c\u2069d\u061c", 255, "abcd"},
		{"zero width", "z\u200bw\u200cj\u200dn\u2060b\ufeffom", 255, "zwjnbom"},
		{"tags", "hi\U000E0041\U000E0042\U000E007F there", 255, "hi there"},
		{"soft hyphen", "Street\u00adFighter", 255, "StreetFighter"},
		{"nbsp and ideographic space", "a\u00a0\u3000b", 255, "a b"},
		{"line separator", "a\u2028b", 255, "a b"},
		{"invalid utf8", "bad\xffbyte", 255, "bad\ufffdbyte"},
		{"truncated utf8", "end\xe3\x81", 255, "end\ufffd\ufffd"},
		{"noncharacters", "a\ufffeb\uffffc\ufdd0d", 255, "abcd"},
		{"only junk", "\u200b \u202e\t", 255, ""},
		{"cap exact", "abcdef", 6, "abcdef"},
		{"cap cut", "abcdefg", 6, "abcde…"},
		{"cap never splits a rune", "ééééé", 3, "éé…"},
		{"cap trims space before ellipsis", "abc defg", 5, "abc…"},
		{"cap one", "abc", 1, "…"},
		{"no cap", strings.Repeat("x", 300), 0, strings.Repeat("x", 300)},
		{"cap after collapse", "a    b", 3, "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, tt.max); got != tt.want {
				t.Errorf("Clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"clean", "Line one.\nLine two.", 100, "Line one.\nLine two."},
		{"paragraph kept", "One.\n\nTwo.", 100, "One.\n\nTwo."},
		{"blank lines collapse", "One.\n\n\n\nTwo.", 100, "One.\n\nTwo."},
		{"crlf and cr", "a\r\nb\rc", 100, "a\nb\nc"},
		{"unicode separators", "a\u2028b\u2029c", 100, "a\nb\nc"},
		{"spaces around breaks", "  a  \n   b \t ", 100, "a\nb"},
		{"leading and trailing breaks", "\n\n a\n\n", 100, "a"},
		{"controls and bidi", "a\x1b[31mred\u202e\nb", 100, "a[31mred\nb"},
		{"whitespace-only lines", "a\n \t \nb", 100, "a\n\nb"},
		{"cap", "abc\ndefgh", 6, "abc\nd…"},
		{"cap drops break before ellipsis", "abc\n\ndefgh", 5, "abc…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CleanText(tt.in, tt.max); got != tt.want {
				t.Errorf("CleanText(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// TestCleanNoAllocWhenClean guards the fast path: clean input comes back as is, with no allocation.
func TestCleanNoAllocWhenClean(t *testing.T) {
	inputs := []string{"Plain Game", "Super Mario Bros. (World)", "ストリートファイターII ダッシュ", "Pokémon – Edição Azul"}
	for _, in := range inputs {
		if allocs := testing.AllocsPerRun(100, func() { _ = Clean(in, 255) }); allocs != 0 {
			t.Errorf("Clean(%q) allocates %v times, want 0", in, allocs)
		}
		text := in + "\n\n" + in
		if allocs := testing.AllocsPerRun(100, func() { _ = CleanText(text, 4096) }); allocs != 0 {
			t.Errorf("CleanText(%q) allocates %v times, want 0", text, allocs)
		}
	}
}

// checkInvariants is shared by the tests and the fuzz targets.
func checkInvariants(t *testing.T, fn func(string, int) string, in string, max int, multiline bool) {
	t.Helper()
	out := fn(in, max)
	if !utf8.ValidString(out) {
		t.Fatalf("output %q is not valid UTF-8", out)
	}
	if max > 0 && utf8.RuneCountInString(out) > max {
		t.Fatalf("output %q has %d runes, cap %d", out, utf8.RuneCountInString(out), max)
	}
	for _, r := range out {
		if r == '\n' && multiline {
			continue
		}
		if r != ' ' && (space(r) || drop(r)) {
			t.Fatalf("output %q contains forbidden rune %U", out, r)
		}
	}
	if out != strings.TrimSpace(out) {
		t.Fatalf("output %q is not trimmed", out)
	}
	if strings.Contains(out, "  ") {
		t.Fatalf("output %q has a double space", out)
	}
	if again := fn(out, max); again != out {
		t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
	}
}

func TestInvariantsOnSamples(t *testing.T) {
	samples := []string{"", " ", "\n", "a\n\n\nb", "\xff\xfe", "é\u0301", "\U0001F468\u200d\U0001F469", strings.Repeat("ab ", 200)}
	for _, s := range samples {
		for _, max := range []int{0, 1, 2, 5, 255} {
			checkInvariants(t, Clean, s, max, false)
			checkInvariants(t, CleanText, s, max, true)
		}
	}
}

func BenchmarkClean(b *testing.B) {
	clean := "Street Fighter II' - Champion Edition (World 920513)"
	dirty := "  Street\tFighter\u202e II\u200b' - Champion Edition\n(World 920513)  "
	b.Run("clean", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Clean(clean, 255)
		}
	})
	b.Run("dirty", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Clean(dirty, 255)
		}
	})
}
