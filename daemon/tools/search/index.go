package search

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Doc is one game to index. Text must already be cleaned for display (the
// index returns Name as given).
type Doc struct {
	System     string
	ID         string // ES game id (32 hex digits; anything else is kept as is)
	Name       string
	Genre      string
	Players    string // ES players text: "1", "1-2", "1-4", "2+"
	Year       int    // 0 when unknown
	Favorite   bool
	PlayCount  int
	PlayTime   int64     // seconds
	LastPlayed time.Time // zero when never played
}

// entry is a Doc as stored: compact, since a cabinet can hold tens of
// thousands of games and the whole process should stay small.
type entry struct {
	name       string
	key        string // Fold(name)
	id         [16]byte
	bigrams    uint64 // signature of key's letter pairs, spaces ignored (see sig)
	initials   uint32 // first letters of key's words (see initialsOf)
	lastPlayed int64  // unix seconds, 0 never
	playTime   uint32
	playCount  uint32
	sys        uint16
	genre      uint16 // index into Index.genres (0: none)
	players    uint16 // index into Index.players (0: none)
	year       uint16
	favorite   bool
	rawID      bool // id is not hex: see Index.rawIDs
}

// Index is an immutable set of games. It is safe for concurrent use.
type Index struct {
	entries []entry
	systems []string
	genres  []string // interned; genres[0] == ""
	gkeys   []string // Fold(genres[i])
	players []string // interned; players[0] == ""
	prange  [][2]int // players ranges parsed from players[i]
	rawIDs  []string // ids that are not 32 hex digits; entry.id holds the index

	// Entries with a play count, play time or last-played date, best first:
	// the orders of the play-statistics modes, computed once per index.
	byCount, byTime, byLast []int32
}

// Builder collects Docs into an Index. Add is safe for concurrent use.
type Builder struct {
	mu      sync.Mutex
	ix      *Index
	sysIdx  map[string]uint16
	genIdx  map[string]uint16
	plIdx   map[string]uint16
	scratch []byte
}

// NewBuilder returns an empty Builder; sizeHint is the expected game count.
func NewBuilder(sizeHint int) *Builder {
	return &Builder{
		ix: &Index{entries: make([]entry, 0, sizeHint), genres: []string{""}, gkeys: []string{""},
			players: []string{""}, prange: [][2]int{{}}},
		sysIdx: map[string]uint16{}, genIdx: map[string]uint16{"": 0}, plIdx: map[string]uint16{"": 0},
	}
}

// Add indexes one game.
func (b *Builder) Add(d Doc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ix := b.ix
	e := entry{name: d.Name, playCount: clampU32(int64(d.PlayCount)), playTime: clampU32(d.PlayTime),
		favorite: d.Favorite}
	b.scratch = foldInto(b.scratch[:0], d.Name)
	if string(b.scratch) == d.Name {
		e.key = d.Name // already a key: share the bytes
	} else {
		e.key = string(b.scratch)
	}
	e.bigrams, e.initials = sig(e.key), initialsOf(e.key)
	if d.Year > 0 && d.Year < 1<<16 {
		e.year = uint16(d.Year)
	}
	if !d.LastPlayed.IsZero() {
		e.lastPlayed = d.LastPlayed.Unix()
	}
	if len(d.ID) == 32 && isLowerHex(d.ID) {
		_, _ = hex.Decode(e.id[:], []byte(d.ID))
	} else {
		e.rawID = true
		binary.LittleEndian.PutUint32(e.id[:4], uint32(len(ix.rawIDs)))
		ix.rawIDs = append(ix.rawIDs, d.ID)
	}
	s, ok := b.sysIdx[d.System]
	if !ok {
		s = uint16(len(ix.systems))
		b.sysIdx[d.System] = s
		ix.systems = append(ix.systems, d.System)
	}
	e.sys = s
	g, ok := b.genIdx[d.Genre]
	if !ok {
		g = uint16(len(ix.genres))
		b.genIdx[d.Genre] = g
		ix.genres = append(ix.genres, d.Genre)
		ix.gkeys = append(ix.gkeys, Fold(d.Genre))
	}
	e.genre = g
	p, ok := b.plIdx[d.Players]
	if !ok {
		p = uint16(len(ix.players))
		b.plIdx[d.Players] = p
		ix.players = append(ix.players, d.Players)
		lo, hi := parsePlayers(d.Players)
		ix.prange = append(ix.prange, [2]int{lo, hi})
	}
	e.players = p
	ix.entries = append(ix.entries, e)
}

// Index returns the built index. The Builder must not be used afterwards.
func (b *Builder) Index() *Index {
	b.mu.Lock()
	defer b.mu.Unlock()
	ix := b.ix
	// Stable default order: by key, then system, so results never depend on
	// the order lists were fetched in.
	sort.SliceStable(ix.entries, func(i, j int) bool { return ix.less(i, j) })
	if spare := cap(ix.entries) - len(ix.entries); spare > len(ix.entries)/8 {
		ix.entries = append([]entry(nil), ix.entries...) // drop a large spare capacity (a poor size hint)
	}
	ix.byCount = ix.rank(func(e *entry) bool { return e.playCount > 0 }, func(a, b *entry) int {
		return cmpDesc(int64(a.playCount), int64(b.playCount), int64(a.playTime), int64(b.playTime))
	})
	ix.byTime = ix.rank(func(e *entry) bool { return e.playTime > 0 }, func(a, b *entry) int {
		return cmpDesc(int64(a.playTime), int64(b.playTime), int64(a.playCount), int64(b.playCount))
	})
	ix.byLast = ix.rank(func(e *entry) bool { return e.lastPlayed != 0 }, func(a, b *entry) int {
		return cmpDesc(a.lastPlayed, b.lastPlayed, 0, 0)
	})
	b.ix = nil
	return ix
}

// rank lists the entries keep accepts, ordered by cmp and then by name.
func (ix *Index) rank(keep func(*entry) bool, cmp func(a, b *entry) int) []int32 {
	var out []int32
	for i := range ix.entries {
		if keep(&ix.entries[i]) {
			out = append(out, int32(i))
		}
	}
	slices.SortStableFunc(out, func(a, b int32) int { return cmp(&ix.entries[a], &ix.entries[b]) })
	return slices.Clip(out)
}

// cmpDesc orders by a descending, then by b descending.
func cmpDesc(a1, a2, b1, b2 int64) int {
	switch {
	case a1 != a2:
		if a1 > a2 {
			return -1
		}
		return 1
	case b1 != b2:
		if b1 > b2 {
			return -1
		}
		return 1
	}
	return 0
}

func (ix *Index) less(i, j int) bool {
	a, b := &ix.entries[i], &ix.entries[j]
	if a.key != b.key {
		return a.key < b.key
	}
	if a.sys != b.sys {
		return ix.systems[a.sys] < ix.systems[b.sys]
	}
	return a.name < b.name
}

// Len is the number of indexed games.
func (ix *Index) Len() int { return len(ix.entries) }

// Systems lists the systems that have games in the index.
func (ix *Index) Systems() []string { return append([]string(nil), ix.systems...) }

func clampU32(v int64) uint32 {
	switch {
	case v < 0:
		return 0
	case v > 1<<32-1:
		return 1<<32 - 1
	}
	return uint32(v)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parsePlayers reads ES's players text: "1", "1-2", "2+", "1 - 4". It
// returns 0, 0 when the text holds no number; hi is 99 for "n+".
func parsePlayers(s string) (lo, hi int) {
	s = strings.TrimSpace(s)
	num := func(t string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		return n, err == nil && n > 0 && n < 100
	}
	if a, ok := strings.CutSuffix(s, "+"); ok {
		if n, ok := num(a); ok {
			return n, 99
		}
		return 0, 0
	}
	if a, b, ok := strings.Cut(s, "-"); ok {
		x, ok1 := num(a)
		y, ok2 := num(b)
		if ok1 && ok2 && x <= y {
			return x, y
		}
		return 0, 0
	}
	if n, ok := num(s); ok {
		return n, n
	}
	return 0, 0
}
