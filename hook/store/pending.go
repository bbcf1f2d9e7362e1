package store

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Item is one message waiting for delivery, as returned by Pending.
type Item struct {
	haentities.Message
	seq    uint64
	queued bool // in the queue (else a retained topic's latest value)
}

// Pending returns everything still to deliver, in the order it was
// recorded: undelivered retained values (latest only) and queued events.
// Time-sensitive events past their window are dropped first and counted.
func (s *Store) Pending(now time.Time) ([]Item, error) {
	var items []Item
	err := s.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bMeta)
		c := tx.Bucket(bQueue).Cursor()
		n, size, expired := getUint(meta, kQueueLen), getUint(meta, kQueueBytes), getUint(meta, kExpired)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			e, err := decodeEntry(v)
			if err != nil || (!e.Deadline.IsZero() && now.After(e.Deadline)) {
				// Expired, or damaged beyond use: either way it cannot be sent.
				if err := c.Delete(); err != nil {
					return err
				}
				n, size, expired = n-min(n, 1), size-min(size, uint64(len(v))), expired+1
				continue
			}
			items = append(items, Item{Message: e.message(), seq: e.Seq, queued: true})
		}
		if err := putUint(meta, kQueueLen, n); err != nil {
			return err
		}
		if err := putUint(meta, kQueueBytes, size); err != nil {
			return err
		}
		if err := putUint(meta, kExpired, expired); err != nil {
			return err
		}
		if err := s.pruneKeys(tx, now); err != nil {
			return err
		}
		return tx.Bucket(bRetained).ForEach(func(k, v []byte) error {
			if e, err := decodeEntry(v); err == nil && !e.Delivered {
				items = append(items, Item{Message: e.message(), seq: e.Seq})
			}
			return nil
		})
	})
	sort.Slice(items, func(i, j int) bool { return items[i].seq < items[j].seq })
	return items, err
}

// Retained returns the latest value of every retained topic, delivered or
// not, in recording order: what the daemon re-publishes on every connect
// and after Home Assistant's birth message.
func (s *Store) Retained() ([]haentities.Message, error) {
	var es []entry
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bRetained).ForEach(func(k, v []byte) error {
			if e, err := decodeEntry(v); err == nil && len(e.Payload) > 0 {
				es = append(es, e)
			}
			return nil
		})
	})
	sort.Slice(es, func(i, j int) bool { return es[i].Seq < es[j].Seq })
	out := make([]haentities.Message, len(es))
	for i, e := range es {
		out[i] = e.message()
	}
	return out, err
}

// MarkDelivered records that the broker acknowledged items. A retained
// topic stays undelivered when it changed after the item was taken.
func (s *Store) MarkDelivered(items []Item) error {
	if len(items) == 0 {
		return nil
	}
	return s.update(func(tx *bolt.Tx) error {
		meta, q, r := tx.Bucket(bMeta), tx.Bucket(bQueue), tx.Bucket(bRetained)
		n, size := getUint(meta, kQueueLen), getUint(meta, kQueueBytes)
		for _, it := range items {
			if it.queued {
				k := seqKey(it.seq)
				if v := q.Get(k); v != nil {
					n, size = n-min(n, 1), size-min(size, uint64(len(v)))
					if err := q.Delete(k); err != nil {
						return err
					}
				}
				continue
			}
			e, err := decodeEntry(r.Get([]byte(it.Topic)))
			if err != nil || e.Seq != it.seq {
				continue
			}
			if len(e.Payload) == 0 && e.Kind == haentities.KindDiscovery {
				// A delivered clear: the topic is gone for good.
				if err := r.Delete([]byte(it.Topic)); err != nil {
					return err
				}
				continue
			}
			e.Delivered = true
			if err := r.Put([]byte(it.Topic), e.encode()); err != nil {
				return err
			}
		}
		if err := putUint(meta, kQueueLen, n); err != nil {
			return err
		}
		return putUint(meta, kQueueBytes, size)
	})
}

// Stats are the outbox figures shown by diagnostics.
type Stats struct {
	QueueDepth   int    // queued events not yet delivered
	QueueBytes   int    // their size
	Undelivered  int    // retained values not yet delivered
	Dropped      uint64 // events dropped because the queue was full
	Expired      uint64 // time-sensitive events dropped because they were late
	Sessions     int    // sessions in the history
	LastSequence uint64
}

// Stats reads the figures.
func (s *Store) Stats() (Stats, error) {
	var st Stats
	err := s.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bMeta)
		st.QueueDepth = int(getUint(meta, kQueueLen))
		st.QueueBytes = int(getUint(meta, kQueueBytes))
		st.Dropped = getUint(meta, kDropped)
		st.Expired = getUint(meta, kExpired)
		st.LastSequence = getUint(meta, kSeq)
		st.Sessions = tx.Bucket(bSessions).Stats().KeyN
		return tx.Bucket(bRetained).ForEach(func(k, v []byte) error {
			if e, err := decodeEntry(v); err == nil && !e.Delivered {
				st.Undelivered++
			}
			return nil
		})
	})
	return st, err
}

// Query selects sessions from the history.
type Query struct {
	Since, Until time.Time // zero: unbounded
	System       string    // "" any
	Limit        int       // ≤0: all
}

// Sessions returns logged sessions started in [Since, Until), newest first.
// Session ids are time-ordered, so the scan walks the history backwards.
func (s *Store) Sessions(q Query) ([]haentities.Session, error) {
	var out []haentities.Session
	err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bSessions).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var sess haentities.Session
			if json.Unmarshal(v, &sess) != nil || !bytes.Equal(k, []byte(sess.ID)) {
				continue
			}
			if !q.Until.IsZero() && !sess.Started.Before(q.Until) {
				continue
			}
			if !q.Since.IsZero() && sess.Started.Before(q.Since) {
				continue
			}
			if q.System != "" && sess.System != q.System {
				continue
			}
			out = append(out, sess)
			if q.Limit > 0 && len(out) >= q.Limit {
				break
			}
		}
		return nil
	})
	return out, err
}

// Path is the store file.
func (s *Store) Path() string { return s.db.Path() }

// pruneKeys forgets, once a day, the delivered-event and spool keys older
// than KeyRetention, so the set stays small over years.
func (s *Store) pruneKeys(tx *bolt.Tx, now time.Time) error {
	meta := tx.Bucket(bMeta)
	last := fromUnixNano(int64(getUint(meta, kPrunedAt)))
	if !last.IsZero() && now.Sub(last) < 24*time.Hour {
		return nil
	}
	cutoff := uint64(unixNano(now.Add(-s.opts.KeyRetention)))
	c := tx.Bucket(bKeys).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) == 8 && getUintBytes(v) < cutoff {
			if err := c.Delete(); err != nil {
				return err
			}
		}
	}
	return putUint(meta, kPrunedAt, uint64(unixNano(now)))
}
