package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// screen records what the server shows on the TV.
type screen struct {
	mu    sync.Mutex
	texts []string
	shown chan string
}

func newScreen() *screen { return &screen{shown: make(chan string, 64)} }

func (s *screen) Show(_ context.Context, text string) error {
	s.mu.Lock()
	s.texts = append(s.texts, text)
	s.mu.Unlock()
	select {
	case s.shown <- text:
	default:
	}
	return nil
}

var pinRE = regexp.MustCompile(`PIN (\d{3}) (\d{3})`)

// pin waits for the next PIN shown.
func (s *screen) pin(t testing.TB) string {
	t.Helper()
	select {
	case text := <-s.shown:
		m := pinRE.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no PIN in %q", text)
		}
		return m[1] + m[2]
	case <-time.After(10 * time.Second):
		t.Fatal("no PIN was shown on the TV")
		return ""
	}
}

// kit is a server on a loopback TLS listener, its screen, clock and a
// client that does not follow redirects.
type kit struct {
	t      testing.TB
	srv    *Server
	ts     *httptest.Server
	screen *screen
	clock  *clock.Fake
	http   *http.Client
	state  string
}

func newKit(t testing.TB, mod ...func(*Config)) *kit {
	t.Helper()
	k := &kit{t: t, screen: newScreen(), clock: clock.NewFake(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))}
	mux := http.NewServeMux()
	k.ts = httptest.NewUnstartedServer(mux)
	k.ts.StartTLS()
	t.Cleanup(k.ts.Close)
	k.state = filepath.Join(t.TempDir(), "oauth.json")
	cfg := Config{PublicURL: k.ts.URL, StatePath: k.state, Screen: k.screen, Clock: k.clock, Log: zerolog.Nop()}
	for _, m := range mod {
		m(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Flush)
	k.srv = srv
	srv.Routes(mux)
	k.http = k.ts.Client()
	k.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return k
}

func (k *kit) do(req *http.Request) (*http.Response, string) {
	k.t.Helper()
	resp, err := k.http.Do(req)
	if err != nil {
		k.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (k *kit) get(path string) (*http.Response, string) {
	k.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, k.ts.URL+path, nil)
	return k.do(req)
}

func (k *kit) postForm(path string, form url.Values) (*http.Response, map[string]any) {
	k.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, k.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body := k.do(req)
	var m map[string]any
	json.Unmarshal([]byte(body), &m)
	return resp, m
}

// register registers a client by DCR and returns its id.
func (k *kit) register(redirects ...string) string {
	k.t.Helper()
	b, _ := json.Marshal(map[string]any{"client_name": "Test Client", "redirect_uris": redirects,
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"})
	req, _ := http.NewRequest(http.MethodPost, k.ts.URL+PathRegister, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	resp, body := k.do(req)
	if resp.StatusCode != http.StatusCreated {
		k.t.Fatalf("register: %d %s", resp.StatusCode, body)
	}
	var r registered
	json.Unmarshal([]byte(body), &r)
	return r.ClientID
}

// pkce is a verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	var b [32]byte
	rand.Read(b[:])
	v := base64.RawURLEncoding.EncodeToString(b[:])
	return v, s256(v)
}

// consent is an opened consent page: the browser's cookie and the form.
type consent struct {
	cookie        *http.Cookie
	request, csrf string
	status        int
	body          string
	header        http.Header
}

var (
	requestRE = regexp.MustCompile(`name="request" value="([^"]+)"`)
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// authorize opens the consent page for an authorization request.
func (k *kit) authorize(q url.Values, cookie *http.Cookie) consent {
	k.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, k.ts.URL+PathAuthorize+"?"+q.Encode(), nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, body := k.do(req)
	c := consent{status: resp.StatusCode, body: body, header: resp.Header, cookie: cookie}
	for _, ck := range resp.Cookies() {
		if ck.Name == consentCookie {
			c.cookie = ck
		}
	}
	if m := requestRE.FindStringSubmatch(body); m != nil {
		c.request = m[1]
	}
	if m := csrfRE.FindStringSubmatch(body); m != nil {
		c.csrf = m[1]
	}
	return c
}

// answer posts the consent form as the cabinet's own page would.
func (k *kit) answer(c consent, pin string, scopes []string, mod ...func(url.Values, *http.Request)) (*http.Response, string) {
	k.t.Helper()
	form := url.Values{"request": {c.request}, "csrf": {c.csrf}, "pin": {pin}, "scope": scopes, "action": {"approve"}}
	req, _ := http.NewRequest(http.MethodPost, k.ts.URL+PathAuthorize, nil)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", k.srv.Issuer())
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	for _, m := range mod {
		m(form, req)
	}
	req.Body = io.NopCloser(strings.NewReader(form.Encode()))
	return k.do(req)
}

// authQuery is a valid authorization request's parameters.
func (k *kit) authQuery(client, redirect, challenge, scope string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st-1"}, "scope": {scope},
		"resource": {k.srv.Resource()}}
}

// callback reads a redirect to the client: its query, checking iss.
func (k *kit) callback(resp *http.Response, body string) url.Values {
	k.t.Helper()
	if resp.StatusCode != http.StatusSeeOther {
		k.t.Fatalf("want a redirect to the client, got %d: %s", resp.StatusCode, body)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		k.t.Fatal(err)
	}
	q := u.Query()
	if q.Get("iss") != k.srv.Issuer() {
		k.t.Errorf("iss = %q, want %q (RFC 9207)", q.Get("iss"), k.srv.Issuer())
	}
	return q
}

// signIn runs the whole flow for a registered client and returns the token
// answer.
func (k *kit) signIn(client, redirect, scope string, grant []string) map[string]any {
	k.t.Helper()
	v, ch := pkce()
	c := k.authorize(k.authQuery(client, redirect, ch, scope), nil)
	if c.status != http.StatusOK || c.request == "" {
		k.t.Fatalf("consent page: %d %s", c.status, c.body)
	}
	pin := k.screen.pin(k.t)
	q := k.callback(k.answer(c, pin, grant))
	if q.Get("state") != "st-1" || q.Get("code") == "" {
		k.t.Fatalf("callback %v", q)
	}
	resp, tok := k.postForm(PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")},
		"client_id": {client}, "redirect_uri": {redirect}, "code_verifier": {v}, "resource": {k.srv.Resource()}})
	if resp.StatusCode != http.StatusOK {
		k.t.Fatalf("token: %d %v", resp.StatusCode, tok)
	}
	return tok
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func mustJSON(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON (%v): %s", err, body)
	}
	return m
}

var _ = fmt.Sprintf
