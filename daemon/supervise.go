package daemon

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// part is one long-running piece of the daemon.
type part struct {
	name string
	run  func(ctx context.Context) error
}

// supervise runs every part until ctx ends. A part that fails (returns an
// error or panics) is logged and restarted after a backoff that grows to a
// minute, instead of taking the daemon down.
func supervise(ctx context.Context, clk clock.Clock, log zerolog.Logger, parts []part) {
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func(p part) {
			defer wg.Done()
			backoff := time.Second
			for ctx.Err() == nil {
				start := clk.Now()
				err := runPart(ctx, p)
				if ctx.Err() != nil {
					return
				}
				if clk.Since(start) > time.Minute {
					backoff = time.Second
				}
				log.Error().Err(err).Str("part", p.name).Dur("restart_in", backoff).Msg("part stopped; restarting")
				t, tc := clk.NewTimer(backoff)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-tc:
				}
				backoff = min(backoff*2, time.Minute)
			}
		}(p)
	}
	wg.Wait()
}

func runPart(ctx context.Context, p part) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if err := p.run(ctx); err != nil {
		return err
	}
	if ctx.Err() == nil {
		return fmt.Errorf("%s returned", p.name)
	}
	return nil
}

// levelGate filters log lines by a level that a configuration reload can
// change while the daemon runs.
type levelGate struct {
	w   io.Writer
	min atomic.Int32
}

func newLevelGate(w io.Writer, level string) *levelGate {
	g := &levelGate{w: w}
	g.set(level)
	return g
}

func (g *levelGate) set(level string) {
	l, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		l = zerolog.InfoLevel
	}
	g.min.Store(int32(l))
}

func (g *levelGate) Write(p []byte) (int, error) { return g.w.Write(p) }

// WriteLevel drops lines below the current level.
func (g *levelGate) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	if int32(l) < g.min.Load() || zerolog.Level(g.min.Load()) == zerolog.Disabled {
		return len(p), nil
	}
	return g.w.Write(p)
}
