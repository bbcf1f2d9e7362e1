package search

import "strings"

// Match tiers, best first.
const (
	tierExact    = iota // the whole name ("the" optional, spaces ignored)
	tierPrefix          // the name starts with the query (spaces ignored)
	tierInOrder         // every word starts a word of the name, in order
	tierAnyOrder        // every word starts a word of the name
	tierInside          // every word occurs somewhere in the name (spaces ignored)
	tierTypo            // every word is at most one edit from the start of a word
)

// maxQueryWords bounds the work one query can cause.
const maxQueryWords = 12

type token struct {
	s     string
	whole bool // must equal a whole word (a converted numeral)
}

// matcher holds a query's words and its numeral variant ("2" <-> "ii").
type matcher struct {
	variants [][]token
	compacts []string // each variant's words joined without spaces
	sigs     []uint64 // each variant's letter pairs (see sig)
	initials uint32   // first letters of the first variant's words
}

func newMatcher(text string) *matcher {
	ws := words(Fold(text))
	if len(ws) > maxQueryWords {
		ws = ws[:maxQueryWords]
	}
	m := &matcher{}
	if len(ws) == 0 {
		return m
	}
	orig := make([]token, len(ws))
	alt := make([]token, len(ws))
	converted := false
	for i, w := range ws {
		orig[i] = token{s: w}
		alt[i] = token{s: w}
		if r := roman(w); r != "" {
			alt[i] = token{s: r, whole: true}
			converted = true
		}
	}
	m.add(orig)
	if converted {
		m.add(alt)
	}
	return m
}

func (m *matcher) add(v []token) {
	var b strings.Builder
	var s uint64
	for _, t := range v {
		b.WriteString(t.s)
		s |= sig(t.s)
		if len(m.variants) == 0 {
			m.initials |= initialBit(t.s[0])
		}
	}
	m.variants = append(m.variants, v)
	m.compacts = append(m.compacts, b.String())
	m.sigs = append(m.sigs, s)
}

func (m *matcher) empty() bool { return len(m.variants) == 0 }

// canFuzz reports whether a typo pass could find something the exact passes
// did not: some word is long enough to carry a typo.
func (m *matcher) canFuzz() bool {
	for _, t := range m.firstVariant() {
		if len(t.s) >= 4 {
			return true
		}
	}
	return false
}

func (m *matcher) firstVariant() []token {
	if len(m.variants) == 0 {
		return nil
	}
	return m.variants[0]
}

// match returns the best tier of e for the query and how many of its words
// were not asked for, or -1 when it does not match. An empty query matches
// everything at tierExact.
func (m *matcher) match(e *entry, fuzzy bool) (tier, extra int) {
	if m.empty() {
		return tierExact, 0
	}
	best := -1
	for vi, v := range m.variants {
		if fuzzy {
			if vi > 0 || e.initials&m.initials != m.initials {
				break
			}
		} else if e.bigrams&m.sigs[vi] != m.sigs[vi] {
			continue
		}
		t := m.tier(e.key, v, m.compacts[vi], fuzzy)
		if t >= 0 && (best < 0 || t < best) {
			best = t
		}
	}
	if best < 0 {
		return -1, 0
	}
	return best, max(countWords(e.key)-len(m.variants[0]), 0)
}

func (m *matcher) tier(key string, v []token, compact string, fuzzy bool) int {
	if fuzzy {
		if allWords(key, v, false, true) {
			return tierTypo
		}
		return -1
	}
	bare := strings.TrimPrefix(key, "the ")
	switch {
	case compactEqual(key, compact), compactEqual(bare, compact):
		return tierExact
	case compactHasPrefix(key, compact), compactHasPrefix(bare, compact):
		return tierPrefix
	case allWords(key, v, true, false):
		return tierInOrder
	case allWords(key, v, false, false):
		return tierAnyOrder
	}
	for _, t := range v {
		if t.whole || !compactContains(key, t.s) {
			return -1
		}
	}
	return tierInside
}

// allWords reports whether every token starts (or, whole, equals) a word of
// key; inOrder requires the words in the query's order, typo allows one
// edit (two for long words) in tokens of four letters or more.
func allWords(key string, v []token, inOrder, typo bool) bool {
	from := 0 // word index the next token may start at (inOrder)
	for _, t := range v {
		found := -1
		wi := 0
		for rest := key; rest != ""; wi++ {
			w := rest
			if sp := strings.IndexByte(rest, ' '); sp >= 0 {
				w, rest = rest[:sp], rest[sp+1:]
			} else {
				rest = ""
			}
			if inOrder && wi < from {
				continue
			}
			if wordMatches(w, t, typo) {
				found = wi
				break
			}
		}
		if found < 0 {
			return false
		}
		from = found + 1
	}
	return true
}

func wordMatches(w string, t token, typo bool) bool {
	switch {
	case t.whole:
		return w == t.s
	case strings.HasPrefix(w, t.s):
		return true
	case typo && len(t.s) >= 4 && w != "" && w[0] == t.s[0]:
		maxEd := 1
		if len(t.s) >= 8 {
			maxEd = 2
		}
		// Compare with the word's prefixes around the token's length, so a
		// typo in a partial word still counts.
		for n := len(t.s) - maxEd; n <= len(t.s)+maxEd; n++ {
			if n > 0 && n <= len(w) && editDistance(w[:n], t.s, maxEd) <= maxEd {
				return true
			}
		}
	}
	return false
}
