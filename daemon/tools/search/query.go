package search

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Mode orders (and for some, filters) the results.
type Mode string

// The modes of batocera_find_games.
const (
	ModeSearch     Mode = "search"      // best match first; by name without a query
	ModeFavorites  Mode = "favorites"   // favorites only, by name (best match with a query)
	ModeMostPlayed Mode = "most_played" // played games, most launches first
	ModeMostTime   Mode = "most_time"   // played games, longest total play time first
	ModeRecent     Mode = "recent"      // played games, most recently played first
	ModeRandom     Mode = "random"      // a random sample (no paging)
)

// Modes lists every mode, the default first.
func Modes() []Mode {
	return []Mode{ModeSearch, ModeFavorites, ModeMostPlayed, ModeMostTime, ModeRecent, ModeRandom}
}

// Query is one search.
type Query struct {
	Text    string // words to look for; "" matches every game
	System  string // exact system name; "" for all
	Genre   string // part of the genre, folded like names ("shoot" finds "Shooter")
	Players int    // games playable by this many players; 0 for any
	Mode    Mode   // "" means ModeSearch
	Offset  int    // ignored by ModeRandom
	Limit   int    // page size; <= 0 means 20
	Rand    *rand.Rand
}

// Hit is one game of a result page.
type Hit struct {
	System, ID, Name, Genre, Players string
	Year                             int
	Favorite                         bool
	PlayCount                        int
	PlayTime                         int64
	LastPlayed                       time.Time // zero: never
	// Tier is how the name matched the query, 0 (the whole name) to 5 (a typo in a word): lower
	// is better; Extra is how many words of the name were not asked for. Both order the hits of
	// ModeSearch; a caller compares them to tell a clear best match from a tie.
	Tier, Extra int
}

// Result is a page of hits.
type Result struct {
	Hits  []Hit
	Total int // games matching the query and filters
	// NextOffset is the offset of the next page, or -1 at the end (and
	// always for ModeRandom).
	NextOffset int
}

// candidate is a matching entry with its rank.
type candidate struct {
	i     int32
	tier  int8
	extra int16 // words of the name not asked for
}

// Find runs q over the index.
func (ix *Index) Find(q Query) Result {
	if q.Limit <= 0 {
		q.Limit = 20
	}
	if q.Offset < 0 {
		q.Offset = 0
	}
	if q.Mode == "" {
		q.Mode = ModeSearch
	}
	res := Result{NextOffset: -1}
	f, ok := ix.filter(q)
	if !ok {
		return res
	}
	m := newMatcher(q.Text)
	buf := candidates.Get().(*[]candidate)
	defer candidates.Put(buf)
	cands := ix.collect((*buf)[:0], f, m, false)
	if len(cands) == 0 && m.canFuzz() {
		cands = ix.collect(cands, f, m, true)
	}
	*buf = cands
	if !m.empty() && (q.Mode == ModeSearch || q.Mode == ModeFavorites) {
		cands = byMatch(cands)
	}
	res.Total = len(cands)
	if q.Mode == ModeRandom {
		r := q.Rand
		if r == nil {
			r = rand.New(rand.NewPCG(1, 2))
		}
		n := min(q.Limit, len(cands))
		for i := 0; i < n; i++ { // partial Fisher-Yates: only the page is drawn
			j := i + r.IntN(len(cands)-i)
			cands[i], cands[j] = cands[j], cands[i]
		}
		cands = cands[:n]
	} else {
		if q.Offset >= len(cands) {
			return res
		}
		end := min(q.Offset+q.Limit, len(cands))
		if end < len(cands) {
			res.NextOffset = end
		}
		cands = cands[q.Offset:end]
	}
	res.Hits = make([]Hit, len(cands))
	for k, c := range cands {
		res.Hits[k] = ix.hit(int(c.i))
		res.Hits[k].Tier, res.Hits[k].Extra = int(c.tier), int(c.extra)
	}
	return res
}

// candidates recycles candidate slices: a broad query matches most games.
var candidates = sync.Pool{New: func() any { return new([]candidate) }}

