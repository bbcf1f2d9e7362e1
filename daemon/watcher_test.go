package daemon

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// scriptedES answers /runningGame from a script, one answer per poll.
type scriptedES struct {
	answers []any // *es.Game, nil (idle) or error
	i       int
}

func (s *scriptedES) RunningGame(ctx context.Context) (*es.Game, error) {
	a := s.answers[min(s.i, len(s.answers)-1)]
	s.i++
	switch v := a.(type) {
	case error:
		return nil, v
	case *es.Game:
		return v, nil
	}
	return nil, nil
}

func TestWatcherTransitions(t *testing.T) {
	mario := &es.Game{Path: "/userdata/roms/nes/m.nes", Name: "Mario", System: "nes"}
	zelda := &es.Game{Path: "/userdata/roms/nes/z.nes", Name: "Zelda", System: "nes"}
	down := errors.New("connection refused")
	src := &scriptedES{answers: []any{nil, nil, mario, mario, zelda, down, down, down, zelda, nil}}
	var got []string
	var logs bytes.Buffer
	var cached []string
	w := newWatcher(src, time.Second, clock.NewFake(time.Time{}), func() tracker.Stamp { return tracker.Stamp{At: time.Now()} },
		func(ev tracker.Event) {
			if ev.Source != tracker.SourceWatcher {
				t.Errorf("source = %s", ev.Source)
			}
			got = append(got, string(ev.Kind)+" "+ev.Name)
		},
		func(g es.Game) { cached = append(cached, g.Name) }, zerolog.New(&logs))
	for range src.answers {
		w.poll(context.Background())
	}
	want := []string{
		"game-start Mario",
		"game-end ", "game-start Zelda",
		// ES went away and came back with Zelda still running: nothing new.
		"game-end ",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if n := strings.Count(logs.String(), "not answering"); n != 1 {
		t.Errorf("ES down logged %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "answering again"); n != 1 {
		t.Errorf("ES back logged %d times", n)
	}
	if len(cached) != 4 {
		t.Errorf("names cached %d times, want 4 (every poll that saw a game)", len(cached))
	}
}

func TestWatcherFirstPollRunning(t *testing.T) {
	// The daemon starts while a game runs: the watcher reports it (the
	// tracker merges it with what the hooks said).
	src := &scriptedES{answers: []any{&es.Game{Path: "/p", Name: "P", System: "snes"}}}
	var got []tracker.Event
	w := newWatcher(src, time.Second, clock.NewFake(time.Time{}), func() tracker.Stamp { return tracker.Stamp{At: time.Now()} },
		func(ev tracker.Event) { got = append(got, ev) }, nil, zerolog.Nop())
	w.poll(context.Background())
	if len(got) != 1 || got[0].Kind != tracker.KindGameStart || got[0].System != "snes" {
		t.Errorf("events = %+v", got)
	}
}

// A part that panics or fails is restarted after a backoff that doubles:
// 1 s, then 2 s. The fake clock shows the backoff without waiting for it:
// each run notes the clock's time, which moves only when the test moves it.
func TestSuperviseRestartsFailedParts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	var mu sync.Mutex
	var runs []time.Duration // when each run began, since start
	done := make(chan struct{})
	go func() {
		supervise(ctx, clk, zerolog.Nop(), []part{{"flaky", func(ctx context.Context) error {
			mu.Lock()
			runs = append(runs, clk.Since(start))
			n := len(runs)
			mu.Unlock()
			if n == 1 {
				panic("boom")
			}
			if n == 2 {
				return errors.New("failed")
			}
			cancel()
			<-ctx.Done()
			return nil
		}}})
		close(done)
	}()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	for i := range 2 {
		if err := clk.BlockUntil(wctx, 1); err != nil {
			t.Fatalf("restart %d: the supervisor never waited: %v", i+1, err)
		}
		clk.AdvanceToNext()
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("supervise did not restart the part")
	}
	if len(runs) != 3 {
		t.Errorf("runs = %d, want 3 (panic, error, then fine)", len(runs))
	}
	if want := []time.Duration{0, time.Second, 3 * time.Second}; !slices.Equal(runs, want) {
		t.Errorf("runs began at %v, want %v (backoffs of 1 s, then 2 s)", runs, want)
	}
}

func TestLevelGate(t *testing.T) {
	var buf bytes.Buffer
	g := newLevelGate(&buf, "warn")
	log := zerolog.New(g).Level(zerolog.TraceLevel)
	log.Info().Msg("hidden")
	log.Warn().Msg("shown")
	g.set("debug")
	log.Debug().Msg("now shown")
	out := buf.String()
	if strings.Contains(out, "hidden") || !strings.Contains(out, "shown") || !strings.Contains(out, "now shown") {
		t.Errorf("log = %s", out)
	}
}
