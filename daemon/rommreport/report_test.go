package rommreport

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/outbox"
)

// poster records what it got; failNext fails that many calls; seen plays
// RomM's duplicate rule (same ROM and start).
type poster struct {
	batches  [][]Session
	failNext int
	seen     map[string]bool
}

func (p *poster) Post(_ context.Context, s []Session) ([]Result, error) {
	if p.failNext > 0 {
		p.failNext--
		return nil, errors.New("RomM answered 502")
	}
	if len(s) > MaxBatch {
		return nil, fmt.Errorf("%d sessions in one request", len(s))
	}
	p.batches = append(p.batches, s)
	out := make([]Result, len(s))
	for i, x := range s {
		k := fmt.Sprint(x.ROMID, x.Start.UTC())
		if p.seen[k] {
			out[i] = Result{Status: "duplicate"}
			continue
		}
		p.seen[k] = true
		out[i] = Result{Status: "created"}
	}
	return out, nil
}

// resolver knows every game but those named "unknown…".
type resolver struct{}

func (resolver) ROMID(_ context.Context, s haentities.Session) (int, bool, error) {
	if strings.HasPrefix(s.Game, "unknown") {
		return 0, false, nil
	}
	return len(s.Game), true, nil
}

func TestDrainInOrderInBatchesWithRetries(t *testing.T) {
	store, err := outbox.Open(filepath.Join(t.TempDir(), "cabinet.db"), outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t0 := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	const n = 250
	if err := store.Update(func(tx *outbox.Tx) error {
		for i := range n {
			game := fmt.Sprintf("game %03d", i)
			if i == 7 {
				game = "unknown homebrew"
			}
			at := t0.Add(time.Duration(i) * time.Minute)
			if err := tx.AppendSession(haentities.Session{ID: fmt.Sprintf("%s-%03d", at.Format("20060102T150405"), i), Game: game,
				Started: at, Ended: at.Add(30 * time.Second), Duration: 30 * time.Second}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(24 * time.Hour)
	p := &poster{failNext: 0, seen: map[string]bool{}}
	r := &Reporter{Store: store, Post: p, Resolve: resolver{}, Since: t0, Now: func() time.Time { return now }}

	// RomM fails the second batch: the first is delivered, the rest waits.
	p.failNext = 0
	first, err := r.Drain(context.Background())
	if err != nil || first.Delivered != n-1 || first.Unmatched != 1 {
		t.Fatalf("first drain: %+v, %v; want %d delivered and the unknown game unmatched", first, err, n-1)
	}
	if len(p.batches) != 3 || len(p.batches[0]) != MaxBatch-1 || len(p.batches[2]) != n-2*MaxBatch {
		t.Errorf("batches of %d, %d, %d", len(p.batches[0]), len(p.batches[1]), len(p.batches[2]))
	}
	for i := 1; i < len(p.batches[0]); i++ {
		if !p.batches[0][i].Start.After(p.batches[0][i-1].Start) {
			t.Fatal("sessions went out of order")
		}
	}
	if again, err := r.Drain(context.Background()); err != nil || again != (Pass{}) {
		t.Errorf("a second drain sent %+v, %v; want nothing", again, err)
	}

	// New sessions while RomM is away: retried later with backoff, sent once.
	if err := store.Update(func(tx *outbox.Tx) error {
		at := t0.Add(20 * time.Hour)
		return tx.AppendSession(haentities.Session{ID: "late", Game: "late game", Started: at, Ended: at.Add(time.Minute), Duration: time.Minute})
	}); err != nil {
		t.Fatal(err)
	}
	p.failNext = 2
	if _, err := r.Drain(context.Background()); err == nil {
		t.Fatal("a failed post reported no error")
	}
	if pass, _ := r.Drain(context.Background()); pass != (Pass{}) {
		t.Errorf("drained %+v before the backoff passed", pass)
	}
	now = now.Add(MinBackoff)
	if _, err := r.Drain(context.Background()); err == nil {
		t.Fatal("the second failure reported no error")
	}
	now = now.Add(MinBackoff) // the backoff doubled: not yet
	if pass, _ := r.Drain(context.Background()); pass != (Pass{}) {
		t.Errorf("drained %+v before the doubled backoff passed", pass)
	}
	now = now.Add(MinBackoff)
	if pass, err := r.Drain(context.Background()); err != nil || pass.Delivered != 1 {
		t.Errorf("after RomM came back: %+v, %v", pass, err)
	}
	c, _ := store.RommStats(t0)
	if c != (outbox.RommCounts{Delivered: n, Unmatched: 1}) {
		t.Errorf("stats %+v", c)
	}
}

// TestDrainAfterCrashSendsDuplicates: a pass killed after RomM took the
// batch but before the marks were written sends it again; RomM answers
// duplicate, which is delivered too.
func TestDrainAfterCrashSendsDuplicates(t *testing.T) {
	store, err := outbox.Open(filepath.Join(t.TempDir(), "cabinet.db"), outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t0 := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	store.Update(func(tx *outbox.Tx) error {
		return tx.AppendSession(haentities.Session{ID: "a", Game: "game", Started: t0, Ended: t0.Add(time.Hour), Duration: time.Hour})
	})
	p := &poster{seen: map[string]bool{}}
	p.Post(context.Background(), []Session{{ROMID: len("game"), Start: t0, End: t0.Add(time.Hour)}}) // the lost pass
	r := &Reporter{Store: store, Post: p, Resolve: resolver{}, Since: t0, Now: func() time.Time { return t0.Add(2 * time.Hour) }}
	if pass, err := r.Drain(context.Background()); err != nil || pass.Delivered != 1 {
		t.Fatalf("%+v, %v", pass, err)
	}
	if c, _ := store.RommStats(t0); c.Delivered != 1 || c.Pending != 0 {
		t.Errorf("stats %+v", c)
	}
}
