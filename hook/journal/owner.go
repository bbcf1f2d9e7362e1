package journal

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/bootclock"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Owner is whoever holds the store: the daemon for its life, or a hook
// running alone for a moment. Both apply and deliver through it, so the
// order of sources, the reset of a damaged store, the spool's clean-up, the
// intake log's bookkeeping and the log lines are the same for both. The
// daemon adds its timers around it (the delayed flush, retries with
// backoff); a hook adds its budget.
type Owner struct {
	Store *store.Store
	Spool Spool
	// Intake is the daemon's write-ahead log (nil: none). Its events were
	// acked before anything the spool or a caller holds, so they go first;
	// only the owner of the store applies it.
	Intake *IntakeLog
	// Inbox is the wrappers' folder, taken by a hook running alone (nil:
	// none; the daemon reads its inbox itself, as files are closed).
	// What a crashed daemon left there goes after the intake log.
	Inbox *InboxDir
	Log   zerolog.Logger
	// Now stamps each apply and delivery (nil: bootclock.Now).
	Now func() tracker.Stamp
	// Profile, when set, is the household's player now (the daemon's): each game start taken
	// without one is given it, so its session carries the player it was launched by.
	Profile func() string

	// mu admits one Apply at a time: Intake.Done counts the records the
	// apply read, so two interleaved applies would retire each other's.
	mu sync.Mutex
}

// Apply applies, in one transaction, what the intake log and the spool
// hold, then evs (none: a flush, which makes pending outcomes final). A
// store that bbolt finds damaged in use is moved aside and the apply is
// made again on a new one. Once committed, the spool files it read are
// removed and the intake records retired. On error nothing is lost: the
// spool and the intake keep theirs, and evs are the caller's to keep.
func (o *Owner) Apply(r Rules, publish bool, evs ...Keyed) (Result, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var acked [][]byte
	var all []Keyed
	if o.Intake != nil {
		acked = o.Intake.Pending()
		items, bad := FromIntake(acked)
		for _, err := range bad {
			o.Log.Warn().Err(err).Msg("intake record skipped")
		}
		all = append(all, items...)
	}
	now := o.now()
	var taken []InboxEntry
	if o.Inbox != nil {
		entries, bad, err := o.Inbox.Pending()
		if err != nil {
			o.Log.Warn().Err(err).Msg("inbox unreadable; its events wait for the next apply")
		}
		if len(bad) > 0 {
			o.Log.Warn().Errs("files", bad).Msg("inbox files ignored")
		}
		all, taken = append(all, inboxEvents(entries, now)...), entries
	}
	spooled, err := o.Spool.Read()
	if err != nil {
		o.Log.Warn().Err(err).Msg("spool unreadable; its events wait for the next apply")
	}
	all = append(append(all, spooled...), evs...)
	if o.Profile != nil {
		for i := range all {
			if all[i].Event.Kind == tracker.KindGameStart && all[i].Event.Profile == "" {
				all[i].Event.Profile = o.Profile()
			}
		}
	}
	res, err := Apply(o.Store, r, now, publish, all)
	if errors.Is(err, store.ErrCorrupt) {
		// Damaged pages bbolt only finds in use: start a new store (the old
		// one is kept aside) rather than refuse every event from now on.
		if rerr := o.Store.Reset(); rerr == nil {
			o.Log.Error().AnErr("cause", err).Str("moved_to", o.Store.Quarantined).Msg("the store was damaged; it was moved aside and tracking goes on with a new one")
			res, err = Apply(o.Store, r, o.now(), publish, all)
		}
	}
	if err != nil {
		o.Log.Error().Err(err).Msg("store write failed")
		return Result{}, err
	}
	o.Spool.Remove(spooled)
	for _, e := range taken {
		o.Inbox.Remove(e.Name)
	}
	if len(acked) > 0 {
		if err := o.Intake.Done(len(acked)); err != nil {
			o.Log.Warn().Err(err).Msg("intake log not cleared; its events are applied again (once) next time")
		}
	}
	if res.Reset != nil {
		o.Log.Error().Err(res.Reset).Msg("tracker state unreadable; tracking restarted from a blank state")
	}
	for _, err := range res.Skipped {
		o.Log.Warn().Err(err).Msg("event not applied")
	}
	for _, s := range res.Logged {
		o.Log.Info().Str("session", s.ID).Str("system", s.System).Dur("duration", s.Duration).Msg("session logged")
	}
	return res, nil
}

// inboxEvents turns the inbox's records into keyed events read at now, in
// their order. Records the binary would have ignored yield none; their
// files go with the rest: they are done with.
func inboxEvents(entries []InboxEntry, now tracker.Stamp) []Keyed {
	var seq InboxSequence
	var items []Keyed
	for _, e := range entries {
		if ev, err := seq.Event(e, now); err == nil {
			items = append(items, Keyed{Key: e.Key(now.BootID), Event: ev})
		}
	}
	return items
}

// Publisher delivers messages to the broker in order and says how many of
// the first were acknowledged.
type Publisher interface {
	Publish(ctx context.Context, msgs []haentities.Message) (int, error)
}

// Delivery is what one Deliver did.
type Delivery struct {
	Sent, Pending int
}

// Deliver publishes everything pending through pub within ctx, in order,
// and marks what the broker acknowledged delivered. Whatever is left waits
// for the next delivery; the error says why it stopped.
func (o *Owner) Deliver(ctx context.Context, pub Publisher) (Delivery, error) {
	items, err := o.Store.Pending(o.now().At)
	if err != nil {
		return Delivery{}, fmt.Errorf("read outbox: %w", err)
	}
	if len(items) == 0 {
		return Delivery{}, nil
	}
	msgs := make([]haentities.Message, len(items))
	for i, it := range items {
		msgs[i] = it.Message
	}
	n, err := pub.Publish(ctx, msgs)
	if n > 0 {
		if merr := o.Store.MarkDelivered(items[:n]); merr != nil {
			o.Log.Error().Err(merr).Msg("mark delivered")
		}
	}
	return Delivery{Sent: n, Pending: len(items)}, err
}

func (o *Owner) now() tracker.Stamp {
	if o.Now != nil {
		return o.Now()
	}
	return bootclock.Now()
}
