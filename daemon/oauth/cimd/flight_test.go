package cimd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// blocked makes the server hold every request until release is closed.
func blocked(t *testing.T, r *rig) (release func()) {
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release) // before the server's Close, which waits for handlers
	next := r.serveDoc(nil)
	r.serve(func(w http.ResponseWriter, req *http.Request) {
		<-ch
		next(w, req)
	})
	return release
}

func (f *Fetcher) waiting(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.calls[id]; c != nil {
		return c.waiters
	}
	return 0
}

func TestOneFetchPerURL(t *testing.T) {
	r := newRig(t)
	release := blocked(t, r)
	f := r.fetcher(Options{})
	const n = 8
	type result struct {
		doc Document
		err error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			d, err := f.Get(cabinettest.Context(t), claudeID)
			results <- result{d, err}
		}()
	}
	cabinettest.Await(t, "all callers waiting on one fetch", nil, func() (bool, string) {
		w := f.waiting(claudeID)
		return w == n, fmt.Sprintf("%d waiting", w)
	})
	release()
	for range n {
		res := <-results
		if res.err != nil || res.doc.ClientID != claudeID {
			t.Errorf("Get = %+v, %v", res.doc, res.err)
		}
	}
	wantHits(t, r, 1, "concurrent Gets")
}

// TestCallerGivesUp: a caller whose context ends gets an error at once; the fetch goes on
// and its document serves the next caller.
func TestCallerGivesUp(t *testing.T) {
	r := newRig(t)
	release := blocked(t, r)
	f := r.fetcher(Options{})
	ctx, cancel := context.WithCancel(cabinettest.Context(t))
	done := make(chan error, 1)
	go func() {
		_, err := f.Get(ctx, claudeID)
		done <- err
	}()
	cabinettest.Await(t, "the caller waiting", nil, func() bool { return f.waiting(claudeID) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "gave up waiting") {
		t.Fatalf("Get with a canceled context: %v", err)
	}
	release()
	cabinettest.Await(t, "the fetch to finish", nil, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.calls) == 0
	})
	get(t, f, claudeID)
	wantHits(t, r, 1, "Get after the abandoned fetch")
}

func TestFetchesInFlightBounded(t *testing.T) {
	r := newRig(t)
	release := blocked(t, r)
	f := r.fetcher(Options{})
	done := make(chan error, maxInFlight)
	for i := range maxInFlight {
		go func() {
			_, err := f.Get(cabinettest.Context(t), fmt.Sprintf("https://claude.ai/doc/%d", i))
			done <- err
		}()
	}
	cabinettest.Await(t, "the fetches under way", nil, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.calls) == maxInFlight
	})
	_, err := f.Get(cabinettest.Context(t), "https://claude.ai/doc/one-more")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "try again in a few seconds") {
		t.Errorf("Get past the bound: %v; want ErrUnavailable", err)
	}
	release()
	for range maxInFlight {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
