// Package rommreport sends the play sessions the tracker logs to RomM's
// play history once the cabinet is paired. The store's session history is
// the queue (Marks, over the store's sessions): whoever logs a
// session queues it, and the daemon's Reporter drains it — in order, in
// batches RomM accepts, with backoff, exactly once from Cabinet's side
// (RomM answers duplicate for a session it has, and that counts as
// delivered). A session whose game RomM does not know is marked unmatched
// and not retried.
package rommreport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Store is the queue: the store's session history and RomM marks (Marks on a cabinet).
type Store interface {
	Pending(since, now time.Time, limit int) ([]Item, error)
	Mark(marks map[string]Mark) error
}

// Session is one session as RomM takes it.
type Session struct {
	ROMID      int
	Start, End time.Time
	Duration   time.Duration
}

// Result is RomM's answer for one session, in the order sent.
type Result struct {
	Status string // created, duplicate, error
	Detail string
}

// Poster sends up to MaxBatch sessions to RomM's play history (the RomM
// client's PostPlaySessions, adapted).
type Poster interface {
	Post(ctx context.Context, s []Session) ([]Result, error)
}

// Resolver finds the RomM ROM a session played. known is false when RomM
// does not have the game (the session is then unmatched).
type Resolver interface {
	ROMID(ctx context.Context, s haentities.Session) (id int, known bool, err error)
}

// MaxBatch is the most sessions RomM takes in one request.
const MaxBatch = 100

// Backoff of one session RomM refused (its answer for that session was an
// error): doubled per attempt from Min, at most Max. Such a session no
// longer holds up those after it.
const (
	MinBackoff = 30 * time.Second
	MaxBackoff = 6 * time.Hour
)

// Backoff of RomM itself — unreachable, refusing the token, failing the
// whole request: doubled per failed pass from MinServerBackoff, at most
// MaxServerBackoff. The sessions keep their place, so they go out in order
// once RomM is back.
const (
	MinServerBackoff = 30 * time.Second
	MaxServerBackoff = 30 * time.Minute
)

// maxBlocking is how many passes a session whose ROM could not be looked
// up (RomM failing that one lookup) holds up those after it; then it waits
// its own backoff.
const maxBlocking = 5

// Reporter drains the queue. Keep one per RomM (server, token, device): it
// holds RomM's backoff between passes.
type Reporter struct {
	Store   Store
	Post    Poster
	Resolve Resolver
	// Since is when the cabinet was paired: earlier sessions are sent only
	// on request (backfill sets it earlier).
	Since time.Time
	Now   func() time.Time

	failures int
	next     time.Time
}

// Pass is what one Drain did.
type Pass struct {
	Delivered, Unmatched, Retrying int
}

// Due reports whether RomM's backoff has passed (always, until a pass
// failed).
func (r *Reporter) Due() bool { return !r.now().Before(r.next) }

// Drain sends everything pending now, batch after batch, oldest first, and
// marks each session. It stops at the first failure of RomM (the session
// it stopped at and those after it keep their place for the next pass,
// which Due holds back) and returns what it did with the error.
func (r *Reporter) Drain(ctx context.Context) (Pass, error) {
	p, err := r.drain(ctx)
	switch {
	case err == nil:
		r.failures, r.next = 0, time.Time{}
	case ctx.Err() == nil:
		wait := MinServerBackoff
		for i := 0; i < r.failures && wait < MaxServerBackoff; i++ {
			wait *= 2
		}
		r.failures++
		r.next = r.now().Add(min(wait, MaxServerBackoff))
	}
	return p, err
}

func (r *Reporter) drain(ctx context.Context) (Pass, error) {
	var p Pass
	now := r.now()
	for {
		pending, err := r.Store.Pending(r.Since, now, MaxBatch)
		if err != nil {
			return p, fmt.Errorf("read the sessions RomM still lacks: %w", err)
		}
		if len(pending) == 0 {
			return p, nil
		}
		marks := map[string]Mark{}
		var batch []Session
		var ids []string
		var stop error // RomM failed a lookup: the rest of the queue waits
	resolve:
		for _, it := range pending {
			s := it.Session
			id, known, err := r.Resolve.ROMID(ctx, s)
			switch {
			case ctx.Err() != nil:
				return p, ctx.Err()
			case err != nil && it.Mark.Attempts+1 < maxBlocking:
				marks[s.ID] = Mark{State: Retry, Attempts: it.Mark.Attempts + 1, NextTry: now,
					Detail: untrusted.Clean(err.Error(), 300)}
				p.Retrying++
				stop = fmt.Errorf("look up the game of a session in RomM: %w", err)
				break resolve
			case err != nil:
				marks[s.ID] = retry(0, it.Mark.Attempts, now, err.Error())
				p.Retrying++
			case !known:
				marks[s.ID] = Mark{State: Unmatched, Detail: "RomM does not have this game"}
				p.Unmatched++
			case !s.Ended.After(s.Started):
				// RomM refuses an end not after the start; the tracker never
				// logs one, but a damaged record must not be retried for ever.
				marks[s.ID] = Mark{State: Unmatched, ROMID: id, Detail: "the session ends before it starts"}
				p.Unmatched++
			default:
				batch = append(batch, Session{ROMID: id, Start: s.Started, End: s.Ended, Duration: s.Duration})
				ids = append(ids, s.ID)
				marks[s.ID] = Mark{State: Delivered, ROMID: id, Attempts: it.Mark.Attempts}
			}
		}
		if len(batch) > 0 {
			results, err := r.Post.Post(ctx, batch)
			if err == nil && len(results) != len(batch) {
				err = fmt.Errorf("RomM answered %d results for %d sessions", len(results), len(batch))
			}
			if err != nil {
				// The whole request failed: the batch keeps its place (and
				// its marks) and goes first next time.
				for _, id := range ids {
					delete(marks, id)
				}
				if merr := r.Store.Mark(marks); merr != nil {
					return p, fmt.Errorf("record RomM's answer: %w", merr)
				}
				if errors.Is(err, context.Canceled) {
					return p, err
				}
				return p, fmt.Errorf("send %d play sessions to RomM: %w", len(batch), err)
			}
			for i, res := range results {
				id := ids[i]
				switch res.Status {
				case "created", "duplicate":
					p.Delivered++
				default:
					marks[id] = retry(marks[id].ROMID, marks[id].Attempts, now, "RomM refused it: "+untrusted.Clean(res.Detail, 200))
					p.Retrying++
				}
			}
		}
		if err := r.Store.Mark(marks); err != nil {
			return p, fmt.Errorf("record RomM's answer: %w", err)
		}
		if stop != nil {
			return p, stop
		}
		if len(pending) < MaxBatch {
			return p, nil
		}
	}
}

// retry marks a session RomM refused for a later pass: MinBackoff after
// the first failure, doubling with each, at most MaxBackoff — a refusal
// costs a handful of tries a day, not thousands.
func retry(romID, before int, now time.Time, why string) Mark {
	wait := MinBackoff
	for i := 0; i < before && wait < MaxBackoff; i++ {
		wait *= 2
	}
	return Mark{State: Retry, ROMID: romID, Attempts: before + 1, NextTry: now.Add(min(wait, MaxBackoff)),
		Detail: untrusted.Clean(why, 300)}
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
