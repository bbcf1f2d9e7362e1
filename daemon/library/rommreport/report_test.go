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
	"github.com/batocera-cabinet/cabinet/hook/store"
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
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	const n = 250
	if err := st.Update(func(tx *store.Tx) error {
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
	r := &Reporter{Store: Marks{st}, Post: p, Resolve: resolver{}, Since: t0, Now: func() time.Time { return now }}

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
	if err := st.Update(func(tx *store.Tx) error {
		at := t0.Add(20 * time.Hour)
		return tx.AppendSession(haentities.Session{ID: "late", Game: "late game", Started: at, Ended: at.Add(time.Minute), Duration: time.Minute})
	}); err != nil {
		t.Fatal(err)
	}
	p.failNext = 2
	if _, err := r.Drain(context.Background()); err == nil {
		t.Fatal("a failed post reported no error")
	}
	if r.Due() {
		t.Error("due again at once after a failed pass")
	}
	now = now.Add(MinServerBackoff)
	if !r.Due() {
		t.Fatal("not due after the backoff")
	}
	if _, err := r.Drain(context.Background()); err == nil {
		t.Fatal("the second failure reported no error")
	}
	now = now.Add(MinServerBackoff) // the backoff doubled: not yet
	if r.Due() {
		t.Error("due before the doubled backoff passed")
	}
	now = now.Add(MinServerBackoff)
	if pass, err := r.Drain(context.Background()); err != nil || pass.Delivered != 1 || !r.Due() {
		t.Errorf("after RomM came back: %+v, %v (due %v)", pass, err, r.Due())
	}
	c, _ := Marks{st}.Stats(t0)
	if c != (Counts{Delivered: n, Unmatched: 1}) {
		t.Errorf("stats %+v", c)
	}
}

// TestDrainAfterCrashSendsDuplicates: a pass killed after RomM took the
// batch but before the marks were written sends it again; RomM answers
// duplicate, which is delivered too.
func TestDrainAfterCrashSendsDuplicates(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	st.Update(func(tx *store.Tx) error {
		return tx.AppendSession(haentities.Session{ID: "a", Game: "game", Started: t0, Ended: t0.Add(time.Hour), Duration: time.Hour})
	})
	p := &poster{seen: map[string]bool{}}
	p.Post(context.Background(), []Session{{ROMID: len("game"), Start: t0, End: t0.Add(time.Hour)}}) // the lost pass
	r := &Reporter{Store: Marks{st}, Post: p, Resolve: resolver{}, Since: t0, Now: func() time.Time { return t0.Add(2 * time.Hour) }}
	if pass, err := r.Drain(context.Background()); err != nil || pass.Delivered != 1 {
		t.Fatalf("%+v, %v", pass, err)
	}
	if c, _ := (Marks{st}).Stats(t0); c.Delivered != 1 || c.Pending != 0 {
		t.Errorf("stats %+v", c)
	}
}

// flaky fails every call while down.
type flaky struct {
	poster
	down bool
}

func (f *flaky) Post(ctx context.Context, s []Session) ([]Result, error) {
	if f.down {
		return nil, errors.New("connect: connection refused")
	}
	return f.poster.Post(ctx, s)
}

// lookupDown fails the lookups of the games in down.
type lookupDown struct{ down map[string]bool }

func (l lookupDown) ROMID(ctx context.Context, s haentities.Session) (int, bool, error) {
	if l.down[s.Game] {
		return 0, false, errors.New("RomM answered 502")
	}
	return resolver{}.ROMID(ctx, s)
}

// TestRomMDownThenBack: 100 sessions logged one by one while RomM is away
// (a pass after each, as the daemon does when a session is logged) reach
// RomM once each, in the order they were played, in batches, once it is
// back — and a lookup that fails holds the queue (order kept) only for a
// few passes.
func TestRomMDownThenBack(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	now := t0
	f := &flaky{poster: poster{seen: map[string]bool{}}, down: true}
	look := lookupDown{down: map[string]bool{}}
	r := &Reporter{Store: Marks{st}, Post: f, Resolve: look, Since: t0, Now: func() time.Time { return now }}
	const n = 100
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Minute)
		if err := st.Update(func(tx *store.Tx) error {
			return tx.AppendSession(haentities.Session{ID: fmt.Sprintf("%s-%03d", at.Format("20060102T150405"), i), Game: fmt.Sprintf("game %03d", i),
				Started: at, Ended: at.Add(30 * time.Second), Duration: 30 * time.Second})
		}); err != nil {
			t.Fatal(err)
		}
		now = at.Add(31 * time.Second)
		if r.Due() {
			if _, err := r.Drain(context.Background()); err == nil {
				t.Fatal("RomM is down, yet the pass reported no error")
			}
		}
	}
	if c, _ := (Marks{st}).Stats(t0); c.Pending != n || c.Delivered != 0 {
		t.Fatalf("while RomM is down: %+v, want all %d pending", c, n)
	}
	f.down = false
	now = now.Add(MaxServerBackoff)
	if pass, err := r.Drain(context.Background()); err != nil || pass.Delivered != n {
		t.Fatalf("RomM back: %+v, %v", pass, err)
	}
	var sent []Session
	for _, b := range f.batches {
		sent = append(sent, b...)
	}
	if len(f.batches) != 1 || len(sent) != n {
		t.Fatalf("%d batches, %d sessions; want one batch of %d", len(f.batches), len(sent), n)
	}
	for i := 1; i < len(sent); i++ {
		if !sent[i].Start.After(sent[i-1].Start) {
			t.Fatalf("session %d went out before the one played earlier", i)
		}
	}

	// A lookup RomM fails: that session and the ones after it wait (the
	// ones before go), in order, for maxBlocking passes; then it waits
	// alone and the rest goes.
	for i, g := range []string{"x1 before", "x2 stuck", "x3 after"} {
		at := now.Add(time.Duration(i) * time.Minute)
		st.Update(func(tx *store.Tx) error {
			return tx.AppendSession(haentities.Session{ID: "z" + g, Game: g, Started: at, Ended: at.Add(time.Minute), Duration: time.Minute})
		})
	}
	look.down["x2 stuck"] = true
	now = now.Add(time.Hour)
	f.batches = nil
	for pass := 1; pass < maxBlocking; pass++ {
		if _, err := r.Drain(context.Background()); err == nil {
			t.Fatal("a failed lookup reported no error")
		}
		now = now.Add(MaxServerBackoff)
	}
	if len(f.batches) != 1 || len(f.batches[0]) != 1 || f.batches[0][0].ROMID != len("x1 before") {
		t.Fatalf("while the lookup fails: batches %v, want only the session before it", f.batches)
	}
	if pass, err := r.Drain(context.Background()); err != nil || pass.Delivered != 1 || pass.Retrying != 1 {
		t.Fatalf("after %d failed lookups: %+v, %v; want the session after it delivered, the stuck one retrying", maxBlocking, pass, err)
	}
	look.down["x2 stuck"] = false
	now = now.Add(MaxBackoff)
	if pass, err := r.Drain(context.Background()); err != nil || pass.Delivered != 1 {
		t.Fatalf("the stuck session, once its lookup works: %+v, %v", pass, err)
	}
	if c, _ := (Marks{st}).Stats(t0); c != (Counts{Delivered: n + 3}) {
		t.Errorf("stats %+v", c)
	}
}
