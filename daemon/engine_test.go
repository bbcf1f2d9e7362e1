package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// engineOn is an engine on a fresh store, its time on a fake clock; logs
// collects its log lines.
func engineOn(t *testing.T) (*engine, *clock.Fake, *logBuffer) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clock.NewFake(rigEpoch)
	logs := newLogBuffer()
	log := zerolog.New(logs)
	stamp := func() tracker.Stamp {
		now := clk.Now()
		return tracker.Stamp{At: now, Boot: time.Hour + now.Sub(rigEpoch), BootID: "engine-boot"}
	}
	owner := &journal.Owner{Store: st, Spool: journal.Spool{Dir: filepath.Join(t.TempDir(), "spool")}, Log: log, Now: stamp}
	tc := tracker.DefaultConfig()
	tc.MinSession = time.Second
	rules := journal.Rules{Settings: haentities.Settings{ID: "engine", Daemon: true}, Tracker: tc}
	e := newEngine(owner, rules, clk, log, func(journal.Keyed) {})
	t.Cleanup(e.stop)
	return e, clk, logs
}

func (e *engine) event(kind tracker.Kind) journal.Keyed {
	ev := e.owner.Now().Event(kind, tracker.SourceES)
	if kind == tracker.KindGameStart {
		ev.Path, ev.Name, ev.System = "/userdata/roms/nes/a.nes", "A", "nes"
	}
	return journal.NewKeyed(ev)
}

// A session that ended is logged once it is final, a few seconds later,
// with no other event: the engine's own timer makes it so. On the fake
// clock the test moves time instead of waiting for it.
func TestEngineFlushLogsTheEndedSession(t *testing.T) {
	e, clk, _ := engineOn(t)
	if _, err := e.apply(e.event(tracker.KindGameStart)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(90 * time.Second)
	res, err := e.apply(e.event(tracker.KindGameEnd))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logged) != 0 || res.FlushIn <= 0 {
		t.Fatalf("game end: logged %d, flush in %v; want the session pending", len(res.Logged), res.FlushIn)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("no flush armed: %v", err)
	}
	applied := e.appliedCh()
	clk.Advance(res.FlushIn + 50*time.Millisecond) // the timer applies on this goroutine
	select {
	case <-applied:
	default:
		t.Fatal("the flush did not apply")
	}
	sessions, err := e.store().Sessions(store.Query{})
	if err != nil || len(sessions) != 1 || sessions[0].Duration != 90*time.Second {
		t.Fatalf("sessions = %+v, %v; want the 90 s session", sessions, err)
	}
}

// While the store refuses writes the engine tries again by itself, backing
// off from 2 s to a minute, and stops once a write goes through.
func TestEngineRetriesWithBackoff(t *testing.T) {
	e, clk, logs := engineOn(t)
	failures := func() int { return strings.Count(logs.String(), "store write failed") }
	e.store().Close() // every transaction fails from now on
	if _, err := e.apply(e.event(tracker.KindWake)); err == nil {
		t.Fatal("apply on a closed store succeeded")
	}
	for i, backoff := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		clk.Advance(backoff - time.Millisecond)
		if got := failures(); got != i+1 {
			t.Fatalf("attempt %d came before its %v backoff (%d failures)", i+2, backoff, got)
		}
		clk.Advance(time.Millisecond)
		if got := failures(); got != i+2 {
			t.Fatalf("no attempt %d after %v (%d failures)", i+2, backoff, got)
		}
	}
	e.stop()
	if n := clk.Pending(); n != 0 {
		t.Errorf("%d timers armed after stop", n)
	}
}
