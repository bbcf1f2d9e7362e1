package oncabinet

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
)

// wanted is one set of RomM hashes with the byte size of what they cover.
type wanted struct {
	size           int64
	crc, md5, sha1 string
}

// same compares two sets by the strongest hash both have; two blanks are never equal.
func same(a wanted, crc, md5, sha1 string) bool {
	switch {
	case a.sha1 != "" && sha1 != "":
		return a.sha1 == sha1
	case a.md5 != "" && md5 != "":
		return a.md5 == md5
	case a.crc != "" && crc != "":
		return a.crc == crc
	}
	return false
}

// findByHash: see Find, step 3. A cabinet file is hashed as RomM would hash it under its own name,
// so a plain Foo.nes gives its raw hashes (RomM member hashes of RomM's Foo.zip) and a copy of
// Foo.zip gives the same composite as RomM's file. Candidates are picked by size first: the raw
// file has the member's size, a copy of the archive the archive's.
func (ix *Index) findByHash(ctx context.Context, s *system, c Candidate) *Match {
	var ws []wanted
	for _, f := range c.Files {
		if f.CRC != "" || f.MD5 != "" || f.SHA1 != "" {
			ws = append(ws, wanted{f.SizeBytes, f.CRC, f.MD5, f.SHA1})
		}
		for _, m := range f.Members {
			if m.CRC != "" || m.MD5 != "" || m.SHA1 != "" {
				ws = append(ws, wanted{m.Size, m.CRC, m.MD5, m.SHA1})
			}
		}
	}
	if len(ws) == 0 {
		return nil
	}
	s.sizeOnce.Do(func() { s.bySize = ix.statSizes(ctx, s) })
	hashed := 0
	seen := map[int32]bool{}
	for _, w := range ws {
		for _, i := range s.bySize[w.size] {
			if seen[i] {
				continue
			}
			seen[i] = true
			if hashed >= ix.o.MaxHashFiles || ctx.Err() != nil {
				return nil
			}
			hashed++
			sums, err := ix.o.Hasher.Sums(ctx, ix.o.Resolve(s.games[i].Path), ix.o.HashLimits)
			if err != nil {
				continue
			}
			for _, w2 := range ws {
				if same(w2, sums.CRC, sums.MD5, sums.SHA1) {
					return match(s.games[i], ByHash)
				}
			}
		}
	}
	return nil
}

// statSizes stats every game of the system once per Index, keeping files up to MaxHashBytes. A
// cancelled ctx leaves the rest out: that Index then finds fewer files by hash, never wrong ones.
func (ix *Index) statSizes(ctx context.Context, s *system) map[int64][]int32 {
	m := map[int64][]int32{}
	for i, g := range s.games {
		if i%256 == 0 && ctx.Err() != nil {
			break
		}
		fi, err := os.Stat(ix.o.Resolve(g.Path))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > ix.o.MaxHashBytes {
			continue
		}
		m[fi.Size()] = append(m[fi.Size()], int32(i))
	}
	return m
}

// Hasher caches romhash results by file path, size and modification time, so a rebuilt Index (ES
// reloaded its games) does not hash an unchanged file again. The oldest entry goes first once
// maxEntries are held. Safe for concurrent use.
type Hasher struct {
	mu      sync.Mutex
	max     int
	entries map[hashKey]hashResult
	ring    []hashKey // insertion order, for eviction
	head    int
	hashes  int // files actually hashed, for tests and diagnostics
}

type hashKey struct {
	path        string
	size, mtime int64
}

type hashResult struct {
	sums romhash.Sums
	err  error
}

// DefaultHasherEntries is the cache size NewHasher(0) takes.
const DefaultHasherEntries = 4096

// NewHasher returns an empty cache of up to maxEntries results (DefaultHasherEntries when <= 0).
func NewHasher(maxEntries int) *Hasher {
	if maxEntries <= 0 {
		maxEntries = DefaultHasherEntries
	}
	return &Hasher{max: maxEntries, entries: map[hashKey]hashResult{}}
}

// Sums returns romhash.FileContext(ctx, p, lim), cached. Results that depend on the file alone
// (sums, ErrTooLarge, ErrUnsupported, ErrNoHash) are kept; a cancelled hash or a read error is
// not, so it is tried again next time.
func (h *Hasher) Sums(ctx context.Context, p string, lim romhash.Limits) (romhash.Sums, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return romhash.Sums{}, err
	}
	k := hashKey{p, fi.Size(), fi.ModTime().UnixNano()}
	h.mu.Lock()
	r, ok := h.entries[k]
	h.mu.Unlock()
	if ok {
		return r.sums, r.err
	}
	sums, err := romhash.FileContext(ctx, p, lim)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hashes++
	if err == nil || errors.Is(err, romhash.ErrTooLarge) || errors.Is(err, romhash.ErrUnsupported) || errors.Is(err, romhash.ErrNoHash) {
		h.put(k, hashResult{sums, err})
	}
	return sums, err
}

func (h *Hasher) put(k hashKey, r hashResult) {
	if _, ok := h.entries[k]; ok {
		h.entries[k] = r
		return
	}
	if len(h.ring) < h.max {
		h.ring = append(h.ring, k)
	} else {
		delete(h.entries, h.ring[h.head])
		h.ring[h.head] = k
		h.head = (h.head + 1) % h.max
	}
	h.entries[k] = r
}

// Len is the number of cached results.
func (h *Hasher) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}
