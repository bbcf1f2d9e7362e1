package daemon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal/intake"
)

// hookIntake is the fast half of the hook's path: an event is appended to
// the intake log (one fdatasync) and acked, and the applier moves it into
// the store right after. The ack used to wait for the store's commit —
// two fsyncs, the tracker and every message — and ES waited with it.
type hookIntake struct {
	lg    *intake.Log
	eng   *engine
	log   zerolog.Logger
	after func(tracker.Event) // what the daemon does once an event is applied
	wake  chan struct{}
	mu    sync.Mutex // one apply at a time: Done counts what it applied
}

func newHookIntake(lg *intake.Log, eng *engine, log zerolog.Logger, after func(tracker.Event)) *hookIntake {
	return &hookIntake{lg: lg, eng: eng, log: log, after: after, wake: make(chan struct{}, 1)}
}

// accept persists a hook's event. Once it returns nil the event survives a
// crash and the hook may be acked. When the log cannot take it (full, or
// an I/O error) the event is applied to the store directly, after what the
// log holds, so the order stays.
func (h *hookIntake) accept(key string, ev tracker.Event) error {
	err := journal.AppendIntake(h.lg, key, ev)
	if err == nil {
		h.kick()
		return nil
	}
	if !errors.Is(err, intake.ErrFull) {
		h.log.Warn().Err(err).Msg("intake log unusable; the event goes to the store directly")
	}
	if err := h.apply(); err != nil {
		return err
	}
	if _, err := h.eng.apply(journal.Keyed(key, ev)); err != nil {
		return err
	}
	h.after(ev)
	return nil
}

// kick asks the loop to apply what the log holds.
func (h *hookIntake) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// run applies what the log holds whenever an event arrives, retrying while
// the store refuses.
func (h *hookIntake) run(ctx context.Context) error {
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.wake:
		case <-retry.C:
		}
		if err := h.apply(); err != nil {
			retry.Reset(2 * time.Second)
		}
	}
}

// recover applies what a previous owner of the store left in the log (a
// daemon that crashed after its ack, hooks on a full disk).
func (h *hookIntake) recover() error {
	n := len(h.lg.Pending())
	if n == 0 {
		return nil
	}
	if err := h.apply(); err != nil {
		h.log.Error().Err(err).Int("events", n).Msg("events left in the intake log not applied yet; retrying")
		h.kick()
		return err
	}
	h.log.Info().Int("events", n).Msg("applied the events left in the intake log")
	return nil
}

// apply moves every pending record into the store in one transaction,
// then marks them done.
func (h *hookIntake) apply() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	recs := h.lg.Pending()
	if len(recs) == 0 {
		return nil
	}
	items, bad := journal.FromIntake(recs)
	for _, err := range bad {
		h.log.Warn().Err(err).Msg("intake record skipped")
	}
	if len(items) > 0 {
		if _, err := h.eng.apply(items...); err != nil {
			return err // kept in the log: retried, and applied at the next start
		}
	}
	if err := h.lg.Done(len(recs)); err != nil {
		h.log.Warn().Err(err).Msg("intake log not cleared; its events are applied again (once) at the next start")
	}
	for _, it := range items {
		h.after(it.Event)
	}
	return nil
}
