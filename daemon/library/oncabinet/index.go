// Package oncabinet answers "is this RomM ROM on this cabinet, and which ES game is it?" for
// library_search's on_cabinet field. It owns the index of ES's games by system and file name that
// Build makes from one ES game list, and the matching rules of Find; file contents are hashed
// through a Hasher the caller keeps across Builds.
//
// Names are matched exactly first (ext4 is case-sensitive and RomM's fs_name is the name on the
// server's disk), then case-insensitively, because a library copied through a case-insensitive
// file system (SMB, exFAT) may differ in case only. Every name match is confirmed by size, so the
// looser second pass cannot claim a different file of the same name.
package oncabinet

import (
	"context"
	"strings"
	"sync"
	"unicode"

	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Game is one ES game: the system folder name (snes), ES's game id, and ES's path as ES reports it
// (/userdata/roms/snes/Foo.sfc).
type Game struct{ System, ID, Path string }

// Candidate is a RomM ROM as the tools see it.
type Candidate struct {
	Folder    string // Batocera folder the RomM platform maps to; "" = unmapped
	FSName    string // RomM fs_name: the file name, or the folder name of a multi-file ROM
	SizeBytes int64  // RomM fs_size_bytes: the file's size, or the sum over a folder's files
	Files     []CandidateFile
	Multi     bool // a multi-file ROM (RomM's has_multiple_files / a folder on the server)
}

// CandidateFile is one RomM RomFile of category game.
type CandidateFile struct {
	Name           string // path relative to the ROM: the file name, or "sub/x.bin" inside a folder ROM
	SizeBytes      int64
	CRC, MD5, SHA1 string           // RomM's hashes ("" when the server skips hashing)
	Members        []romhash.Member // RomM's archive_members, for a zip/tar RomM hashed by contents
}

// Match says where the ROM is on the cabinet. Its strings are cleaned for display and JSON.
type Match struct {
	System, GameID, Path string
	By                   string // ByInstall, ByNameSize or ByHash
}

// How a Match was made.
const (
	ByInstall  = "install"
	ByNameSize = "name+size"
	ByHash     = "hash"
)

// Item is one ROM of a page for Mark.
type Item struct {
	ROMID int
	Candidate
}

// Options are the seams and bounds of an Index.
type Options struct {
	// Resolve maps an ES path to the file to stat and read (a test root in front); nil = identity.
	Resolve func(esPath string) string
	// Hasher caches file hashes across Builds; nil gives the Index a private one.
	Hasher *Hasher
	// HashLimits bound one file's hashing (romhash defaults when zero).
	HashLimits romhash.Limits
	// MaxHashBytes: only cabinet files up to this size are hashed for matching; default 64 MiB.
	MaxHashBytes int64
	// MaxHashFiles bounds the cabinet files hashed for one Find; default 16.
	MaxHashFiles int
	// Installed returns the install record of a RomM ROM (a later issue adds it); nil = none.
	Installed func(romID int) (Game, bool)
}

// Caps on what a Match carries and on names taken from RomM.
const (
	maxPathRunes   = 4096
	maxIDRunes     = 128
	maxSystemRunes = 128
	maxNameBytes   = 1024 // over NAME_MAX on every file system Batocera mounts
)

// Index is an immutable view of one ES game list, safe for concurrent Finds. The lazily built
// parts (size and case-folded indexes, file stats) live as long as the Index; Build a new one when
// ES reloads its games.
type Index struct {
	o       Options
	systems map[string]*system
}

type system struct {
	games []Game
	// byName maps a hash of the base name to the first game with it; next
	// chains the games sharing the hash (equal names, or a collision: named
	// compares the names). Hash keys instead of strings keep 50,000 games
	// in a few MB.
	byName map[uint64]int32
	next   []int32

	foldOnce sync.Once
	byFold   map[uint64]int32 // the same by a hash of the case-folded name
	foldNext []int32

	sizeOnce sync.Once
	bySize   map[int64][]int32 // stat sizes of the games up to MaxHashBytes
}

// Build indexes games by system and base name. It does not touch the disk.
func Build(games []Game, o Options) *Index {
	if o.Resolve == nil {
		o.Resolve = func(p string) string { return p }
	}
	if o.Hasher == nil {
		o.Hasher = NewHasher(0)
	}
	if o.MaxHashBytes <= 0 {
		o.MaxHashBytes = 64 << 20
	}
	if o.MaxHashFiles <= 0 {
		o.MaxHashFiles = 16
	}
	count := map[string]int{}
	for _, g := range games {
		count[g.System]++
	}
	ix := &Index{o: o, systems: make(map[string]*system, len(count))}
	for name, n := range count {
		ix.systems[name] = &system{games: make([]Game, 0, n), byName: make(map[uint64]int32, n), next: make([]int32, 0, n)}
	}
	for _, g := range games {
		s := ix.systems[g.System]
		base := baseName(g.Path)
		if base == "" {
			continue
		}
		i := int32(len(s.games))
		s.games = append(s.games, g)
		h := nameHash(base)
		first, ok := s.byName[h]
		if !ok {
			first = -1
		}
		s.next = append(s.next, first)
		s.byName[h] = i
	}
	return ix
}

// baseName is the last element of an ES path ("" for none).
func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// named calls fn for the games whose base name is name, exactly or (fold) case-insensitively,
// until fn returns true.
func (s *system) named(name string, fold bool, fn func(int32) bool) bool {
	m, next, h := s.byName, s.next, nameHash(name)
	same := func(b string) bool { return b == name }
	if fold {
		s.foldOnce.Do(s.buildFold)
		m, next, h = s.byFold, s.foldNext, foldHash(name)
		same = func(b string) bool { return strings.EqualFold(b, name) }
	}
	i, ok := m[h]
	for ok && i >= 0 {
		if same(baseName(s.games[i].Path)) && fn(i) {
			return true
		}
		i = next[i]
	}
	return false
}

func (s *system) buildFold() {
	s.byFold = make(map[uint64]int32, len(s.games))
	s.foldNext = make([]int32, len(s.games))
	for i := len(s.games) - 1; i >= 0; i-- {
		k := foldHash(baseName(s.games[i].Path))
		first, ok := s.byFold[k]
		if !ok {
			first = -1
		}
		s.foldNext[i] = first
		s.byFold[k] = int32(i)
	}
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// nameHash hashes a name's bytes.
func nameHash(name string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * fnvPrime
	}
	return h
}

// foldHash hashes a name case-insensitively, without building the folded
// string: names that strings.EqualFold calls equal hash alike (each rune is
// reduced to the smallest of its simple case-fold orbit).
func foldHash(name string) uint64 {
	h := uint64(fnvOffset)
	for _, r := range name {
		f := foldRune(r)
		for f > 0 {
			h = (h ^ uint64(f&0xff)) * fnvPrime
			f >>= 8
		}
	}
	return h
}

// foldRune is the smallest rune of r's case-fold orbit (unicode.SimpleFold
// cycles through it).
func foldRune(r rune) rune {
	min := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < min {
			min = f
		}
	}
	return min
}

// match builds the cleaned Match for a game.
func match(g Game, by string) *Match {
	return &Match{
		System: untrusted.Clean(g.System, maxSystemRunes),
		GameID: untrusted.Clean(g.ID, maxIDRunes),
		Path:   untrusted.Clean(g.Path, maxPathRunes),
		By:     by,
	}
}

// Mark finds a page of ROMs; the result is parallel to items, nil where not on the cabinet. A
// cancelled ctx leaves the rest nil.
func (ix *Index) Mark(ctx context.Context, items []Item) []*Match {
	out := make([]*Match, len(items))
	for i, it := range items {
		if ctx.Err() != nil {
			break
		}
		out[i] = ix.Find(ctx, it.ROMID, it.Candidate)
	}
	return out
}
