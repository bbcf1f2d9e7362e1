package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/hook/journal"
)

// intakeRetry is how often the events held in the intake log are tried
// again while the store refuses them (a full disk).
const intakeRetry = 2 * time.Second

// hookIntake is the fast half of the hook's path: an event is appended to
// the intake log (one fdatasync) and acked, and the engine moves it into
// the store right after (the engine's Owner applies the log before anything
// else). The ack used to wait for the store's commit — two fsyncs, the
// tracker and every message — and ES waited with it.
type hookIntake struct {
	lg    *journal.IntakeLog
	eng   *engine
	clock clock.Clock
	log   zerolog.Logger
	wake  chan struct{}
}

func newHookIntake(lg *journal.IntakeLog, eng *engine, clk clock.Clock, log zerolog.Logger) *hookIntake {
	return &hookIntake{lg: lg, eng: eng, clock: clk, log: log, wake: make(chan struct{}, 1)}
}

// accept persists an event. Once it returns nil the event survives a crash
// and the hook may be acked. When the log cannot take it (full, or an I/O
// error) the event is applied to the store directly, after what the log
// holds, so the order stays.
func (h *hookIntake) accept(k journal.Keyed) error {
	err := journal.AppendIntake(h.lg, k)
	if err == nil {
		h.kick()
		return nil
	}
	if !errors.Is(err, journal.ErrIntakeFull) {
		h.log.Warn().Err(err).Msg("intake log unusable; the event goes to the store directly")
	}
	_, err = h.eng.apply(k)
	return err
}

// kick asks the loop to apply what the log holds.
func (h *hookIntake) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// run applies what the log holds whenever an event arrives, and retries
// while the store refuses.
func (h *hookIntake) run(ctx context.Context) error {
	retry, retryC := h.clock.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.wake:
		case <-retryC:
		}
		if len(h.lg.Pending()) == 0 {
			continue
		}
		if _, err := h.eng.apply(); err != nil {
			retry.Reset(intakeRetry) // kept in the log: retried, and applied at the next start
		}
	}
}
