package hook

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/outbox"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal/intake"
)

// Publisher delivers messages to the broker in order and says how many of
// the first were acknowledged (those are marked delivered).
type Publisher interface {
	Publish(ctx context.Context, msgs []haentities.Message) (int, error)
}

// Runner records one event when no daemon runs: it owns the store for a
// moment, or spools the event when the store is busy.
type Runner struct {
	StorePath string
	Spool     journal.Spool
	// Intake is the daemon's intake log: events it acked but did not apply
	// before it died are applied first, before anything newer.
	Intake   string
	Settings haentities.Settings
	Tracker  tracker.Config
	// Publisher is nil when MQTT is off.
	Publisher Publisher
	Log       zerolog.Logger
	// Now stamps the moment of each Apply (default: journal.Now).
	Now func() tracker.Stamp
	// LockTimeout bounds the wait for the store (default 60 ms).
	LockTimeout time.Duration
	// ScheduleFlush, when set, arranges for a flush after d: the tracker
	// logs a session only once its end is final, a few seconds after
	// game-end, and a hook must not wait that long on ES's path.
	ScheduleFlush func(d time.Duration)
	// RetryDelivery, when set, arranges one more delivery attempt shortly,
	// off ES's path, after the hook's budget cut a delivery short.
	RetryDelivery func()
}

// Handle records ev. It never fails: whatever goes wrong is logged, and the
// event is spooled when it cannot be stored, so nothing logged is lost.
func (r *Runner) Handle(ctx context.Context, ev tracker.Event) {
	r.HandleKeyed(ctx, journal.NewKey(ev), ev)
}

// HandleKeyed records ev under key (see journal.NewKey): if the daemon got
// the same event but its ack came too late, the store still applies it once.
func (r *Runner) HandleKeyed(ctx context.Context, key string, ev tracker.Event) {
	publish := ev.Source != tracker.SourceConfiggen
	store, err := r.open(ev)
	if err != nil {
		r.keep(key, ev, err, false)
		return
	}
	defer store.Close()
	if store.Quarantined != "" {
		r.Log.Error().Str("moved_to", store.Quarantined).Msg("the store was damaged; it was moved aside and tracking goes on with a new one")
	}
	own := journal.Keyed(key, ev)
	// Events a dead daemon acked but never stored go first, once: only
	// the owner of the store touches its intake log, so nothing is added
	// to it while this hook holds the store.
	in := r.openIntake()
	defer in.close()
	if err := r.apply(ctx, store, publish, &own, in); err != nil {
		return
	}
	// Hooks that found the store busy while we held it spooled their
	// events: take them now rather than leave them for the next event.
	for i := 0; i < 3 && ctx.Err() == nil; i++ {
		if n, _ := r.Spool.Read(); len(n) == 0 {
			break
		}
		if err := r.apply(ctx, store, publish, nil, nil); err != nil {
			return
		}
	}
}

// Flush applies no event: pending outcomes (a session that ended a few
// seconds ago) become final and are published.
func (r *Runner) Flush(ctx context.Context) {
	store, err := r.open(tracker.Event{})
	if err != nil {
		r.Log.Debug().Err(err).Msg("flush skipped")
		return
	}
	defer store.Close()
	in := r.openIntake()
	defer in.close()
	r.apply(ctx, store, true, nil, in)
}

func (r *Runner) open(ev tracker.Event) (*outbox.Store, error) {
	timeout := r.LockTimeout
	if timeout <= 0 {
		timeout = 60 * time.Millisecond
	}
	if ev.Kind == tracker.KindQuit {
		timeout *= 5 // the machine may go down next: worth waiting a little more
	}
	return outbox.Open(r.StorePath, outbox.Options{LockTimeout: timeout})
}

// apply ingests the spool and own (nil: a flush) in one transaction, then
// publishes what is pending.
func (r *Runner) apply(ctx context.Context, store *outbox.Store, publish bool, own *journal.Spooled, in *acked) error {
	spooled, err := r.Spool.Read()
	if err != nil {
		r.Log.Warn().Err(err).Msg("spool unreadable; its events wait for the next run")
	}
	if in != nil {
		spooled = append(in.items, spooled...)
	}
	j := journal.Journal{Store: store, Settings: r.Settings, Tracker: r.Tracker, Publishing: r.Publisher != nil}
	if own != nil {
		spooled = append(spooled, *own)
	}
	res, err := j.Apply(r.now(), publish, spooled)
	if errors.Is(err, outbox.ErrCorrupt) {
		// Damaged pages bbolt only finds in use: start a new store (the old
		// one is kept aside) rather than spool every event from now on.
		if rerr := store.Reset(); rerr == nil {
			r.Log.Error().AnErr("cause", err).Str("moved_to", store.Quarantined).Msg("the store was damaged; it was moved aside and tracking goes on with a new one")
			res, err = j.Apply(r.now(), publish, spooled)
		}
	}
	if err != nil {
		if own != nil {
			r.keep(strings.TrimSuffix(own.Name, ".event"), own.Event, err, true)
		} else {
			r.Log.Error().Err(err).Msg("store write failed")
		}
		return err
	}
	r.Spool.Remove(res.Ingested)
	if in != nil {
		if err := in.lg.Done(len(in.lg.Pending())); err != nil {
			r.Log.Warn().Err(err).Msg("intake log not cleared; its events are applied again (once) next time")
		}
	}
	if res.Reset != nil {
		r.Log.Error().Err(res.Reset).Msg("tracker state unreadable; tracking restarted from a blank state")
	}
	for _, e := range res.Skipped {
		r.Log.Warn().Err(e).Msg("event not applied")
	}
	for _, s := range res.Logged {
		r.Log.Info().Str("session", s.ID).Str("system", s.System).Dur("duration", s.Duration).Msg("session logged")
	}
	if res.FlushIn > 0 && r.ScheduleFlush != nil {
		r.ScheduleFlush(res.FlushIn)
	}
	if publish && r.Publisher != nil {
		r.deliver(ctx, store)
	}
	return nil
}

