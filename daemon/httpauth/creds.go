package httpauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"os"
	"slices"
	"syscall"
	"time"
)

// stamp identifies one version of a file without reading it.
type stamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func stampOf(fi os.FileInfo) stamp {
	s := stamp{mod: fi.ModTime(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	return s
}

// racyWindow: a file modified this close to when it was read may change
// again without its stamp changing (FAT keeps modification times to 2 s),
// so it is read again until it is older.
const racyWindow = 3 * time.Second

// Cached is one credentials file as last read (not safe for concurrent
// use: its owner holds a lock), re-read when its stamp
// changes (so `cabinet token new` and `revoke` take effect at the next
// request, without a restart).
type Cached[T any] struct {
	path   string
	stamp  stamp
	readAt time.Time // wall clock, as the file system's times are
	ok     bool
	val    T
}

// Get returns the file's current value; load reads it. A file that is
// missing or unreadable gives the zero T (no credentials: fail closed).
func (c *Cached[T]) Get(load func(path string) (T, error)) T {
	fi, err := os.Stat(c.path)
	if err != nil {
		var zero T
		c.ok, c.val = false, zero
		return zero
	}
	st := stampOf(fi)
	if c.ok && st == c.stamp && c.readAt.Sub(st.mod) > racyWindow {
		return c.val
	}
	readAt := time.Now()
	v, err := load(c.path)
	if err != nil {
		var zero T
		c.ok, c.val = false, zero
		return zero
	}
	c.ok, c.val, c.stamp, c.readAt = true, v, st, readAt
	return v
}

// namedToken is one named token as the guard checks it.
type namedToken struct {
	name   string
	sum    [sha256.Size]byte
	scopes []string
}

func loadNamed(path string) ([]namedToken, error) {
	f, err := readTokensFile(path)
	if err != nil {
		return nil, err
	}
	out := make([]namedToken, 0, len(f.Tokens))
	for _, t := range f.Tokens {
		nt := namedToken{name: t.Name, scopes: t.Scopes}
		if _, err := hex.Decode(nt.sum[:], []byte(t.SHA256)); err != nil {
			continue
		}
		out = append(out, nt)
	}
	return out, nil
}

// authenticate finds the token presented among the default one and the
// named ones, comparing in constant time (each named token's hash is
// compared, whichever matches). hexSum is the token's hash, for the record
// of its use.
func (g *Guard) authenticate(presented string) (c Caller, hexSum string, ok bool) {
	if presented == "" {
		return Caller{}, "", false
	}
	g.mu.Lock()
	def := g.def.Get(ReadToken)
	named := g.named.Get(loadNamed)
	g.mu.Unlock()
	got := sha256.Sum256([]byte(presented))
	if def != "" {
		want := sha256.Sum256([]byte(def))
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			return Caller{Name: DefaultName, Scopes: slices.Clone(DefaultTokenScopes)}, hex.EncodeToString(got[:]), true
		}
	}
	match := -1
	for i := range named {
		if subtle.ConstantTimeCompare(got[:], named[i].sum[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return Caller{}, "", false
	}
	t := named[match]
	return Caller{Name: t.name, Scopes: slices.Clone(t.scopes)}, hex.EncodeToString(got[:]), true
}

// NewCached is path's value, read at the first Get.
func NewCached[T any](path string) *Cached[T] { return &Cached[T]{path: path} }
