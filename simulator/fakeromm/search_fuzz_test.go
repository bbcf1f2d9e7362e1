package fakeromm

import (
	"strings"
	"testing"
)

// FuzzSearch: any search_term parses, and matching terminates and agrees
// with plain substring search when the words hold no LIKE wildcard.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"alpha", "a|b| |", "rally_(usa", "%%_%", "0123abcd", strings.Repeat("a%", 40)} {
		f.Add(s, "Delta Force Rally (USA, Europe).zip")
	}
	f.Fuzz(func(t *testing.T, term, name string) {
		if len(term) > maxQueryValue || len(name) > 512 {
			return
		}
		for _, st := range parseSearch(term) {
			got := st.matchesName(name, "")
			if st.digest != "" && len(st.digest) != 8 && len(st.digest) != 32 && len(st.digest) != 40 {
				t.Fatalf("digest %q", st.digest)
			}
			if strings.ContainsAny(term, "%_") || len(st.words) == 0 {
				continue
			}
			want := true
			for _, w := range st.words {
				want = want && strings.Contains(strings.ToLower(name), w)
			}
			if got != want {
				t.Fatalf("term %q on %q: %v, want %v", term, name, got, want)
			}
		}
	})
}

// FuzzVirtualID: ids round-trip, and anything else decodes or is refused.
func FuzzVirtualID(f *testing.F) {
	f.Add("Racing", "genre")
	f.Add("Pokémon \"X\"", "franchise")
	f.Fuzz(func(t *testing.T, name, typ string) {
		decodeVirtualID(name) // never panics
		if name == "" || !utf8Valid(name) || !utf8Valid(typ) {
			return
		}
		n, ty, ok := decodeVirtualID(virtualID(name, typ))
		if !ok || n != name || ty != typ {
			t.Fatalf("round trip of %q/%q: %q/%q %v", name, typ, n, ty, ok)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