// acked is what the daemon's intake log holds: events a daemon acked and
// died before storing.
type acked struct {
	lg    *intake.Log
	items []journal.Spooled
}

// openIntake opens the daemon's intake log when it holds events; nil when
// there is nothing (the usual case: the daemon empties it as it goes).
func (r *Runner) openIntake() *acked {
	if r.Intake == "" {
		return nil
	}
	lg, err := intake.OpenExisting(r.Intake)
	if err != nil {
		r.Log.Warn().Err(err).Msg("intake log unreadable; the daemon applies it when it starts")
		return nil
	}
	if lg == nil {
		return nil
	}
	recs := lg.Pending()
	if len(recs) == 0 {
		lg.Close()
		return nil
	}
	items, bad := journal.FromIntake(recs)
	for _, err := range bad {
		r.Log.Warn().Err(err).Msg("intake record skipped")
	}
	return &acked{lg: lg, items: items}
}

func (a *acked) close() {
	if a != nil {
		a.lg.Close()
	}
}

// deliver publishes everything pending within ctx's budget and marks what
// the broker acknowledged. Whatever is left stays for the next run.
func (r *Runner) deliver(ctx context.Context, store *outbox.Store) {
	now := r.now().At
	items, err := store.Pending(now)
	if err != nil || len(items) == 0 {
		if err != nil {
			r.Log.Error().Err(err).Msg("read outbox")
		}
		return
	}
	msgs := make([]haentities.Message, len(items))
	for i, it := range items {
		msgs[i] = it.Message
	}
	n, err := r.Publisher.Publish(ctx, msgs)
	if n > 0 {
		if merr := store.MarkDelivered(items[:n]); merr != nil {
			r.Log.Error().Err(merr).Msg("mark delivered")
		}
	}
	if err != nil {
		lvl := r.Log.Warn()
		if errors.Is(err, context.DeadlineExceeded) {
			lvl = r.Log.Warn().Str("hint", "the broker did not answer in time; messages stay queued")
			// The hook's budget ran out (a slow broker, a slow SD card): one
			// more attempt, off ES's path, finishes the delivery instead of
			// leaving Home Assistant stale until the next event.
			if r.RetryDelivery != nil {
				r.RetryDelivery()
			}
		}
		lvl.Err(err).Int("sent", n).Int("pending", len(items)).Msg("mqtt publish incomplete")
	}
}

// keep saves an event the store could not take: in the spool, or else —
// when this hook owns the store (it refused the commit: a full disk, a
// failing card) — in the daemon's intake log, whose blocks were allocated
// when it was created. Only the owner of the store may write that log.
func (r *Runner) keep(key string, ev tracker.Event, cause error, owner bool) {
	err := r.Spool.WriteKeyed(key, ev)
	if err == nil {
		lvl := r.Log.Debug()
		if !journal.IsBusy(cause) {
			lvl = r.Log.Warn()
		}
		lvl.AnErr("cause", cause).Str("event", string(ev.Kind)).Msg("event spooled")
		return
	}
	if owner && r.Intake != "" {
		if lg, ierr := intake.OpenExisting(r.Intake); ierr == nil && lg != nil {
			ierr = journal.AppendIntake(lg, key, ev)
			lg.Close()
			if ierr == nil {
				r.Log.Warn().AnErr("cause", cause).AnErr("spool", err).Str("event", string(ev.Kind)).Msg("event kept in the intake log")
				return
			}
		}
	}
	r.Log.Error().Err(err).AnErr("cause", cause).Str("event", string(ev.Kind)).Msg("event lost: neither the store nor the spool could take it")
}

func (r *Runner) now() tracker.Stamp {
	if r.Now != nil {
		return r.Now()
	}
	return journal.Now()
}
