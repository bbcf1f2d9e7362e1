package httpauth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// newFakeClock is the guard's clock in tests: it moves only when told.
func newFakeClock() *clock.Fake { return clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) }

// echo is the MCP handler of these tests: it answers with the body, and
// with the caller's name and scopes in headers.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if c, ok := CallerFrom(r.Context()); ok {
		w.Header().Set("X-Caller", c.Name)
		w.Header().Set("X-Scopes", strings.Join(c.Scopes, ","))
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		return
	}
	w.Write(b)
})

type server struct {
	t    *testing.T
	url  string
	port string
	g    *Guard
}

func newServer(t *testing.T, opts Options) *server {
	t.Helper()
	g := New(opts)
	srv := httptest.NewServer(g.Wrap(echo))
	t.Cleanup(srv.Close)
	t.Cleanup(g.Flush)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return &server{t: t, url: srv.URL, port: port, g: g}
}

// clientFrom dials from a loopback source address (127.0.0.n), so tests
// can be twenty peers.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
}

type resp struct {
	status       int
	caller       string
	scopes       string
	retryAfter   string
	authenticate string
}

func (s *server) do(c *http.Client, method, path, host, auth, origin string, body []byte) resp {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if host != "" {
		req.Host = host
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if c == nil {
		c = http.DefaultClient
	}
	r, err := c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return resp{status: r.StatusCode, caller: r.Header.Get("X-Caller"), scopes: r.Header.Get("X-Scopes"),
		retryAfter: r.Header.Get("Retry-After"), authenticate: r.Header.Get("WWW-Authenticate")}
}

func (s *server) status(method, path, host, auth, origin string, body []byte) int {
	s.t.Helper()
	return s.do(nil, method, path, host, auth, origin, body).status
}

func TestGuard(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	tok, err := NewToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 || len(tok) < minTokenLen {
		t.Fatalf("token file mode %v, token length %d", fi.Mode().Perm(), len(tok))
	}
	var mu sync.Mutex
	var reasons []string
	s := newServer(t, Options{TokenPath: path, AllowedHosts: []string{"cabinet.lan"}, AllowedOrigins: []string{"https://ha.lan"}, MaxBody: 100,
		OnDenied: func(r *http.Request, status int, reason string) {
			mu.Lock()
			reasons = append(reasons, reason)
			mu.Unlock()
		}})
	own := "http://127.0.0.1:" + s.port
	tests := []struct {
		name               string
		method, path, host string
		auth, origin       string
		body               []byte
		want               int
	}{
		{"healthz open", "GET", "/healthz", "", "", "", nil, 200},
		{"no token", "POST", "/mcp", "", "", "", []byte("{}"), 401},
		{"wrong token", "POST", "/mcp", "", "Bearer " + strings.Repeat("x", 43), "", []byte("{}"), 401},
		{"token without Bearer", "POST", "/mcp", "", tok, "", []byte("{}"), 401},
		{"good", "POST", "/mcp", "", "Bearer " + tok, "", []byte("{}"), 200},
		{"allowed host", "POST", "/mcp", "cabinet.lan:8717", "Bearer " + tok, "", []byte("{}"), 200},
		{"rebinding host", "POST", "/mcp", "evil.example:8717", "Bearer " + tok, "", []byte("{}"), 421},
		{"foreign origin", "POST", "/mcp", "", "Bearer " + tok, "https://evil.example", []byte("{}"), 403},
		{"allowed origin", "POST", "/mcp", "", "Bearer " + tok, "https://ha.lan", []byte("{}"), 200},
		{"own origin", "POST", "/mcp", "", "Bearer " + tok, own, []byte("{}"), 200},
		{"oversized body", "POST", "/mcp", "", "Bearer " + tok, "", bytes.Repeat([]byte("x"), 1000), 413},
	}
	for _, tt := range tests {
		if got := s.status(tt.method, tt.path, tt.host, tt.auth, tt.origin, tt.body); got != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.want)
		}
	}
	if r := s.do(nil, "POST", "/mcp", "", "", "", nil); r.authenticate == "" {
		t.Error("401 without WWW-Authenticate")
	}
	if r := s.do(nil, "POST", "/mcp", "", "Bearer "+tok, "", nil); r.caller != DefaultName || r.scopes != "read,play,library" {
		t.Errorf("the default token: caller %q scopes %q, want default with read,play,library", r.caller, r.scopes)
	}
	mu.Lock()
	for _, r := range reasons {
		if strings.Contains(r, tok) {
			t.Errorf("a refusal reason shows the token: %s", r)
		}
	}
	mu.Unlock()
	// A new default token takes effect without a restart.
	tok2, _ := NewToken(path)
	if s.status("POST", "/mcp", "", "Bearer "+tok, "", nil) != 401 || s.status("POST", "/mcp", "", "Bearer "+tok2, "", nil) != 200 {
		t.Error("token rotation not picked up")
	}
}

