package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Tx is one write transaction: everything done in it is committed and
// fsynced together, or not at all.
type Tx struct {
	tx *bolt.Tx
	s  *Store
}

// Update runs fn in one transaction.
func (s *Store) Update(fn func(*Tx) error) error {
	return s.update(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx, s: s}) })
}

// TrackerState returns the tracker's persisted state (nil before the first
// event). The bytes are only valid inside the transaction.
func (t *Tx) TrackerState() []byte {
	return append([]byte(nil), t.tx.Bucket(bTracker).Get(kState)...)
}

// SetTrackerState persists the tracker's state.
func (t *Tx) SetTrackerState(b []byte) error { return t.tx.Bucket(bTracker).Put(kState, b) }

func (t *Tx) nextSeq() (uint64, error) {
	meta := t.tx.Bucket(bMeta)
	seq := getUint(meta, kSeq) + 1
	return seq, putUint(meta, kSeq, seq)
}

// Record stores messages for delivery. Retained kinds keep only the latest
// value per topic: an unchanged value keeps its delivery mark, a new one is
// marked undelivered. Session ends and time-sensitive events join the queue,
// in order; one whose key was already accepted is ignored, so a replay can
// never send a session twice.
func (t *Tx) Record(msgs ...haentities.Message) error {
	for _, m := range msgs {
		e, err := fromMessage(m)
		if err != nil {
			return err
		}
		if m.Kind.Retained() {
			if err := t.recordRetained(e); err != nil {
				return err
			}
			continue
		}
		if err := t.enqueue(e); err != nil {
			return err
		}
	}
	return nil
}

// Refresh records retained messages like Record, except that an unchanged
// value is marked undelivered too, so it is published again: periodic
// figures whose entities go unavailable (expire_after) unless re-sent.
func (t *Tx) Refresh(msgs ...haentities.Message) error {
	for _, m := range msgs {
		if !m.Kind.Retained() {
			return fmt.Errorf("refresh: %q is a %s message", clip(m.Topic), m.Kind)
		}
		e, err := fromMessage(m)
		if err != nil {
			return err
		}
		if err := t.putRetained(e); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tx) recordRetained(e entry) error {
	b := t.tx.Bucket(bRetained)
	if old, err := decodeEntry(b.Get([]byte(e.Topic))); err == nil &&
		bytes.Equal(old.Payload, e.Payload) && old.QoS == e.QoS && old.Kind == e.Kind {
		return nil
	}
	return t.putRetained(e)
}

// putRetained stores e as its topic's latest value, undelivered.
func (t *Tx) putRetained(e entry) error {
	b := t.tx.Bucket(bRetained)
	seq, err := t.nextSeq()
	if err != nil {
		return err
	}
	e.Seq, e.Delivered = seq, false
	return b.Put([]byte(e.Topic), e.encode())
}

func (t *Tx) enqueue(e entry) error {
	keys := t.tx.Bucket(bKeys)
	if e.Key != "" {
		if keys.Get([]byte(e.Key)) != nil {
			return nil
		}
		if err := keys.Put([]byte(e.Key), seqKey(uint64(unixNano(e.Created)))); err != nil {
			return err
		}
	}
	if e.Kind == haentities.KindTimeSensitive {
		e.Deadline = e.Created.Add(t.s.opts.EventWindow)
	}
	seq, err := t.nextSeq()
	if err != nil {
		return err
	}
	e.Seq = seq
	enc := e.encode()
	q := t.tx.Bucket(bQueue)
	if err := q.Put(seqKey(seq), enc); err != nil {
		return err
	}
	meta := t.tx.Bucket(bMeta)
	if err := putUint(meta, kQueueBytes, getUint(meta, kQueueBytes)+uint64(len(enc))); err != nil {
		return err
	}
	if err := putUint(meta, kQueueLen, getUint(meta, kQueueLen)+1); err != nil {
		return err
	}
	return t.bound()
}

// bound drops the oldest queued events while the queue is over its count or
// byte limit, and counts them.
func (t *Tx) bound() error {
	q, meta := t.tx.Bucket(bQueue), t.tx.Bucket(bMeta)
	n := int(getUint(meta, kQueueLen))
	size := getUint(meta, kQueueBytes)
	c := q.Cursor()
	for k, v := c.First(); k != nil && (n > t.s.opts.MaxQueue || size > uint64(t.s.opts.MaxQueueBytes)); k, v = c.Next() {
		size -= min(size, uint64(len(v)))
		n--
		if err := c.Delete(); err != nil {
			return err
		}
		if err := putUint(meta, kDropped, getUint(meta, kDropped)+1); err != nil {
			return err
		}
	}
	if err := putUint(meta, kQueueLen, uint64(max(n, 0))); err != nil {
		return err
	}
	return putUint(meta, kQueueBytes, size)
}

// RecordDiscovery stores the full set of discovery configs we produce now,
// and an empty retained payload (which makes Home Assistant delete the
// entity) for every config topic we published before and no longer produce,
// except the keep topics: configs another publisher owns (a hook keeps the
// daemon's, haentities.KeptTopics).
func (t *Tx) RecordDiscovery(configs []haentities.Message, at time.Time, keep ...string) error {
	want := map[string]bool{}
	for _, topic := range keep {
		want[topic] = true
	}
	for _, m := range configs {
		if m.Kind != haentities.KindDiscovery {
			return fmt.Errorf("record discovery: %q is a %s message", clip(m.Topic), m.Kind)
		}
		want[m.Topic] = true
	}
	var stale []string
	c := t.tx.Bucket(bRetained).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		e, err := decodeEntry(v)
		if err == nil && e.Kind == haentities.KindDiscovery && len(e.Payload) > 0 && !want[e.Topic] {
			stale = append(stale, e.Topic)
		}
	}
	for _, topic := range stale {
		if err := t.Record(haentities.ClearConfig(topic, at)); err != nil {
			return err
		}
	}
	return t.Record(configs...)
}