// collect appends the entries that pass f and match m to out, in the mode's
// order (name order, or the precomputed play-statistics order).
func (ix *Index) collect(out []candidate, f filters, m *matcher, fuzzy bool) []candidate {
	add := func(i int32) {
		e := &ix.entries[i]
		if !f.keep(e) {
			return
		}
		tier, extra := m.match(e, fuzzy)
		if tier >= 0 {
			out = append(out, candidate{i: i, tier: int8(tier), extra: int16(min(extra, maxExtra))})
		}
	}
	var order []int32
	switch f.played {
	case ModeMostPlayed:
		order = ix.byCount
	case ModeMostTime:
		order = ix.byTime
	case ModeRecent:
		order = ix.byLast
	default:
		for i := range ix.entries {
			add(int32(i))
		}
		return out
	}
	for _, i := range order {
		add(i)
	}
	return out
}

// maxExtra caps the unasked-for word count used for ranking.
const maxExtra = 31

// byMatch orders candidates (in name order) by tier, then by how few words
// were not asked for, keeping name order within: a counting sort, since
// both keys are small.
func byMatch(c []candidate) []candidate {
	const buckets = (tierTypo + 1) * (maxExtra + 1)
	var count [buckets + 1]int
	key := func(x candidate) int { return int(x.tier)*(maxExtra+1) + int(x.extra) }
	for _, x := range c {
		count[key(x)+1]++
	}
	for k := 1; k <= buckets; k++ {
		count[k] += count[k-1]
	}
	out := make([]candidate, len(c))
	for _, x := range c {
		k := key(x)
		out[count[k]] = x
		count[k]++
	}
	return out
}

// filters is a query's filters resolved against the index.
type filters struct {
	sys       int // -1: any
	genres    []bool
	players   []bool
	favorites bool
	played    Mode
}

// filter resolves q's filters; ok is false when nothing can match.
func (ix *Index) filter(q Query) (f filters, ok bool) {
	f.sys = -1
	if q.System != "" {
		f.sys = slices.Index(ix.systems, q.System)
		if f.sys < 0 {
			return f, false
		}
	}
	if g := Fold(q.Genre); g != "" {
		f.genres = make([]bool, len(ix.genres))
		any := false
		for i, k := range ix.gkeys {
			if i > 0 && compactContains(k, g) {
				f.genres[i], any = true, true
			}
		}
		if !any {
			return f, false
		}
	}
	if q.Players > 0 {
		f.players = make([]bool, len(ix.players))
		for i, r := range ix.prange {
			f.players[i] = i > 0 && r[0] <= q.Players && q.Players <= r[1]
		}
	}
	f.favorites = q.Mode == ModeFavorites
	f.played = q.Mode
	return f, true
}

func (f *filters) keep(e *entry) bool {
	switch {
	case f.sys >= 0 && int(e.sys) != f.sys,
		f.genres != nil && !f.genres[e.genre],
		f.players != nil && !f.players[e.players],
		f.favorites && !e.favorite:
		return false
	}
	switch f.played {
	case ModeMostPlayed:
		return e.playCount > 0
	case ModeMostTime:
		return e.playTime > 0
	case ModeRecent:
		return e.lastPlayed != 0
	}
	return true
}

func (ix *Index) hit(i int) Hit {
	e := &ix.entries[i]
	h := Hit{System: ix.systems[e.sys], ID: ix.id(e), Name: e.name, Genre: ix.genres[e.genre],
		Players: ix.players[e.players], Year: int(e.year), Favorite: e.favorite,
		PlayCount: int(e.playCount), PlayTime: int64(e.playTime)}
	if e.lastPlayed != 0 {
		h.LastPlayed = time.Unix(e.lastPlayed, 0)
	}
	return h
}

func (ix *Index) id(e *entry) string {
	if e.rawID {
		return ix.rawIDs[binary.LittleEndian.Uint32(e.id[:4])]
	}
	return hex.EncodeToString(e.id[:])
}
