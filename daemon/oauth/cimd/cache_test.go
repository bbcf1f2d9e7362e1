package cimd

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestFreshness(t *testing.T) {
	for _, c := range []struct {
		cacheControl []string
		age          string
		want         time.Duration
	}{
		{nil, "", defaultFresh},
		{[]string{"public"}, "", defaultFresh},
		{[]string{"max-age=600"}, "", 10 * time.Minute},
		{[]string{"public, max-age=7200"}, "", 2 * time.Hour},
		{[]string{`max-age="900"`}, "", 15 * time.Minute},
		{[]string{"MAX-AGE=900"}, "", 15 * time.Minute},
		{[]string{"max-age=10"}, "", minFresh},
		{[]string{"max-age=0"}, "", minFresh},
		{[]string{"max-age=999999"}, "", maxFresh},
		{[]string{"max-age=99999999999999999999"}, "", minFresh}, // unreadable: stale, so the floor
		{[]string{"max-age=abc"}, "", minFresh},
		{[]string{"max-age=-5"}, "", minFresh},
		{[]string{"no-store"}, "", minFresh},
		{[]string{"no-cache, max-age=3600"}, "", minFresh},
		{[]string{"max-age=3600", "max-age=1200"}, "", 20 * time.Minute},
		{[]string{"max-age=3600"}, "600", 50 * time.Minute},
		{[]string{"max-age=3600"}, "3500", minFresh},
		{[]string{"max-age=3600"}, "junk", time.Hour},
		{nil, "600", defaultFresh},
	} {
		h := http.Header{}
		for _, v := range c.cacheControl {
			h.Add("Cache-Control", v)
		}
		if c.age != "" {
			h.Set("Age", c.age)
		}
		if got := freshness(h); got != c.want {
			t.Errorf("freshness(Cache-Control %q, Age %q) = %v, want %v", c.cacheControl, c.age, got, c.want)
		}
	}
}

// get is Get that must succeed.
func get(t *testing.T, f *Fetcher, id string) Document {
	t.Helper()
	d, err := f.Get(cabinettest.Context(t), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return d
}

// wantHits checks how many requests the server has seen.
func wantHits(t *testing.T, r *rig, n int64, when string) {
	t.Helper()
	if got := r.hits.Load(); got != n {
		t.Errorf("%s: server saw %d requests, want %d", when, got, n)
	}
}

func TestCacheHit(t *testing.T) {
	r := newRig(t)
	f := r.fetcher(Options{})
	get(t, f, claudeID)
	get(t, f, claudeID)
	wantHits(t, r, 1, "second Get")
	get(t, f, "https://claude.ai/oauth/claude-code-client-metadata")
	wantHits(t, r, 2, "another client_id")

	d := get(t, f, claudeID)
	d.RedirectURIs[0] = "https://evil.example.net/cb"
	if got := get(t, f, claudeID); got.RedirectURIs[0] != "https://claude.ai/api/mcp/auth_callback" {
		t.Errorf("a caller's change reached the cache: %v", got.RedirectURIs)
	}
}

func TestMaxAge(t *testing.T) {
	r := newRig(t)
	r.serve(r.serveDoc(nil, "Cache-Control", "public, max-age=600"))
	f := r.fetcher(Options{})
	get(t, f, claudeID)
	r.clock.Advance(599 * time.Second)
	get(t, f, claudeID)
	wantHits(t, r, 1, "within max-age")
	r.clock.Advance(2 * time.Second)
	get(t, f, claudeID)
	wantHits(t, r, 2, "past max-age")
}

func TestFreshnessBounds(t *testing.T) {
	for _, c := range []struct {
		cacheControl string
		fresh        time.Duration
	}{
		{"no-store", minFresh},
		{"max-age=1", minFresh},
		{"max-age=31536000", maxFresh},
	} {
		t.Run(c.cacheControl, func(t *testing.T) {
			r := newRig(t)
			r.serve(r.serveDoc(nil, "Cache-Control", c.cacheControl))
			f := r.fetcher(Options{})
			get(t, f, claudeID)
			r.clock.Advance(c.fresh - time.Second)
			get(t, f, claudeID)
			wantHits(t, r, 1, "just before the bound")
			r.clock.Advance(2 * time.Second)
			get(t, f, claudeID)
			wantHits(t, r, 2, "just after the bound")
		})
	}
}

func TestStaleServedOnFailure(t *testing.T) {
	for _, c := range []struct {
		name    string
		failure func(r *rig) http.HandlerFunc
	}{
		{"503", func(*rig) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }
		}},
		{"403 from a bot wall", func(*rig) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }
		}},
		{"connection dropped", func(*rig) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) { panic(http.ErrAbortHandler) }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			r.serve(r.serveDoc(nil, "Cache-Control", "max-age=300"))
			f := r.fetcher(Options{})
			want := get(t, f, claudeID)

			r.serve(c.failure(r))
			r.clock.Advance(301 * time.Second)
			if got := get(t, f, claudeID); !equalDocs(got, want) {
				t.Errorf("stale Get = %+v, want the last good copy %+v", got, want)
			}
			wantHits(t, r, 2, "refetch after expiry")

			r.clock.Advance(retryAfter - time.Second)
			get(t, f, claudeID)
			wantHits(t, r, 2, "within the retry wait")

			r.clock.Advance(2 * time.Second)
			get(t, f, claudeID)
			wantHits(t, r, 3, "after the retry wait")

			r.serve(r.serveDoc(func(m map[string]any) { m["client_name"] = "Claude 2" }))
			r.clock.Advance(retryAfter + time.Second)
			if got := get(t, f, claudeID); got.ClientName != "Claude 2" {
				t.Errorf("after recovery Get = %+v, want the new document", got)
			}
		})
	}
}

