// Package hook is `cabinet hook` when no daemon answers: its Runner records the
// event by itself (store, then a short MQTT publish), else into the spool —
// always quickly and silently, because it runs on ES's path for every
// event — and its detached flusher (SpawnFlusher, RunFlusher) logs the session
// once its end is final, off ES's path. Below it: argv parses the hook's argv,
// socket hands an event to the daemon, journal is the event's way to the store
// and its queues (package journal says the whole way), store is the bbolt
// store, tracker the play-tracking state machine, playday play time today,
// paths the file layout and bootclock the stamp every event carries. The
// daemon runs the same journal on its fast path.
package hook

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Runner records one event when no daemon runs: it owns the store for a
// moment, or spools the event when the store is busy.
type Runner struct {
	// Layout names the store, the spool, the daemon's intake log and the
	// wrappers' inbox (events a daemon acked or was handed but did not apply
	// before it died are applied first, before anything newer).
	Layout   paths.Layout
	Settings haentities.Settings
	Tracker  tracker.Config
	// Publisher is nil when MQTT is off.
	Publisher journal.Publisher
	// BatoceraConf is where an achievement's hardcore setting is read
	// (journal.Rules.BatoceraConf).
	BatoceraConf string
	Log          zerolog.Logger
	// Now stamps the moment of each Apply (default: bootclock.Now).
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
	r.HandleKeyed(ctx, journal.NewKeyed(ev))
}

// HandleKeyed records an event under its key (see journal.NewKey): if the
// daemon got the same event but its ack came too late, the store still
// applies it once.
func (r *Runner) HandleKeyed(ctx context.Context, own journal.Keyed) {
	publish := own.Event.Source != tracker.SourceConfiggen
	o, err := r.own(own.Event.Kind)
	if err != nil {
		r.keep(own, err, false)
		return
	}
	defer r.release(o)
	if _, err := r.apply(ctx, o, publish, own); err != nil {
		r.keep(own, err, true)
		return
	}
	// Hooks that found the store busy while we held it spooled their
	// events: take them now rather than leave them for the next event.
	for i := 0; i < 3 && ctx.Err() == nil; i++ {
		if n, _ := r.spool().Read(); len(n) == 0 {
			break
		}
		if _, err := r.apply(ctx, o, publish); err != nil {
			return
		}
	}
}

// Flush applies no event: pending outcomes (a session that ended a few
// seconds ago) become final and are published.
func (r *Runner) Flush(ctx context.Context) {
	o, err := r.own("")
	if err != nil {
		r.Log.Debug().Err(err).Msg("flush skipped")
		return
	}
	defer r.release(o)
	r.apply(ctx, o, true)
}

func (r *Runner) spool() journal.Spool { return journal.Spool{Dir: r.Layout.Spool()} }

// own takes the store for this run, with the daemon's intake log when it
// holds events: only the owner of the store touches that log, so nothing
// is added to it while this hook holds the store.
func (r *Runner) own(kind tracker.Kind) (*journal.Owner, error) {
	timeout := r.LockTimeout
	if timeout <= 0 {
		timeout = 60 * time.Millisecond
	}
	if kind == tracker.KindQuit {
		timeout *= 5 // the machine may go down next: worth waiting a little more
	}
	st, err := store.Open(r.Layout.Store(), store.Options{LockTimeout: timeout})
	if err != nil {
		return nil, err
	}
	if st.Quarantined != "" {
		r.Log.Error().Str("moved_to", st.Quarantined).Msg("the store was damaged; it was moved aside and tracking goes on with a new one")
	}
	o := &journal.Owner{Store: st, Spool: r.spool(), Intake: r.openIntake(), Log: r.Log, Now: r.Now}
	if r.Layout.Run != "" {
		o.Inbox = &journal.InboxDir{Path: r.Layout.Inbox()}
	}
	return o, nil
}

func (r *Runner) release(o *journal.Owner) {
	if o.Intake != nil {
		o.Intake.Close()
	}
	o.Store.Close()
}

// apply applies the intake log, the spool and evs (none: a flush) in one
// transaction, then publishes what is pending.
func (r *Runner) apply(ctx context.Context, o *journal.Owner, publish bool, evs ...journal.Keyed) (journal.Result, error) {
	rules := journal.Rules{Settings: r.Settings, Tracker: r.Tracker, Publishing: r.Publisher != nil, BatoceraConf: r.BatoceraConf}
	res, err := o.Apply(rules, publish, evs...)
	if err != nil {
		return res, err
	}
	if res.FlushIn > 0 && r.ScheduleFlush != nil {
		r.ScheduleFlush(res.FlushIn)
	}
	if publish && r.Publisher != nil {
		r.deliver(ctx, o)
	}
	return res, nil
}

// openIntake opens the daemon's intake log when it holds events; nil when
// there is nothing (the usual case: the daemon empties it as it goes).
func (r *Runner) openIntake() *journal.IntakeLog {
	lg, err := journal.OpenExistingIntake(r.Layout.Intake())
	if err != nil {
		r.Log.Warn().Err(err).Msg("intake log unreadable; the daemon applies it when it starts")
		return nil
	}
	if lg != nil && len(lg.Pending()) == 0 {
		lg.Close()
		return nil
	}
	return lg
}

// deliver publishes everything pending within ctx's budget and marks what
// the broker acknowledged. Whatever is left stays for the next run.
func (r *Runner) deliver(ctx context.Context, o *journal.Owner) {
	d, err := o.Deliver(ctx, r.Publisher)
	if err == nil {
		return
	}
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
	lvl.Err(err).Int("sent", d.Sent).Int("pending", d.Pending).Msg("mqtt publish incomplete")
}

// keep saves an event the store could not take: in the spool, or else —
// when this hook owns the store (it refused the commit: a full disk, a
// failing card) — in the daemon's intake log, whose blocks were allocated
// when it was created. Only the owner of the store may write that log.
func (r *Runner) keep(k journal.Keyed, cause error, owner bool) {
	kind := string(k.Event.Kind)
	err := r.spool().Write(k)
	if err == nil {
		lvl := r.Log.Debug()
		if !journal.IsBusy(cause) {
			lvl = r.Log.Warn()
		}
		lvl.AnErr("cause", cause).Str("event", kind).Msg("event spooled")
		return
	}
	if owner {
		if lg, ierr := journal.OpenExistingIntake(r.Layout.Intake()); ierr == nil && lg != nil {
			ierr = journal.AppendIntake(lg, k)
			lg.Close()
			if ierr == nil {
				r.Log.Warn().AnErr("cause", cause).AnErr("spool", err).Str("event", kind).Msg("event kept in the intake log")
				return
			}
		}
	}
	r.Log.Error().Err(err).AnErr("cause", cause).Str("event", kind).Msg("event lost: neither the store nor the spool could take it")
}
