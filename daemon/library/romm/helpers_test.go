package romm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "rmm_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// fakeRomM is a small RomM on loopback for the client's own tests: the heartbeat of a chosen
// version, RomM's per-version 401/403 rules (decorators/auth.py at 5.1.0 and 5.2.0) and the
// JSON in testdata/. Routes can be replaced per test.
type fakeRomM struct {
	t       testing.TB
	version any             // SYSTEM.VERSION as JSON: usually a string
	token   string          // the accepted token; "" accepts anyone (kiosk mode)
	scopes  map[string]bool // the token's scopes; nil means all
	routes  map[string]http.HandlerFunc

	mu       sync.Mutex
	requests []*http.Request
}

// scopeOf is the scope each protected route needs in RomM.
var scopeOf = map[string]string{
	"/api/platforms":           "platforms.read",
	"/api/roms":                "roms.read",
	"/api/collections":         "collections.read",
	"/api/collections/smart":   "collections.read",
	"/api/collections/virtual": "collections.read",
}

func scopeFor(path string) string {
	if s, ok := scopeOf[path]; ok {
		return s
	}
	switch {
	case strings.HasPrefix(path, "/api/roms/"):
		return "roms.read"
	case strings.HasPrefix(path, "/api/collections/"):
		return "collections.read"
	case strings.HasPrefix(path, "/api/platforms/"):
		return "platforms.read"
	}
	return "me.read"
}

func newFake(t testing.TB, version string) (*fakeRomM, *httptest.Server) {
	f := &fakeRomM{t: t, version: version, token: testToken, routes: map[string]http.HandlerFunc{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeRomM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Clone(context.Background()))
	route := f.routes[r.URL.Path]
	f.mu.Unlock()
	if r.URL.Path == "/api/heartbeat" {
		if route != nil {
			route(w, r)
			return
		}
		writeJSON(w, 200, map[string]any{"SYSTEM": map[string]any{"VERSION": f.version, "SHOW_SETUP_WIZARD": false}})
		return
	}
	if r.URL.Path == "/openapi.json" {
		if route != nil {
			route(w, r)
			return
		}
		writeJSON(w, 200, map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "RomM API", "version": f.version}, "paths": map[string]any{}})
		return
	}
	if !f.authorize(w, r) {
		return
	}
	if route != nil {
		route(w, r)
		return
	}
	switch {
	case r.URL.Path == "/api/platforms":
		serveFile(f.t, w, "platforms.json")
	case r.URL.Path == "/api/roms":
		serveFile(f.t, w, "roms_page.json")
	case strings.HasPrefix(r.URL.Path, "/api/roms/"):
		serveFile(f.t, w, "rom_simple.json")
	case r.URL.Path == "/api/collections":
		serveFile(f.t, w, "collections.json")
	case r.URL.Path == "/api/collections/smart":
		serveFile(f.t, w, "smart.json")
	case r.URL.Path == "/api/collections/virtual":
		serveFile(f.t, w, "virtual.json")
	default:
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
	}
}

// authorize applies RomM's rules: up to 5.1 every refusal is 403; from 5.2 an unauthenticated
// caller gets 401 and an authenticated one without the scope 403.
func (f *fakeRomM) authorize(w http.ResponseWriter, r *http.Request) bool {
	authed := f.token == "" || r.Header.Get("Authorization") == "Bearer "+f.token
	scoped := f.scopes == nil || f.scopes[scopeFor(r.URL.Path)]
	if authed && scoped {
		return true
	}
	v, _ := f.version.(string)
	pv, err := ParseVersion(v)
	split := err == nil && pv.AtLeast(5, 2)
	if !authed && split {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, 401, map[string]any{"detail": "Not authenticated"})
		return false
	}
	writeJSON(w, 403, map[string]any{"detail": "Forbidden"})
	return false
}

func (f *fakeRomM) route(path string, h http.HandlerFunc) {
	f.mu.Lock()
	f.routes[path] = h
	f.mu.Unlock()
}

// last returns the last request to path.
func (f *fakeRomM) last(path string) *http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.requests) - 1; i >= 0; i-- {
		if f.requests[i].URL.Path == path {
			return f.requests[i]
		}
	}
	return nil
}

func (f *fakeRomM) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if r.URL.Path == path {
			n++
		}
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func serveFile(t testing.TB, w http.ResponseWriter, name string) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Errorf("read testdata: %v", err)
		w.WriteHeader(500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read testdata: %v", err)
	}
	return b
}

// newClient builds a client for srv with the test token.
func newClient(t testing.TB, url string, mod ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{URL: url, Token: testToken, Timeout: 5 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// errorChain returns the text of err and of every error it wraps.
func errorChain(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		out = append(out, e.Error())
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

func mustErr(t *testing.T, err error, target error) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", target)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("error %q is not %v", err, target)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// withShortTimeout reads the version with the normal timeout (so a loaded machine cannot fail the
// heartbeat), then shortens the client's request timeout to d for the call under test.
func withShortTimeout(t testing.TB, c *Client, d time.Duration) *Client {
	t.Helper()
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatalf("Version: %v", err)
	}
	c.timeout = d
	return c
}
