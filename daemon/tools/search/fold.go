// Package search is the game index behind batocera_find_games: ES's game
// names folded into search keys (case, punctuation and accents removed, "&"
// read as "and", Roman numerals matched to digits), an index built once per
// list generation, and ranked, filtered, paged queries over it.
//
// Matching is word based and order tolerant; each query word must occur in
// the name, as the start of one of its words or, less well ranked, anywhere
// in the name with its spaces removed ("pacman" finds "Pac-Man"). When nothing
// matches, words of four letters or more may be one edit away (a typo).
// Acronyms ("smw") and synonyms are not supported.
//
// It has no dependencies beyond the standard library and does no work at
// package initialisation.
package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// latin maps U+00C0..U+017F to lower-case ASCII. Upper-case letters in the
// table are markers for two-letter folds (see multi); a space separates
// words (× and ÷).
const latin = "" +
	// U+00C0 À..U+00DF ß
	"aaaaaaAceeeeiiiidnooooo ouuuuyTS" +
	// U+00E0 à..U+00FF ÿ
	"aaaaaaAceeeeiiiidnooooo ouuuuyTy" +
	// U+0100 Ā..U+017F ſ (Latin Extended-A, upper and lower alternating)
	"aaaaaa" + "cccccccc" + "dddd" + "eeeeeeeeee" + "gggggggg" + "hhhh" +
	"iiiiiiiiii" + "JJ" + "jj" + "kkk" + "llllllllll" + "nnnnnnnnn" + "oooooo" +
	"OO" + "rrrrrr" + "ssssssss" + "tttttt" + "uuuuuuuuuuuu" + "ww" + "yyy" +
	"zzzzzz" + "s"

// multi expands the two-letter markers of latin.
func multi(c byte) string {
	switch c {
	case 'A':
		return "ae"
	case 'T':
		return "th"
	case 'S':
		return "ss"
	case 'O':
		return "oe"
	case 'J':
		return "ij"
	}
	return ""
}

// foldRune appends the fold of r to b: lower-case ASCII for Latin letters
// with diacritics, the letter itself (lower-cased) for other scripts, a space
// for separators, nothing for marks and apostrophes (so "Kirby's" folds to
// "kirbys").
func foldRune(b []byte, r rune) []byte {
	switch {
	case r < utf8.RuneSelf:
		c := byte(r)
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			return append(b, c)
		case 'A' <= c && c <= 'Z':
			return append(b, c+'a'-'A')
		case c == '\'' || c == '`':
			return b
		case c == '&':
			return append(b, " and "...)
		}
		return append(b, ' ')
	case r >= 0xc0 && r <= 0x17f:
		c := latin[r-0xc0]
		if m := multi(c); m != "" {
			return append(b, m...)
		}
		return append(b, c)
	case r >= 0xff01 && r <= 0xff5e: // full-width ASCII
		return foldRune(b, r-0xfee0)
	case r >= 0x300 && r <= 0x36f, r == 0x2019, r == 0x2018, r == 0x2bc, r == 0xb4:
		// combining diacritics (decomposed accents) and apostrophe look-alikes
		return b
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		if l := unicode.ToLower(r); l != r {
			return foldRune(b, l) // the lower-case letter may have a fold of its own (Ƒ, ẞ, K)
		}
		switch r {
		case 'ƒ':
			return append(b, 'f')
		case 'ǎ':
			return append(b, 'a')
		case 'ǐ':
			return append(b, 'i')
		case 'ǒ':
			return append(b, 'o')
		case 'ǔ':
			return append(b, 'u')
		}
		return utf8.AppendRune(b, r)
	case unicode.Is(unicode.Mn, r):
		return b
	}
	return append(b, ' ')
}

// Fold returns the search key of s: its folded words separated by single
// spaces, without leading or trailing space.
func Fold(s string) string {
	return string(foldInto(make([]byte, 0, len(s)+4), s))
}

// foldInto appends the key of s to b (which must be empty or end without a
// space).
func foldInto(b []byte, s string) []byte {
	start := len(b)
	space := true // at the start: drop leading separators
	for _, r := range s {
		n := len(b)
		b = foldRune(b, r)
		// Collapse the separators foldRune produced.
		j := n
		for i := n; i < len(b); i++ {
			c := b[i]
			if c == ' ' {
				if space {
					continue
				}
				space = true
			} else {
				space = false
			}
			b[j] = c
			j++
		}
		b = b[:j]
	}
	if len(b) > start && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// words splits a key into its words.
func words(key string) []string { return strings.Fields(key) }

// roman converts between small Arabic numbers and Roman numerals, the way
// game titles number sequels ("Street Fighter II"). It returns "" for
// anything else.
func roman(w string) string {
	const max = 20
	romans := [max + 1]string{"", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x",
		"xi", "xii", "xiii", "xiv", "xv", "xvi", "xvii", "xviii", "xix", "xx"}
	if w == "" {
		return ""
	}
	if w[0] >= '0' && w[0] <= '9' {
		n := 0
		for i := 0; i < len(w); i++ {
			if w[i] < '0' || w[i] > '9' || n > max {
				return ""
			}
			n = n*10 + int(w[i]-'0')
		}
		// "1" stays: "i" would match every word starting with i.
		if n < 2 || n > max {
			return ""
		}
		return romans[n]
	}
	for n := 2; n <= max; n++ {
		if romans[n] == w {
			return itoa(n)
		}
	}
	return ""
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}
