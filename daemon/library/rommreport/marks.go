package rommreport

import (
	"errors"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// The session history is also RomM's queue: a logged session is pending for RomM until it carries
// a mark here (delivered, or unmatched when RomM does not know the game). So whoever logs a
// session queues it — a hook running alone included — without knowing about RomM, and the
// daemon's reporter delivers it. Keyed by the session's id.
var marks = store.Records[Mark]{Name: "romm"}

// State is a session's delivery state to RomM.
type State string

// Delivery states.
const (
	Delivered State = "delivered" // RomM created it, or answered duplicate
	Unmatched State = "unmatched" // RomM does not know the game: not retried
	Retry     State = "retry"     // failed; tried again after NextTry
)

// Mark is what the store keeps of one session's delivery to RomM.
type Mark struct {
	State    State     `json:"s"`
	ROMID    int       `json:"r,omitempty"`
	Attempts int       `json:"a,omitempty"`
	NextTry  time.Time `json:"n,omitzero"`
	Detail   string    `json:"d,omitempty"` // why the last attempt failed (cleaned by the caller)
}

// maxDetail bounds a kept failure reason.
const maxDetail = 300

// Item is a session RomM still lacks, with its last mark (zero when it was never tried).
type Item struct {
	Session haentities.Session
	Mark    Mark
}

// Counts are the sessions logged since a time by RomM delivery state.
type Counts struct {
	Pending, Delivered, Unmatched, Retrying int
}

// Marks is the delivery marks in the store: the reporter's Store on a cabinet.
type Marks struct{ DB *store.Store }

// Pending returns up to limit logged sessions started at or after since that RomM still lacks:
// no mark, or a retry mark due by now. Oldest first, so RomM's history fills in order.
func (m Marks) Pending(since, now time.Time, limit int) ([]Item, error) {
	var out []Item
	err := m.DB.View(func(tx *store.ReadTx) error {
		kept := marks.In(tx)
		tx.SessionsSince(since, func(id string, session func() (haentities.Session, bool)) bool {
			if limit > 0 && len(out) >= limit {
				return false
			}
			// The mark first: a long history is mostly delivered, and a mark is cheaper to
			// read than a session.
			mk, found, gerr := kept.Get(id)
			if gerr == nil && found && (mk.State != Retry || now.Before(mk.NextTry)) {
				return true
			}
			if gerr != nil {
				mk = Mark{}
			}
			if s, ok := session(); ok {
				out = append(out, Item{Session: s, Mark: mk})
			}
			return true
		})
		return nil
	})
	return out, err
}

// Mark records the delivery state of sessions to RomM, in one fsynced transaction.
func (m Marks) Mark(ms map[string]Mark) error {
	return marks.Update(m.DB, func(b store.Bucket[Mark]) error {
		for id, mk := range ms {
			if id == "" {
				return errors.New("mark a RomM delivery: no session id")
			}
			if r := []rune(mk.Detail); len(r) > maxDetail {
				mk.Detail = string(r[:maxDetail])
			}
			if err := b.Put(id, mk); err != nil {
				return err
			}
		}
		return nil
	})
}

// Stats counts the sessions started at or after since by delivery state (doctor, status).
func (m Marks) Stats(since time.Time) (Counts, error) {
	var c Counts
	err := m.DB.View(func(tx *store.ReadTx) error {
		kept := marks.In(tx)
		tx.SessionsSince(since, func(id string, session func() (haentities.Session, bool)) bool {
			if _, ok := session(); !ok {
				return true
			}
			mk, found, err := kept.Get(id)
			if err == nil && found {
				switch mk.State {
				case Delivered:
					c.Delivered++
					return true
				case Unmatched:
					c.Unmatched++
					return true
				case Retry:
					c.Retrying++
					return true
				}
			}
			c.Pending++
			return true
		})
		return nil
	})
	return c, err
}
