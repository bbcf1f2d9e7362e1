package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// The session history is also RomM's queue: a logged session is pending
// for RomM until it carries a mark in bRomm (delivered, or unmatched when
// RomM does not know the game). So whoever logs a session queues it — a
// hook running alone included — without knowing about RomM, and the
// daemon's reporter delivers it. An older Cabinet ignores the bucket.
var bRomm = []byte("romm")

// RommState is a session's delivery state to RomM.
type RommState string

// Delivery states.
const (
	RommDelivered RommState = "delivered" // RomM created it, or answered duplicate
	RommUnmatched RommState = "unmatched" // RomM does not know the game: not retried
	RommRetry     RommState = "retry"     // failed; tried again after NextTry
)

// RommMark is what the store keeps of one session's delivery to RomM.
type RommMark struct {
	State    RommState `json:"s"`
	ROMID    int       `json:"r,omitempty"`
	Attempts int       `json:"a,omitempty"`
	NextTry  time.Time `json:"n,omitzero"`
	Detail   string    `json:"d,omitempty"` // why the last attempt failed (cleaned by the caller)
}

// maxRommDetail bounds a kept failure reason.
const maxRommDetail = 300

// RommItem is a session RomM still lacks, with its last mark (zero when
// it was never tried).
type RommItem struct {
	Session haentities.Session
	Mark    RommMark
}

// RommPending returns up to limit logged sessions started at or after
// since that RomM still lacks: no mark, or a retry mark due by now. Oldest
// first, so RomM's history fills in order.
func (s *Store) RommPending(since, now time.Time, limit int) ([]RommItem, error) {
	var out []RommItem
	err := s.view(func(tx *bolt.Tx) error {
		marks := tx.Bucket(bRomm)
		c := tx.Bucket(bSessions).Cursor()
		for k, v := seekSince(c, since); k != nil; k, v = c.Next() {
			if limit > 0 && len(out) >= limit {
				break
			}
			// The mark first: a long history is mostly delivered, and a
			// mark is cheaper to read than a session.
			var m RommMark
			if marks != nil {
				if raw := marks.Get(k); raw != nil {
					if json.Unmarshal(raw, &m) == nil && (m.State != RommRetry || now.Before(m.NextTry)) {
						continue
					}
				}
			}
			var sess haentities.Session
			if json.Unmarshal(v, &sess) != nil || !bytes.Equal(k, []byte(sess.ID)) || sess.Started.Before(since) {
				continue
			}
			out = append(out, RommItem{Session: sess, Mark: m})
		}
		return nil
	})
	return out, err
}

// MarkRomm records the delivery state of sessions to RomM, in one fsynced
// transaction.
func (s *Store) MarkRomm(marks map[string]RommMark) error {
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bRomm)
		if err != nil {
			return err
		}
		for id, m := range marks {
			if id == "" || len(id) > maxKeyLen {
				return fmt.Errorf("mark a RomM delivery: bad session id %q", clip(id))
			}
			if r := []rune(m.Detail); len(r) > maxRommDetail {
				m.Detail = string(r[:maxRommDetail])
			}
			v, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(id), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// RommCounts are the sessions logged since a time by RomM delivery state.
type RommCounts struct {
	Pending, Delivered, Unmatched, Retrying int
}

// RommStats counts the sessions started at or after since by delivery
// state (doctor, library_status).
func (s *Store) RommStats(since time.Time) (RommCounts, error) {
	var c RommCounts
	err := s.view(func(tx *bolt.Tx) error {
		marks := tx.Bucket(bRomm)
		cur := tx.Bucket(bSessions).Cursor()
	sessions:
		for k, v := seekSince(cur, since); k != nil; k, v = cur.Next() {
			var sess haentities.Session
			if json.Unmarshal(v, &sess) != nil || sess.Started.Before(since) {
				continue
			}
			var m RommMark
			if marks != nil {
				if raw := marks.Get(k); raw != nil && json.Unmarshal(raw, &m) == nil {
					switch m.State {
					case RommDelivered:
						c.Delivered++
						continue sessions
					case RommUnmatched:
						c.Unmatched++
						continue sessions
					case RommRetry:
						c.Retrying++
						continue sessions
					}
				}
			}
			c.Pending++
		}
		return nil
	})
	return c, err
}

// seekSince moves c to the first session that may have started at or
// after since. Session ids begin with their start, UTC, to the millisecond
// (hook/tracker), so the ids sort by start; the seek goes a day earlier, a
// margin for an id made from a clock that was off, and the caller still
// checks each session's start. A zero since starts at the first.
func seekSince(c *bolt.Cursor, since time.Time) ([]byte, []byte) {
	if since.IsZero() {
		return c.First()
	}
	return c.Seek([]byte(since.UTC().Add(-24 * time.Hour).Format("20060102T150405.000Z")))
}
