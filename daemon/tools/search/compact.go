package search

// Keys are compared with their spaces ignored, so "pacman" equals "pac man"
// and "supermario" starts "super mario world". These loops do that without
// allocating a space-free copy of every key.

// compactEqual reports whether key without spaces equals c (c has none).
func compactEqual(key, c string) bool {
	j := 0
	for i := 0; i < len(key); i++ {
		if key[i] == ' ' {
			continue
		}
		if j == len(c) || key[i] != c[j] {
			return false
		}
		j++
	}
	return j == len(c)
}

// compactHasPrefix reports whether key without spaces starts with c.
func compactHasPrefix(key, c string) bool {
	j := 0
	for i := 0; i < len(key) && j < len(c); i++ {
		if key[i] == ' ' {
			continue
		}
		if key[i] != c[j] {
			return false
		}
		j++
	}
	return j == len(c)
}

// compactContains reports whether key without spaces contains c.
func compactContains(key, c string) bool {
	if c == "" {
		return true
	}
	for i := 0; i < len(key); i++ {
		if key[i] != c[0] {
			continue
		}
		if compactHasPrefix(key[i:], c) {
			return true
		}
	}
	return false
}

// countWords counts the words of a key (single spaces between words).
func countWords(key string) int {
	if key == "" {
		return 0
	}
	n := 1
	for i := 0; i < len(key); i++ {
		if key[i] == ' ' {
			n++
		}
	}
	return n
}

// editDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions and adjacent transpositions), or
// max+1 as soon as it must exceed max. Inputs are short words.
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	const n = 40
	if len(a) >= n || len(b) >= n {
		return max + 1
	}
	var rows [3][n + 1]int // two rows back, one back, current
	pp, p, c := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		p[j] = j
	}
	for i := 1; i <= len(a); i++ {
		c[0] = i
		low := c[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(p[j]+1, c[j-1]+1, p[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, pp[j-2]+1)
			}
			c[j] = v
			low = min(low, v)
		}
		if low > max {
			return max + 1
		}
		pp, p, c = p, c, pp
	}
	return p[len(b)]
}

// sig is a 64-bit signature of the letter pairs of key with its spaces
// removed. Every way a query word can match (word start, exact, inside)
// makes its pairs a subset of the key's, so one AND rejects most games
// before any string is compared.
func sig(key string) uint64 {
	var s uint64
	prev := -1
	for i := 0; i < len(key); i++ {
		c := int(key[i])
		if c == ' ' {
			continue
		}
		if prev >= 0 {
			s |= 1 << pairBit(prev, c)
		}
		prev = c
	}
	return s
}

func pairBit(a, b int) uint {
	return uint((a*31 + b*7 + a*b) & 63)
}

// initialsOf is a bit set of the first bytes of key's words: a-z, digits
// (bit 26) and anything else (bit 27). The typo pass, which cannot use sig,
// requires every query word's first letter among them.
func initialsOf(key string) uint32 {
	var m uint32
	start := true
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == ' ' {
			start = true
			continue
		}
		if start {
			m |= initialBit(c)
			start = false
		}
	}
	return m
}

func initialBit(c byte) uint32 {
	switch {
	case 'a' <= c && c <= 'z':
		return 1 << (c - 'a')
	case '0' <= c && c <= '9':
		return 1 << 26
	}
	return 1 << 27
}
