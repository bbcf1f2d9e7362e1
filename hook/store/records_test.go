package store

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batocera-cabinet/cabinet/haentities"
)

type note struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

// TestRecords: a feature's own bucket of JSON records: absent until written (a read sees it
// empty), put, get, each in key order, a record that does not decode skipped by Each and an
// error for Get, an error from the update undoing all of it, bad keys refused.
func TestRecords(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	notes := Records[note]{Name: "notes"}
	if err := notes.View(s, func(b Bucket[note]) error {
		if _, ok, err := b.Get("a"); ok || err != nil || b.Len() != 0 || b.Has("a") {
			t.Errorf("an unwritten bucket: ok %v err %v len %d", ok, err, b.Len())
		}
		return b.Each(func(string, note) error { t.Error("an unwritten bucket has records"); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if err := notes.Update(s, func(b Bucket[note]) error {
		for _, k := range []string{"b", "a", "c"} {
			if err := b.Put(k, note{Text: k, N: len(k)}); err != nil {
				return err
			}
		}
		return b.Delete("c")
	}); err != nil {
		t.Fatal(err)
	}
	// A record another Cabinet wrote that this one cannot read.
	if err := s.update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("notes")).Put([]byte("z"), []byte("{not json")) }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := notes.Update(s, func(b Bucket[note]) error {
		b.Put("d", note{Text: "d"})
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("update error %v, want boom", err)
	}
	var keys []string
	if err := notes.View(s, func(b Bucket[note]) error {
		if got, ok, err := b.Get("a"); !ok || err != nil || got != (note{Text: "a", N: 1}) {
			t.Errorf("Get a = %+v %v %v", got, ok, err)
		}
		if _, _, err := b.Get("z"); err == nil {
			t.Error("a record that does not decode read without error")
		}
		if b.Len() != 3 || !b.Has("z") || b.Has("d") || b.Has("c") {
			t.Errorf("len %d has z %v d %v c %v; want 3 records a, b, z", b.Len(), b.Has("z"), b.Has("d"), b.Has("c"))
		}
		return b.Each(func(k string, v note) error { keys = append(keys, k+"="+v.Text); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"a=a", "b=b"}) {
		t.Errorf("Each saw %q, want a and b in key order (z skipped)", keys)
	}
	for _, k := range []string{"", strings.Repeat("k", maxKeyLen+1)} {
		err := notes.Update(s, func(b Bucket[note]) error { return b.Put(k, note{}) })
		if !errors.Is(err, ErrKey) {
			t.Errorf("Put(%d-byte key): %v, want ErrKey", len(k), err)
		}
	}
}

// TestSessionsSince: sessions from a time on, oldest first, decoded only when asked, stopping
// when told.
func TestSessionsSince(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	if err := s.Update(func(tx *Tx) error {
		for i, id := range []string{"20261201T200000.000Z-a", "20261201T210000.000Z-b", "20261201T220000.000Z-c"} {
			at := t0.Add(time.Duration(i) * time.Hour)
			if err := tx.AppendSession(haentities.Session{ID: id, Game: id, Started: at, Ended: at.Add(time.Minute), Duration: time.Minute}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	s.View(func(tx *ReadTx) error {
		tx.SessionsSince(t0.Add(30*time.Minute), func(id string, session func() (haentities.Session, bool)) bool {
			if sess, ok := session(); ok {
				got = append(got, sess.ID[len(sess.ID)-1:])
			}
			return len(got) < 1
		})
		return nil
	})
	if !slices.Equal(got, []string{"b"}) {
		t.Errorf("sessions since 20:30, stopping after one: %q, want b", got)
	}
}