// TestOwnOrigin: a browser page served from the cabinet's own origin may
// call; every other origin is refused unless cabinet.mcp.allowed_origins
// lists it.
func TestOwnOrigin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	tok, _ := NewToken(path)
	s := newServer(t, Options{TokenPath: path, AllowedHosts: []string{"cabinet.lan"}, AllowedOrigins: []string{"http://ha.lan:8123/"}})
	p := s.port
	other := "1"
	if p == "1" {
		other = "2"
	}
	for _, tc := range []struct {
		origin, host string
		want         int
	}{
		{"http://127.0.0.1:" + p, "", 200},
		{"http://127.0.0.1:" + p + "/", "", 200},
		{"HTTP://127.0.0.1:" + p, "", 200},
		{"http://localhost:" + p, "localhost:" + p, 200},
		{"http://[::1]:" + p, "", 200},
		{"http://cabinet.lan:" + p, "cabinet.lan:" + p, 200},
		{"http://ha.lan:8123", "", 200}, // listed
		{"http://127.0.0.1:" + other, "", 403},
		{"http://127.0.0.1", "", 403}, // port 80
		{"https://127.0.0.1:" + p, "", 403},
		{"http://evil.example:" + p, "", 403},
		{"http://127.0.0.1.evil.example:" + p, "", 403},
		{"http://user@127.0.0.1:" + p, "", 403},
		{"http://127.0.0.1:" + p + "/page", "", 403},
		{"null", "", 403},
		{"file://", "", 403},
		{"http://ha.lan:8124", "", 403},
	} {
		if got := s.status("POST", "/mcp", tc.host, "Bearer "+tok, tc.origin, []byte("{}")); got != tc.want {
			t.Errorf("Origin %q (Host %q): status %d, want %d", tc.origin, tc.host, got, tc.want)
		}
	}
}