func TestStaleExpiresAfterAWeek(t *testing.T) {
	r := newRig(t)
	f := r.fetcher(Options{})
	get(t, f, claudeID)
	r.serve(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })

	r.clock.Advance(maxStale - time.Second)
	get(t, f, claudeID) // still served, six days and change after it expired

	r.clock.Advance(retryAfter + time.Second) // past the week, and past the retry wait
	_, err := f.Get(cabinettest.Context(t), claudeID)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "HTTP 502") {
		t.Fatalf("Get a week on: %v; want ErrUnavailable for the 502", err)
	}
}

// TestNoStaleForTheDocumentsWord: a document that is now gone, redirected or invalid is not
// replaced by the old copy, and the old copy is forgotten.
func TestNoStaleForTheDocumentsWord(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler func(r *rig) http.HandlerFunc
		says    string
	}{
		{"404", func(*rig) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }
		}, "HTTP 404"},
		{"410", func(*rig) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) }
		}, "HTTP 410"},
		{"redirect", func(*rig) http.HandlerFunc {
			return func(w http.ResponseWriter, req *http.Request) {
				http.Redirect(w, req, "/moved", http.StatusMovedPermanently)
			}
		}, "HTTP 301"},
		{"invalid", func(r *rig) http.HandlerFunc {
			return r.serveDoc(func(m map[string]any) { m["redirect_uris"] = []string{"http://evil.example.net/cb"} })
		}, "loopback"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			f := r.fetcher(Options{})
			get(t, f, claudeID)
			r.serve(c.handler(r))
			r.clock.Advance(defaultFresh + time.Second)
			if _, err := f.Get(cabinettest.Context(t), claudeID); !errors.Is(err, ErrDocument) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Get: %v; want ErrDocument saying %q", err, c.says)
			}
			// Within the retry wait the same refusal comes back without asking the host.
			if _, err := f.Get(cabinettest.Context(t), claudeID); !errors.Is(err, ErrDocument) || !strings.Contains(err.Error(), "not asked again") {
				t.Fatalf("second Get: %v; want the refusal again, not asked again", err)
			}
			wantHits(t, r, 2, "within the retry wait")
			// The old copy is gone: a host that then fails has nothing to fall back on.
			r.serve(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
			r.clock.Advance(retryAfter + time.Second)
			if _, err := f.Get(cabinettest.Context(t), claudeID); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Get after the refusal: %v; want ErrUnavailable, no stale copy", err)
			}
		})
	}
}

func TestRetryWaitWithoutACopy(t *testing.T) {
	r := newRig(t)
	r.serve(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	f := r.fetcher(Options{})
	for i := range 3 {
		_, err := f.Get(cabinettest.Context(t), claudeID)
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Get %d: %v; want ErrUnavailable", i, err)
		}
		checkMessage(t, err)
	}
	wantHits(t, r, 1, "three Gets within the retry wait")
	r.clock.Advance(retryAfter)
	f.Get(cabinettest.Context(t), claudeID)
	wantHits(t, r, 2, "after the retry wait")

	// An address refusal waits too: it costs a lookup each time.
	r.resolve("claude.ai", "10.0.0.1")
	r.clock.Advance(retryAfter)
	before := r.lookups.Load()
	for range 3 {
		if _, err := f.Get(cabinettest.Context(t), claudeID); !errors.Is(err, ErrAddress) {
			t.Fatalf("Get: %v; want ErrAddress", err)
		}
	}
	if n := r.lookups.Load() - before; n != 1 {
		t.Errorf("%d lookups for three Gets within the retry wait, want 1", n)
	}
}

func TestCacheBounded(t *testing.T) {
	r := newRig(t)
	f := r.fetcher(Options{})
	id := func(i int) string { return fmt.Sprintf("https://claude.ai/doc/%d", i) }
	for i := range maxEntries + 1 {
		get(t, f, id(i))
		r.clock.Advance(time.Second) // so that "least recently used" has one answer
	}
	f.mu.Lock()
	n := len(f.entries)
	f.mu.Unlock()
	if n != maxEntries {
		t.Errorf("%d entries cached, want %d", n, maxEntries)
	}
	hits := r.hits.Load()
	get(t, f, id(maxEntries)) // the newest: cached
	wantHits(t, r, hits, "the newest entry")
	get(t, f, id(0)) // the oldest: evicted, fetched again
	wantHits(t, r, hits+1, "the evicted entry")
}