// AppendSession adds a logged session to the history (idempotent by id).
func (t *Tx) AppendSession(s haentities.Session) error {
	if s.ID == "" || len(s.ID) > maxKeyLen {
		return fmt.Errorf("append session: bad session id %q", clip(s.ID))
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("append session: %w", err)
	}
	return t.tx.Bucket(bSessions).Put([]byte(s.ID), b)
}

// KeptPlayDay reads the kept play-time-today state in a read-only
// transaction (no commit, no fsync: the daemon reads it often and writes
// it only when it changes).
func (s *Store) KeptPlayDay() ([]byte, error) {
	var b []byte
	err := s.view(func(tx *bolt.Tx) error {
		b = bytes.Clone(tx.Bucket(bMeta).Get(kPlayDay))
		return nil
	})
	return b, err
}

// PlayDay is the kept state of the play-time-today figure (nil before
// any; hook/playday reads it).
func (t *Tx) PlayDay() []byte {
	return bytes.Clone(t.tx.Bucket(bMeta).Get(kPlayDay))
}

// SetPlayDay keeps the play-time-today state.
func (t *Tx) SetPlayDay(b []byte) error { return t.tx.Bucket(bMeta).Put(kPlayDay, b) }

// Name is what ES calls a game, cached so hooks can prefer it over the
// argv ES mangles.
type Name struct {
	Name       string `json:"n"`
	System     string `json:"s,omitempty"`
	SystemName string `json:"sn,omitempty"`
	// Details are ES's metadata of the game, which hooks and the daemon
	// publish with the session.
	Details haentities.GameDetails `json:"d,omitzero"`
}

// PutName caches a game's names by ROM path.
func (t *Tx) PutName(path string, n Name) error {
	if path == "" || len(path) > maxTopicLen {
		return fmt.Errorf("cache name: bad path")
	}
	b, _ := json.Marshal(n)
	return t.tx.Bucket(bNames).Put([]byte(path), b)
}

// PutSystem caches a system's full name.
func (t *Tx) PutSystem(name, fullName string) error {
	if name == "" || len(name) > maxKeyLen {
		return fmt.Errorf("cache system: bad name")
	}
	return t.tx.Bucket(bSystems).Put([]byte(name), []byte(fullName))
}

// Name returns the cached names of a ROM path.
func (t *Tx) Name(path string) (Name, bool) {
	var n Name
	v := t.tx.Bucket(bNames).Get([]byte(path))
	if v == nil || json.Unmarshal(v, &n) != nil {
		return Name{}, false
	}
	return n, true
}

// CachedName is Name in a read-only transaction (no commit, no fsync), for
// a caller that writes only what changed.
func (s *Store) CachedName(path string) (Name, bool, error) {
	var n Name
	var ok bool
	err := s.view(func(tx *bolt.Tx) error {
		n, ok = (&Tx{tx: tx, s: s}).Name(path)
		return nil
	})
	return n, ok, err
}

// CachedSystem returns the cached full name of a system, in a read transaction.
func (s *Store) CachedSystem(name string) (string, bool, error) {
	var full string
	var ok bool
	err := s.view(func(tx *bolt.Tx) error {
		full, ok = (&Tx{tx: tx, s: s}).SystemName(name)
		return nil
	})
	return full, ok, err
}

// SystemName returns the cached full name of a system.
func (t *Tx) SystemName(name string) (string, bool) {
	v := t.tx.Bucket(bSystems).Get([]byte(name))
	return string(v), v != nil
}

// Once records key as done and reports whether this was the first time
// (spooled events use it so a crash between commit and file removal never
// applies one twice).
func (t *Tx) Once(key string, at time.Time) (bool, error) {
	if key == "" || len(key) > maxKeyLen {
		return false, fmt.Errorf("once: bad key %q", clip(key))
	}
	b := t.tx.Bucket(bKeys)
	if b.Get([]byte(key)) != nil {
		return false, nil
	}
	return true, b.Put([]byte(key), seqKey(uint64(unixNano(at))))
}
