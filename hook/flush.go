package hook

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// flushBudget bounds one flush of the detached flusher (off ES's path: the store, then MQTT).
const flushBudget = 10 * time.Second

// SpawnFlusher starts a detached `cabinet hook --flush-after d` with environ: the session that
// just ended becomes final a few seconds later, and ES must not wait for that. The flusher is
// this binary again, in its own session, so it outlives the hook; RunFlusher is its body.
func SpawnFlusher(environ []string, d time.Duration, log zerolog.Logger) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(exe, "hook", "--flush-after", d.Round(time.Millisecond).String())
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		log.Warn().Err(err).Msg("cannot start the delayed flush; the session is logged at the next event")
		return
	}
	cmd.Process.Release()
}

// RunFlusher waits d, then flushes r, and again as long as the tracker has something pending (at
// most ten times). lockPath makes it one flusher at a time.
func RunFlusher(ctx context.Context, lockPath string, r *Runner, d time.Duration) {
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer lock.Close()
	// A flusher already there may be past its last flush and about to exit, so wait for it
	// rather than leave: flushing twice is harmless, not flushing loses the session until the
	// next event.
	start := time.Now()
	for syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Since(start) > 30*time.Second || ctx.Err() != nil {
			return
		}
		time.Sleep(50 * time.Millisecond) // another process's lock: nothing signals its release
	}
	d -= time.Since(start)
	for i := 0; i < 10 && (d > 0 || i == 0); i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(d + 100*time.Millisecond):
		}
		next := time.Duration(0)
		r.ScheduleFlush = func(x time.Duration) { next = x }
		fctx, cancel := context.WithTimeout(ctx, flushBudget)
		r.Flush(fctx)
		cancel()
		d = next
	}
}

// Drain stores and publishes what waits (the inbox's leftovers, the spool, the intake log) once
// the daemon is gone: the service's stop runs it. The daemon may still be closing the store, so
// it waits for it longer than a hook would.
func Drain(ctx context.Context, r *Runner) {
	dctx, cancel := context.WithTimeout(ctx, flushBudget)
	defer cancel()
	r.LockTimeout = 5 * time.Second
	r.Flush(dctx)
}
