package fakeromm

import (
	"strings"
)

// searchTerm is one "|"-separated alternative of search_term.
type searchTerm struct {
	words  []string // lowercased; every one must match name or fs_name
	digest string   // lowercase hex when the term is shaped like a hash
}

// parseSearch splits search_term as RomM does (handler/database/
// roms_handler.py _filter_by_search_term): on "|", each part trimmed,
// empty parts dropped; a part is its whitespace-separated words, ANDed;
// a part of exactly 8, 32 or 40 hex digits also matches hashes.
func parseSearch(s string) []searchTerm {
	var out []searchTerm
	for _, part := range strings.Split(s, "|") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		t := searchTerm{}
		for _, w := range strings.Fields(part) {
			t.words = append(t.words, strings.ToLower(w))
		}
		if n := len(part); (n == 8 || n == 32 || n == 40) && isHex(part) {
			t.digest = strings.ToLower(part)
		}
		out = append(out, t)
	}
	return out
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// matchesName is the PostgreSQL path: each word is an ILIKE '%word%' over
// fs_name or name. RomM does not escape the word, so "%" and "_" in it are
// LIKE wildcards there, and here.
func (t searchTerm) matchesName(name, fsName string) bool {
	if len(t.words) == 0 {
		return false
	}
	name, fsName = strings.ToLower(name), strings.ToLower(fsName)
	for _, w := range t.words {
		if !ilikeContains(fsName, w) && !ilikeContains(name, w) {
			return false
		}
	}
	return true
}

// matchesHash compares a digest term with the columns RomM compares it
// with: by length, crc (8); md5 and ra (32); sha1 (40), and on RomFiles
// also chd_sha1 (40), which the fake leaves empty.
func (t searchTerm) matchesHash(r ROM) bool {
	if t.digest == "" {
		return false
	}
	eq := func(h Hashes) bool {
		switch len(t.digest) {
		case 8:
			return h.CRC == t.digest
		case 32:
			return h.MD5 == t.digest
		default:
			return h.SHA1 == t.digest
		}
	}
	if eq(r.Hashes) {
		return true
	}
	for _, f := range r.Files {
		if eq(f.Hashes) {
			return true
		}
	}
	return false
}

// ilikeContains reports whether s matches the LIKE pattern %word%, with
// "%" any run and "_" any one character (both already lowercased).
func ilikeContains(s, word string) bool {
	if !strings.ContainsAny(word, "%_") {
		return strings.Contains(s, word)
	}
	return likeMatch([]rune(s), []rune("%"+word+"%"))
}

func likeMatch(s, p []rune) bool {
	// Iterative wildcard matching with backtracking to the last "%".
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '_' || p[pi] == s[si]):
			si++
			pi++
		case pi < len(p) && p[pi] == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
