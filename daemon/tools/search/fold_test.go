package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLatinTable(t *testing.T) {
	if len(latin) != 0x180-0xc0 {
		t.Fatalf("latin table has %d entries, want %d (U+00C0..U+017F)", len(latin), 0x180-0xc0)
	}
	for _, tt := range []struct{ in, want string }{
		{"ÀÉÎÕÜ àéîõü", "aeiou aeiou"}, {"Ç ç Ñ ñ", "c c n n"}, {"Æsir æther", "aesir aether"},
		{"Straße ẞ", "strasse ss"}, {"Œuvre", "oeuvre"}, {"Þór", "thor"}, {"Øresund ø", "oresund o"},
		{"Ōkami", "okami"}, {"Łódź", "lodz"}, {"Ĳssel", "ijssel"}, {"Đakovo", "dakovo"}, {"ſ", "s"},
		{"Žižek", "zizek"}, {"Ÿ ÿ", "y y"}, {"İstanbul ı", "istanbul i"}, {"Ğ ğ Ş ş", "g g s s"},
		{"Ű ű Ů ů", "u u u u"}, {"Ŵ Ŷ Ź", "w y z"}, {"2×3÷4", "2 3 4"},
	} {
		if got := Fold(tt.in); got != tt.want {
			t.Errorf("Fold(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFold(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""}, {"  ", ""}, {"Super Mario Bros. (World)", "super mario bros world"},
		{"SUPER-MARIO", "super mario"}, {"Kirby's Dream Course 🌟", "kirbys dream course"},
		{"Kirby’s", "kirbys"}, {"ToeJam & Earl", "toejam and earl"}, {"Pac-Man", "pac man"},
		{"e\u0301te\u0301", "ete"}, {"ＦＺＥＲＯ", "fzero"}, {"Tom's $Game", "toms game"},
		{"ドラゴンクエスト", "ドラゴンクエスト"}, {"Ψ Ω", "ψ ω"}, {"a\x00b\tc\u202ed", "a b c d"},
		{"Metal Slug - Super Vehicle-001", "metal slug super vehicle 001"},
	} {
		if got := Fold(tt.in); got != tt.want {
			t.Errorf("Fold(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRoman(t *testing.T) {
	for in, want := range map[string]string{"2": "ii", "ii": "2", "4": "iv", "xx": "20", "1": "", "i": "",
		"21": "", "0": "", "02": "ii", "mario": "", "": "", "99999999999999999999": ""} {
		if got := roman(in); got != want {
			t.Errorf("roman(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		max  int
		want int
	}{
		{"mario", "mario", 1, 0}, {"mraio", "mario", 1, 1}, {"mario", "maro", 1, 1}, {"mario", "marioo", 1, 1},
		{"mario", "mxrxo", 1, 2}, {"abcdefgh", "abdcefhg", 2, 2}, {"short", "muchlongerword", 2, 3},
	} {
		if got := editDistance(tt.a, tt.b, tt.max); got != tt.want {
			t.Errorf("editDistance(%q, %q, %d): got %d, want %d", tt.a, tt.b, tt.max, got, tt.want)
		}
	}
}

// FuzzFold checks the key invariants for any name ES could send.
func FuzzFold(f *testing.F) {
	for _, s := range []string{"Super Mario Bros. (World)", "Pokémon", "ToeJam & Earl", "Straße", "\xff\xfe",
		"ＦＺＥＲＯ", "e\u0301", "Contra\x1b[31m", "İ", "ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := Fold(s)
		if !utf8.ValidString(k) {
			t.Fatalf("Fold(%q) = %q: not UTF-8", s, k)
		}
		if strings.HasPrefix(k, " ") || strings.HasSuffix(k, " ") || strings.Contains(k, "  ") {
			t.Fatalf("Fold(%q) = %q: stray spaces", s, k)
		}
		if again := Fold(k); again != k {
			t.Fatalf("Fold is not idempotent: Fold(%q) = %q, Fold of that = %q", s, k, again)
		}
		e := entry{key: k, bigrams: sig(k), initials: initialsOf(k)}
		for _, fuzzy := range []bool{false, true} {
			if tier, _ := newMatcher(s).match(&e, fuzzy); k != "" && tier < 0 && !fuzzy {
				t.Fatalf("the key %q of %q does not match its own name", k, s)
			}
		}
	})
}
