package requests

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

const romarrKey = "follower-test-key-0123456789"

// fakeROMarr answers ROMarr 0.8's queue, history and wanted routes from what a test put there,
// in ROMarr's own envelopes ({"items": […]}, Python's isoformat times), on loopback.
type fakeROMarr struct {
	mu      sync.Mutex
	queue   []map[string]any // oldest first, as ROMarr appends
	history []map[string]any // oldest first; served newest first
	wanted  []map[string]any
	fail    int // answer 500 while > 0
	calls   atomic.Int64
}

func (f *fakeROMarr) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("X-Api-Key") != romarrKey {
		w.WriteHeader(401)
		w.Write([]byte(`{"error": "unauthorised"}`))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		w.WriteHeader(500)
		w.Write([]byte(`{"error": "KeyError: 'game'"}`))
		return
	}
	var items []map[string]any
	switch r.URL.Path {
	case "/api/v1/queue":
		items = f.queue
	case "/api/v1/wanted/missing":
		items = f.wanted
	case "/api/v1/history":
		if r.URL.Query().Get("limit") == "" {
			w.WriteHeader(500)
			return
		}
		for i := len(f.history) - 1; i >= 0; i-- {
			items = append(items, f.history[i])
		}
	default:
		w.WriteHeader(404)
		w.Write([]byte(`{"error": "not found"}`))
		return
	}
	if items == nil {
		items = []map[string]any{}
	}
	json.NewEncoder(w).Encode(map[string]any{"items": items})
}

func pyTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05+00:00") }

func (f *fakeROMarr) addQueue(game, platform, release, state, detail string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, map[string]any{"game": game, "platform": platform, "release": release, "seeders": 3,
		"state": state, "detail": detail, "at": pyTime(at)})
}

// setQueueState changes the newest row of game, as ROMarr's import sweep does.
func (f *fakeROMarr) setQueueState(game, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.queue) - 1; i >= 0; i-- {
		if f.queue[i]["game"] == game {
			f.queue[i]["state"] = state
			return
		}
	}
}

func (f *fakeROMarr) addEvent(kind, game, platform, release, detail string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.history = append(f.history, map[string]any{"kind": kind, "game": game, "platform": platform, "release": release,
		"detail": detail, "seeders": 0, "size": 0, "indexer": "", "library": "", "at": pyTime(at)})
}

func (f *fakeROMarr) want(game, platform string, attempts int, lastErr string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.wanted {
		if w["game"] == game {
			w["attempts"], w["last_error"] = attempts, lastErr
			return
		}
	}
	f.wanted = append(f.wanted, map[string]any{"game": game, "platform": platform, "added": pyTime(at), "attempts": attempts,
		"last_error": lastErr, "searched_at": ""})
}

func (f *fakeROMarr) fulfil(game string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []map[string]any
	for _, w := range f.wanted {
		if w["game"] != game {
			keep = append(keep, w)
		}
	}
	f.wanted = keep
}

// restart empties the queue, as a ROMarr restart does (it keeps history and wanted).
func (f *fakeROMarr) restart() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = nil
}

func (f *fakeROMarr) setFail(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = n
}

// gate holds the fake RomM's search back until a game has "arrived": before that, every
// search term is replaced by one that matches nothing, so RomM answers its own empty page.
type gate struct {
	h      http.Handler
	open   atomic.Bool
	down   atomic.Bool
	search atomic.Int64
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.down.Load() {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(502)
		w.Write([]byte("Bad Gateway"))
		return
	}
	if r.URL.Path == "/api/roms" {
		g.search.Add(1)
		if !g.open.Load() {
			q := r.URL.Query()
			q.Set("search_term", "zz-not-arrived-yet")
			r.URL.RawQuery = q.Encode()
		}
	}
	g.h.ServeHTTP(w, r)
}

// fakeInstaller records installs and answers what the test set.
type fakeInstaller struct {
	mu    sync.Mutex
	calls []install.Request
	errs  []error // answered in turn; then success
	res   install.Result
}

func (f *fakeInstaller) Install(_ context.Context, r install.Request, _ func(install.Progress)) (install.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r)
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return install.Result{}, err
	}
	return f.res, nil
}

type fakeScreen struct {
	mu    sync.Mutex
	lines []string
}

func (s *fakeScreen) Show(_ context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, text)
	return nil
}

func (s *fakeScreen) said() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

var epoch = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

// rig is a follower over a fake ROMarr and the fake RomM on loopback, a real store and a fake
// clock.
type rig struct {
	t      *testing.T
	clock  *clock.Fake
	store  Kept
	romarr *fakeROMarr
	romm   *gate
	inst   *fakeInstaller
	screen *fakeScreen
	f      *Follower
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, clock: clock.NewFake(epoch), romarr: &fakeROMarr{}, inst: &fakeInstaller{}, screen: &fakeScreen{}}
	db, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r.store = Kept{DB: db}
	ra := httptest.NewServer(r.romarr)
	t.Cleanup(ra.Close)
	rc, err := romarr.New(romarr.Config{URL: ra.URL, APIKey: romarrKey, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := fakeromm.New(fakeromm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.romm = &gate{h: fr}
	rm := httptest.NewServer(r.romm)
	t.Cleanup(rm.Close)
	mc, err := romm.New(romm.Config{URL: rm.URL, Token: fakeromm.DefaultToken, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.inst.res = install.Result{Outcome: "done", System: "snes", Path: "/userdata/roms/snes/Cosmic Crusade (USA).sfc", Listed: true}
	r.f = &Follower{Store: r.store, ROMarr: rc, RomM: mc, Installer: r.inst, Screen: r.screen, Now: r.clock.Now}
	return r
}

// ask records a request as library_request does once ROMarr answered.
func (r *rig) ask(game, platform, system string, installIt bool, state string) Request {
	r.t.Helper()
	now := r.clock.Now()
	req := Request{ID: NewID(now), Game: game, Platform: platform, System: system, Install: installIt,
		State: state, CreatedAt: now, UpdatedAt: now, NextCheck: now}
	if err := r.store.PutRequest(req); err != nil {
		r.t.Fatal(err)
	}
	return req
}

// follow runs one pass, which must not fail.
func (r *rig) follow() Pass {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := r.f.Follow(ctx)
	if err != nil {
		r.t.Fatalf("Follow: %v", err)
	}
	return p
}

// get is the stored record of id.
func (r *rig) get(id string) Request {
	r.t.Helper()
	all, err := r.store.Requests()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, q := range all {
		if q.ID == id {
			return q
		}
	}
	r.t.Fatalf("no request %s", id)
	return Request{}
}

// expect checks a record's state and that its detail holds every part.
func (r *rig) expect(id, state string, parts ...string) Request {
	r.t.Helper()
	q := r.get(id)
	if q.State != state {
		r.t.Fatalf("state %s (%s), want %s", q.State, q.Detail, state)
	}
	for _, p := range parts {
		if !strings.Contains(q.Detail, p) {
			r.t.Fatalf("detail %q lacks %q", q.Detail, p)
		}
	}
	return q
}

// due moves the clock to the request's next check.
func (r *rig) due(id string) {
	r.t.Helper()
	q := r.get(id)
	if q.NextCheck.IsZero() {
		r.t.Fatalf("request %s is closed (%s): no next check", id, q.State)
	}
	r.clock.AdvanceTo(q.NextCheck)
}

var errInstall = errors.New("download ROM 3: RomM answered 502")
