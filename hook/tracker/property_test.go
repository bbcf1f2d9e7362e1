package tracker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// outcome is what must not depend on arrival order: the published states and the logged sessions.
func outcome(t testing.TB, r run) string {
	t.Helper()
	var b bytes.Buffer
	s := haentities.Settings{ID: "x"}
	for _, m := range haentities.States(s, r.snap, testBase) {
		fmt.Fprintf(&b, "%s %s\n", m.Topic, m.Payload)
	}
	logged, err := json.Marshal(r.logged)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(logged)
	return b.String()
}

// feedArrivals applies events in arrival order, each Apply at its arrival time.
// With record, configgen events go through Record as the configgen hook does; else everything is Apply.
func feedArrivals(t testing.TB, cfg Config, evs []Event, arrive []Stamp, record bool) run {
	t.Helper()
	var r run
	st := New()
	for i, ev := range evs {
		var out Output
		if record {
			st, out = applyAs(st, cfg, arrive[i], ev)
		} else {
			st, out = Apply(st, cfg, arrive[i], ev)
		}
		if len(out.Skipped) > 0 {
			t.Fatalf("skipped: %v", out.Skipped)
		}
		r.collect(out)
	}
	last := arrive[len(arrive)-1]
	st, out := Apply(st, cfg, Stamp{At: last.At.Add(time.Hour), Boot: last.Boot + time.Hour, BootID: last.BootID})
	r.collect(out)
	r.st, r.snap = st, out.Snapshot
	return r
}

// checkEmitted: no time-sensitive event twice, and every one the in-order run emitted is there once.
func checkEmitted(t *testing.T, cfg Config, ref, got []TimedEvent, what string) {
	t.Helper()
	for i, a := range got {
		for _, b := range got[i+1:] {
			if a.Type == b.Type && markKey(a.Type, a.Session, a.Achievement) == markKey(b.Type, b.Session, b.Achievement) && absDur(a.At.Sub(b.At)) <= cfg.DuplicateWindow {
				t.Fatalf("%s: %s emitted twice (%v and %v)", what, a.Type, a.At, b.At)
			}
		}
	}
	for _, want := range ref {
		n := 0
		for _, e := range got {
			if e.Type == want.Type && markKey(e.Type, e.Session, e.Achievement) == markKey(want.Type, want.Session, want.Achievement) && absDur(e.At.Sub(want.At)) <= cfg.DuplicateWindow {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s: %s at %v emitted %d times, want once\nref %q\ngot %q", what, want.Type, want.At, n, describeEvents(ref), describeEvents(got))
		}
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TestPropertySmallSetsAllOrders: every arrival order of up to 6 events within 2 s gives the same
// states and logged sessions as the in-order run.
func TestPropertySmallSetsAllOrders(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MinSession = 0 // log even the 2-second sessions chaos makes
	r := rand.New(rand.NewPCG(1, 2))
	runs := 0
	for seed := 0; seed < 60; seed++ {
		n := 3 + seed%4
		evs := chaos(r, n)
		// A game running before the burst makes ends and restarts matter.
		evs = append(evs, esGameStart(50, tetrisPath, "Tetris"))
		sorted := slices.Clone(evs)
		st := New()
		st.noteBoot(bootA)
		slices.SortFunc(sorted, st.compareEvents)
		ref := feed(t, cfg, sorted, 0)
		want := outcome(t, ref)
		head, burst := sorted[:1], sorted[1:]
		for perm := range permutations(burst) {
			order := append(slices.Clone(head), perm...)
			got := feed(t, cfg, order, 0)
			runs++
			if o := outcome(t, got); o != want {
				t.Fatalf("seed %d: arrival order %v\ngives\n%s\nwant (in order %v)\n%s", seed, kindsOf(order), o, kindsOf(sorted), want)
			}
			checkEmitted(t, cfg, ref.events, got.events, fmt.Sprintf("seed %d order %v", seed, kindsOf(order)))
		}
	}
	t.Logf("%d arrival orders checked", runs)
}

// TestPropertyStories: realistic sequences, each event arriving up to 2 s late, in several random
// arrival orders, give what the in-order run gives.
func TestPropertyStories(t *testing.T) {
	cfg := DefaultConfig()
	r := rand.New(rand.NewPCG(3, 4))
	stories, orders := 150, 6
	if testing.Short() {
		stories = 20
	}
	logged := 0
	for s := 0; s < stories; s++ {
		g := &storyGen{r: r}
		evs := g.story(10 + r.IntN(30))
		st := New()
		for _, e := range evs {
			st.noteBoot(e.BootID)
		}
		sorted := slices.Clone(evs)
		slices.SortFunc(sorted, st.compareEvents)
		ref := feed(t, cfg, sorted, 0)
		want := outcome(t, ref)
		logged += len(ref.logged)
		for o := 0; o < orders; o++ {
			arrive := make([]Stamp, len(sorted))
			idx := make([]int, len(sorted))
			for i, e := range sorted {
				d := time.Duration(r.Float64() * float64(2*time.Second))
				arrive[i] = Stamp{At: e.At.Add(d), Boot: e.Boot + d, BootID: e.BootID}
				idx[i] = i
			}
			slices.SortStableFunc(idx, func(a, b int) int { return st.compareTime(arrive[a], arrive[b]) })
			order, times := make([]Event, len(idx)), make([]Stamp, len(idx))
			for i, j := range idx {
				order[i], times[i] = sorted[j], arrive[j]
			}
			for _, record := range []bool{true, false} {
				got := feedArrivals(t, cfg, order, times, record)
				if out := outcome(t, got); out != want {
					t.Fatalf("story %d order %d (record %v) differs\n got %s\nwant %s\nevents %v", s, o, record, out, want, kindsOf(order))
				}
				checkEmitted(t, cfg, ref.events, got.events, fmt.Sprintf("story %d order %d record %v", s, o, record))
			}
		}
	}
	if logged == 0 {
		t.Fatal("the stories logged no session: the generator is broken")
	}
	t.Logf("%d stories x %d orders, %d sessions logged in order", stories, orders, logged)
}

func kindsOf(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%s/%s@%.3f", e.Kind, e.Source, e.At.Sub(testBase).Seconds()))
	}
	return out
}

// permutations yields every order of s (Heap's algorithm).
func permutations(s []Event) func(func([]Event) bool) {
	return func(yield func([]Event) bool) {
		a := slices.Clone(s)
		c := make([]int, len(a))
		if !yield(slices.Clone(a)) {
			return
		}
		for i := 0; i < len(a); {
			if c[i] < i {
				if i%2 == 0 {
					a[0], a[i] = a[i], a[0]
				} else {
					a[c[i]], a[i] = a[i], a[c[i]]
				}
				if !yield(slices.Clone(a)) {
					return
				}
				c[i]++
				i = 0
			} else {
				c[i] = 0
				i++
			}
		}
	}
}