// TestThrottleOverHTTP: bad tokens from twenty addresses, a thousand in
// all: each address is answered 401 for its first ten failures and then
// 429 with Retry-After, even with a good token; a good token from a
// twenty-first address goes through at once; when the minute is over the
// throttled addresses may try again.
func TestThrottleOverHTTP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	tok, _ := NewToken(path)
	clock := newFakeClock()
	s := newServer(t, Options{TokenPath: path, Now: clock.Now})
	bad := "Bearer " + strings.Repeat("b", 43)
	const peers, each = 20, 50
	var wg sync.WaitGroup
	errs := make(chan error, peers)
	start := time.Now()
	for i := range peers {
		ip := fmt.Sprintf("127.0.0.%d", 10+i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clientFrom(ip)
			for n := range each {
				req, _ := http.NewRequest("POST", s.url+"/mcp", strings.NewReader("{}"))
				req.Header.Set("Authorization", bad)
				r, err := c.Do(req)
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				want := 401
				if n >= DefaultFailLimit {
					want = 429
				}
				if r.StatusCode != want || (want == 429 && r.Header.Get("Retry-After") != "60") {
					errs <- fmt.Errorf("%s, bad token %d: status %d Retry-After %q, want %d", ip, n, r.StatusCode, r.Header.Get("Retry-After"), want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	storm := time.Since(start)
	good := time.Now()
	if r := s.do(clientFrom("127.0.0.200"), "POST", "/mcp", "", "Bearer "+tok, "", []byte("{}")); r.status != 200 {
		t.Fatalf("a good token from another address after the storm: %d", r.status)
	}
	t.Logf("%d bad tokens from %d addresses in %v; the good call after them took %v", peers*each, peers, storm.Round(time.Millisecond), time.Since(good).Round(time.Microsecond))
	throttled := clientFrom("127.0.0.10")
	if r := s.do(throttled, "POST", "/mcp", "", "Bearer "+tok, "", nil); r.status != 429 {
		t.Errorf("a good token from a throttled address: %d, want 429", r.status)
	}
	clock.Advance(30 * time.Second)
	if r := s.do(throttled, "POST", "/mcp", "", bad, "", nil); r.status != 429 || r.retryAfter != "30" {
		t.Errorf("half a minute later: %d Retry-After %q, want 429 and 30", r.status, r.retryAfter)
	}
	clock.Advance(30 * time.Second)
	if r := s.do(throttled, "POST", "/mcp", "", "Bearer "+tok, "", nil); r.status != 200 {
		t.Errorf("a minute later, the good token: %d", r.status)
	}
	// No Authorization header at all is a client asking how to
	// authenticate, not a guess: it is not counted.
	quiet := clientFrom("127.0.0.201")
	for range 3 * DefaultFailLimit {
		if r := s.do(quiet, "POST", "/mcp", "", "", "", nil); r.status != 401 {
			t.Fatalf("no token: %d, want 401", r.status)
		}
	}
	if r := s.do(quiet, "POST", "/mcp", "", "Bearer "+tok, "", nil); r.status != 200 {
		t.Errorf("after requests without a token: %d", r.status)
	}
}

func TestThrottle(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	th := newThrottle(3, time.Minute, 4)
	for range 3 {
		if w := th.wait("192.168.1.5:4000", now); w != 0 {
			t.Fatalf("blocked before the limit: %v", w)
		}
		th.fail("192.168.1.5:4000", now)
	}
	if w := th.wait("192.168.1.5:5000", now.Add(10*time.Second)); w != 50*time.Second {
		t.Errorf("after 3 failures: wait %v, want 50s (any port of the address)", w)
	}
	if w := th.wait("192.168.1.6:4000", now); w != 0 {
		t.Errorf("another address waits %v", w)
	}
	if w := th.wait("192.168.1.5:4000", now.Add(time.Minute)); w != 0 {
		t.Errorf("after the window: wait %v", w)
	}
	// IPv6: the /64 is one peer; IPv4-mapped is IPv4.
	for _, a := range []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:2::2]:1", "[2001:db8:1:2:ffff::3]:1"} {
		th.fail(a, now)
	}
	if th.wait("[2001:db8:1:2::99]:1", now) == 0 || th.wait("[2001:db8:1:3::1]:1", now) != 0 {
		t.Error("IPv6 peers are not their /64")
	}
	if a, _ := peerKey("[::ffff:10.0.0.1]:80"); a.String() != "10.0.0.1" {
		t.Errorf("mapped address: %v", a)
	}
	// Forgiven after a good token.
	th.forgive("[2001:db8:1:2::1]:1")
	if th.wait("[2001:db8:1:2::1]:1", now) != 0 {
		t.Error("not forgiven")
	}
	// Bounded: the oldest peer is forgotten first.
	th = newThrottle(1, time.Minute, 4)
	for i := range 10 {
		th.fail(fmt.Sprintf("10.0.0.%d:1", i), now.Add(time.Duration(i)*time.Second))
	}
	if n := th.tracked(); n != 4 {
		t.Errorf("%d peers tracked, want at most 4", n)
	}
	if th.wait("10.0.0.0:1", now) != 0 || th.wait("10.0.0.9:1", now.Add(10*time.Second)) == 0 {
		t.Error("not the oldest forgotten first")
	}
	// A clock that went back (NTP) does not keep a peer waiting.
	th = newThrottle(1, time.Minute, 4)
	th.fail("10.1.1.1:1", now)
	if th.wait("10.1.1.1:1", now.Add(-time.Hour)) != 0 {
		t.Error("a peer waits after the clock went back")
	}
	// Garbage addresses are not tracked (and not refused).
	th.fail("not an address", now)
	if th.wait("not an address", now) != 0 {
		t.Error("garbage address throttled")
	}
}

func TestReadToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if _, err := ReadToken(path); err != ErrNoToken {
		t.Errorf("missing: %v", err)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	if _, err := ReadToken(path); err == nil {
		t.Error("short token accepted")
	}
	tok, err := EnsureToken(filepath.Join(t.TempDir(), "token"))
	if err != nil || len(tok) != 43 {
		t.Errorf("EnsureToken = %q, %v", tok, err)
	}
}

func TestCallerContext(t *testing.T) {
	if _, ok := CallerFrom(context.Background()); ok {
		t.Error("a caller in an empty context")
	}
	c, ok := CallerFrom(WithCaller(context.Background(), Caller{Name: "x", Scopes: []string{"read"}}))
	if !ok || c.Name != "x" || len(c.Scopes) != 1 {
		t.Errorf("CallerFrom = %+v, %v", c, ok)
	}
}
