package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Records is a bucket of JSON records of one type, keyed by strings, that a feature declares
// where it lives: the installer its installs, the request follower its requests, the RomM
// reporter its delivery marks. The store knows only the bucket's name and bytes; each change
// is one fsynced transaction like every other. An older Cabinet ignores a bucket it does not
// know, so a feature adds one without a schema change.
type Records[T any] struct {
	Name string
}

// Bucket is a Records bucket within one transaction. In a read transaction a bucket nothing
// was written to yet is empty: Get finds nothing, Each sees nothing.
type Bucket[T any] struct {
	name string
	b    *bolt.Bucket
}

// ErrKey is wrapped by the refusal of an empty or oversized key.
var ErrKey = errors.New("bad record key")

// View runs fn in a read transaction over r's bucket.
func (r Records[T]) View(s *Store, fn func(Bucket[T]) error) error {
	return s.View(func(tx *ReadTx) error { return fn(r.In(tx)) })
}

// Update runs fn in one fsynced write transaction over r's bucket, created if need be; an
// error from fn undoes everything it did.
func (r Records[T]) Update(s *Store, fn func(Bucket[T]) error) error {
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(r.Name))
		if err != nil {
			return err
		}
		return fn(Bucket[T]{name: r.Name, b: b})
	})
}

// Within is r's bucket within the write transaction tx, created if need be: a feature's
// records written in the same transaction as the tracker's state or the names.
func (r Records[T]) Within(tx *Tx) (Bucket[T], error) {
	b, err := tx.tx.CreateBucketIfNotExists([]byte(r.Name))
	if err != nil {
		return Bucket[T]{}, err
	}
	return Bucket[T]{name: r.Name, b: b}, nil
}

// In is r's bucket within the read transaction tx (with the sessions, say).
func (r Records[T]) In(tx *ReadTx) Bucket[T] {
	return Bucket[T]{name: r.Name, b: tx.tx.Bucket([]byte(r.Name))}
}

// Get is the record at key; ok is false when there is none. A record that does not decode is
// an error.
func (b Bucket[T]) Get(key string) (v T, ok bool, err error) {
	if b.b == nil {
		return v, false, nil
	}
	raw := b.b.Get([]byte(key))
	if raw == nil {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, false, fmt.Errorf("read %s record %q: %w", b.name, clip(key), err)
	}
	return v, true, nil
}

// Has reports whether a record is at key, without decoding it.
func (b Bucket[T]) Has(key string) bool { return b.b != nil && b.b.Get([]byte(key)) != nil }

// Put writes v at key (in an Update).
func (b Bucket[T]) Put(key string, v T) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("write a %s record: %w %q", b.name, ErrKey, clip(key))
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.b.Put([]byte(key), raw)
}

// Delete removes the record at key, if any (in an Update).
func (b Bucket[T]) Delete(key string) error {
	if b.b == nil {
		return nil
	}
	return b.b.Delete([]byte(key))
}

// Len is the number of records.
func (b Bucket[T]) Len() int {
	if b.b == nil {
		return 0
	}
	return b.b.Stats().KeyN
}

// Each calls fn with every record that decodes, in key order; a record that does not is
// skipped (written by a newer or damaged Cabinet, it must not hide the others). fn must not
// change the bucket; an error from fn stops the walk and is returned.
func (b Bucket[T]) Each(fn func(key string, v T) error) error {
	if b.b == nil {
		return nil
	}
	return b.b.ForEach(func(k, raw []byte) error {
		var v T
		if json.Unmarshal(raw, &v) != nil {
			return nil
		}
		return fn(string(k), v)
	})
}

// ReadTx is a read transaction: the session history and any Records, seen at one instant.
type ReadTx struct{ tx *bolt.Tx }

// View runs fn in a read transaction.
func (s *Store) View(fn func(*ReadTx) error) error {
	return s.view(func(tx *bolt.Tx) error { return fn(&ReadTx{tx}) })
}

// SessionsSince calls fn with the id of every logged session that may have started at or after
// since, oldest first, and a function that decodes it (ok false when it does not decode, is not
// filed under its own id, or started before since); fn returns false to stop. The id comes
// first so a caller that can skip a session by its id does not pay for decoding it.
func (t *ReadTx) SessionsSince(since time.Time, fn func(id string, session func() (haentities.Session, bool)) bool) {
	c := t.tx.Bucket(bSessions).Cursor()
	for k, v := seekSince(c, since); k != nil; k, v = c.Next() {
		decode := func() (haentities.Session, bool) {
			var s haentities.Session
			if json.Unmarshal(v, &s) != nil || s.ID != string(k) || s.Started.Before(since) {
				return haentities.Session{}, false
			}
			return s, true
		}
		if !fn(string(k), decode) {
			return
		}
	}
}

// seekSince moves c to the first session that may have started at or after since. Session ids
// begin with their start, UTC, to the millisecond (hook/tracker), so the ids sort by start; the
// seek goes a day earlier, a margin for an id made from a clock that was off, and the caller
// still checks each session's start. A zero since starts at the first.
func seekSince(c *bolt.Cursor, since time.Time) ([]byte, []byte) {
	if since.IsZero() {
		return c.First()
	}
	return c.Seek([]byte(since.UTC().Add(-24 * time.Hour).Format("20060102T150405.000Z")))
}
