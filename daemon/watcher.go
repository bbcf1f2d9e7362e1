package daemon

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// runningGamer is what the watcher asks ES.
type runningGamer interface {
	RunningGame(ctx context.Context) (*es.Game, error)
}

// watcher polls ES's /runningGame at a low rate, and quickly after every
// hook event, and reports game starts and ends as a third source (besides
// the ES hook and the configgen script): a game whose hooks never ran (a
// ROM name sh cannot parse) is still tracked, and the tracker merges the
// sources so nothing is counted twice. ES being down or restarting is
// normal: it is logged once when it goes and once when it is back.
type watcher struct {
	es       runningGamer
	interval time.Duration
	clock    clock.Clock
	now      func() tracker.Stamp
	emit     func(tracker.Event)
	seen     func(g es.Game) // caches ES's names for the hooks
	log      zerolog.Logger
	poke     chan struct{}

	known   bool   // a poll has answered since the daemon started
	running string // path of the running game, "" when idle
	down    bool
}

func newWatcher(c runningGamer, interval time.Duration, clk clock.Clock, now func() tracker.Stamp, emit func(tracker.Event), seen func(es.Game), log zerolog.Logger) *watcher {
	return &watcher{es: c, interval: interval, clock: clk, now: now, emit: emit, seen: seen, log: log, poke: make(chan struct{}, 1)}
}

// nudge asks for quick polls: a hook just reported a game start or end,
// and /runningGame changes a moment later.
func (w *watcher) nudge() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

func (w *watcher) run(ctx context.Context) error {
	var quick []time.Duration // pending quick polls after a nudge
	t, tc := w.clock.NewTimer(w.interval)
	defer t.Stop()
	for {
		w.poll(ctx)
		wait := w.interval
		if len(quick) > 0 {
			wait, quick = quick[0], quick[1:]
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-w.poke:
			quick = []time.Duration{300 * time.Millisecond, time.Second, 2 * time.Second}
		case <-tc:
		}
	}
}

func (w *watcher) poll(ctx context.Context) {
	// What ES answers is so as of the question: stamped before it is asked, a game seen running
	// is never dated after a hook's end that came while the answer was on its way (the tracker
	// then puts the two in their real order).
	st := w.now()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	g, err := w.es.RunningGame(pctx)
	cancel()
	if err != nil {
		if !w.down {
			w.log.Info().Err(err).Msg("EmulationStation is not answering; watching for it to come back")
		}
		// What ran before stays known: if ES comes back with the same game,
		// nothing happened; if it comes back idle, the game ended.
		w.down = true
		return
	}
	if w.down {
		w.log.Info().Msg("EmulationStation is answering again")
		w.down = false
	}
	path := ""
	if g != nil {
		path = g.Path
		if w.seen != nil {
			w.seen(*g)
		}
	}
	first := !w.known
	prev := w.running
	w.known, w.running = true, path
	if path == prev && !first {
		return
	}
	base := st.Event("", tracker.SourceWatcher)
	if prev != "" && !first {
		end := base
		end.Kind = tracker.KindGameEnd
		w.emit(end)
	}
	if g != nil {
		start := base
		start.Kind = tracker.KindGameStart
		start.Path, start.Name, start.System = g.Path, g.Name, g.System
		w.emit(start.Normalize())
	}
}
