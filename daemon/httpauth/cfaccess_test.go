package httpauth

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/cfaccess"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/fakeaccess"
)

// accessRig is a guard with Cloudflare Access configured against a fake
// Access on loopback, and the default bearer token.
type accessRig struct {
	*server
	iss    *fakeaccess.Issuer
	token  string
	mu     sync.Mutex
	denied []string
}

func newAccessRig(t *testing.T, scopes []string, emails ...string) *accessRig {
	t.Helper()
	iss := &fakeaccess.Issuer{}
	certs := httptest.NewServer(iss)
	t.Cleanup(certs.Close)
	v, err := cfaccess.New(cfaccess.Options{TeamDomain: iss.Team(), Audience: iss.AUD(), AllowedEmails: emails,
		CertsURL: certs.URL + fakeaccess.CertsPath})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "token")
	tok, err := NewToken(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &accessRig{iss: iss, token: tok}
	r.server = newServer(t, Options{TokenPath: path, Access: v, AccessScopes: scopes, AllowedHosts: []string{"cabinet.example.com"},
		OnDenied: func(_ *http.Request, _ int, reason string) {
			r.mu.Lock()
			r.denied = append(r.denied, reason)
			r.mu.Unlock()
		}})
	return r
}

type accessReply struct {
	status         int
	caller, scopes string
	body           string
}

// send posts to /mcp through c (nil: the default client) with the
// assertions given (each one header line; none: no header) and auth as
// the Authorization header ("" for none).
func (r *accessRig) send(c *http.Client, host, auth string, assertions ...string) (accessReply, error) {
	req, _ := http.NewRequest(http.MethodPost, r.url+"/mcp", bytes.NewReader([]byte("{}")))
	if host != "" {
		req.Host = host
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for _, a := range assertions {
		req.Header.Add(AccessHeader, a)
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return accessReply{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return accessReply{status: resp.StatusCode, caller: resp.Header.Get("X-Caller"), scopes: resp.Header.Get("X-Scopes"), body: string(b)}, nil
}

func (r *accessRig) must(host, auth string, assertions ...string) accessReply {
	r.t.Helper()
	rep, err := r.send(nil, host, auth, assertions...)
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}

// TestAccessAssertions: with Access configured, a request carrying an
// assertion is decided by it alone: a valid one passes as the identity
// with the configured scopes, whatever Authorization says; every forgery
// gets 403 with a reason that shows neither the token nor a claim; a
// request without the header goes to the bearer check.
func TestAccessAssertions(t *testing.T) {
	r := newAccessRig(t, nil, "player@example.com", "@family.example")
	iss := r.iss
	cur := iss.Current()
	attacker := iss.NewKey()
	impostor := *attacker
	impostor.Kid = cur.Kid // the published kid, the attacker's own key
	now := time.Now()
	valid := iss.Assertion("player@example.com")

	tests := []struct {
		name       string
		host, auth string
		assertions []string
		want       int
		caller     string
		reason     cfaccess.Reason
	}{
		{name: "valid", assertions: []string{valid}, want: 200, caller: "cf-access:player@example.com"},
		{name: "valid, domain entry", assertions: []string{iss.Assertion("kid@family.example")}, want: 200, caller: "cf-access:kid@family.example"},
		{name: "valid, wrong Authorization beside it", auth: "Bearer " + strings.Repeat("x", 43), assertions: []string{valid}, want: 200, caller: "cf-access:player@example.com"},
		{name: "valid, tunnel's public host", host: "cabinet.example.com", assertions: []string{valid}, want: 200, caller: "cf-access:player@example.com"},
		{name: "valid, foreign host", host: "evil.example", assertions: []string{valid}, want: 421},
		{name: "expired", assertions: []string{iss.Sign(cur, fakeaccess.Claims{Email: "player@example.com", IssuedAt: now.Add(-2 * time.Hour), NotBefore: now.Add(-2 * time.Hour), Expiry: now.Add(-time.Hour)})}, want: 403, reason: cfaccess.ReasonExpired},
		{name: "not yet valid", assertions: []string{iss.Sign(cur, fakeaccess.Claims{Email: "player@example.com", NotBefore: now.Add(time.Hour), Expiry: now.Add(2 * time.Hour)})}, want: 403, reason: cfaccess.ReasonNotYetValid},
		{name: "wrong audience", assertions: []string{iss.Sign(cur, fakeaccess.Claims{Email: "player@example.com", Audience: strings.Repeat("ab", 32)})}, want: 403, reason: cfaccess.ReasonAudience},
		{name: "wrong issuer", assertions: []string{iss.Sign(cur, fakeaccess.Claims{Email: "player@example.com", Issuer: "https://evil.cloudflareaccess.com"})}, want: 403, reason: cfaccess.ReasonIssuer},
		{name: "alg none", assertions: []string{iss.AlgNone("player@example.com")}, want: 403, reason: cfaccess.ReasonAlgorithm},
		{name: "HS256 keyed with the public key", assertions: []string{iss.HS256WithPublicKey("player@example.com")}, want: 403, reason: cfaccess.ReasonAlgorithm},
		{name: "another key under the published kid", assertions: []string{iss.Sign(&impostor, fakeaccess.Claims{Email: "player@example.com"})}, want: 403, reason: cfaccess.ReasonSignature},
		{name: "header without a token", assertions: []string{""}, want: 403, reason: cfaccess.ReasonMissing},
		{name: "header without a token, good bearer", auth: "Bearer " + r.token, assertions: []string{""}, want: 403, reason: cfaccess.ReasonMissing},
		{name: "garbage", assertions: []string{"not-a-jwt"}, want: 403, reason: cfaccess.ReasonMalformed},
		{name: "two assertions", assertions: []string{valid, valid}, want: 403, reason: cfaccess.ReasonMalformed},
		{name: "e-mail outside the list", assertions: []string{iss.Assertion("stranger@example.com")}, want: 403, reason: cfaccess.ReasonEmail},
		{name: "service token, e-mail list set", assertions: []string{iss.Sign(cur, fakeaccess.Claims{Subject: "ci-token"})}, want: 403, reason: cfaccess.ReasonNoEmail},
		{name: "no header, no bearer", want: 401},
		{name: "no header, good bearer", auth: "Bearer " + r.token, want: 200, caller: DefaultName},
	}
	for _, tt := range tests {
		got := r.must(tt.host, tt.auth, tt.assertions...)
		if got.status != tt.want || got.caller != tt.caller {
			t.Errorf("%s: status %d caller %q (%s), want %d %q", tt.name, got.status, got.caller, got.body, tt.want, tt.caller)
			continue
		}
		if tt.reason != "" && got.body != fmt.Sprintf("{\"error\":%q}\n", "cloudflare access: "+string(tt.reason)) {
			t.Errorf("%s: body %q, want the reason %q", tt.name, got.body, tt.reason)
		}
		if tt.caller != "" && strings.HasPrefix(tt.caller, AccessCallerPrefix) && got.scopes != "read,play" {
			t.Errorf("%s: scopes %q, want read,play", tt.name, got.scopes)
		}
		for _, a := range tt.assertions {
			if a != "" && strings.Contains(got.body, a) {
				t.Errorf("%s: the answer shows the assertion", tt.name)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.denied {
		for _, tt := range tests {
			for _, a := range tt.assertions {
				if a != "" && strings.Contains(d, a) {
					t.Errorf("a refusal logged shows an assertion: %s", d)
				}
			}
		}
	}
	if joined := strings.Join(r.denied, "\n"); !strings.Contains(joined, `"stranger@example.com" is not in cabinet.mcp.cf_access.allowed_emails`) {
		t.Errorf("the log does not say which e-mail was refused:\n%s", joined)
	}
}

// TestAccessRotation: an assertion under a kid the cabinet has not fetched
// is refused; once Access publishes the key (and a minute has passed since
// the last fetch) the same assertion is accepted.
func TestAccessRotation(t *testing.T) {
	iss := &fakeaccess.Issuer{}
	certs := httptest.NewServer(iss)
	t.Cleanup(certs.Close)
	clk := newFakeClock()
	iss.Now = clk.Now
	v, err := cfaccess.New(cfaccess.Options{TeamDomain: iss.Team(), Audience: iss.AUD(), CertsURL: certs.URL + fakeaccess.CertsPath, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "token")
	if _, err := NewToken(path); err != nil {
		t.Fatal(err)
	}
	r := &accessRig{iss: iss, server: newServer(t, Options{TokenPath: path, Access: v, Now: clk.Now})}
	if got := r.must("", "", iss.Assertion("a@example.com")); got.status != 200 {
		t.Fatalf("valid before the rotation: %d %s", got.status, got.body)
	}
	next := iss.NewKey()
	rotated := iss.Sign(next, fakeaccess.Claims{Email: "a@example.com"})
	if got := r.must("", "", rotated); got.status != 403 || !strings.Contains(got.body, string(cfaccess.ReasonUnknownKey)) {
		t.Fatalf("unknown kid: %d %s, want 403 %q", got.status, got.body, cfaccess.ReasonUnknownKey)
	}
	iss.Publish(next)
	clk.Advance(time.Minute)
	if got := r.must("", "", rotated); got.status != 200 {
		t.Fatalf("after the rotation: %d %s, want 200", got.status, got.body)
	}
	if hits := iss.Hits(); hits != 2 {
		t.Errorf("certs fetched %d times, want 2", hits)
	}
}

// TestAccessScopes: an identity gets cabinet.mcp.cf_access.scopes, read
// play by default, and never power or household unless they are listed.
func TestAccessScopes(t *testing.T) {
	tests := []struct {
		given []string
		want  string
	}{
		{nil, "read,play"},
		{[]string{"read"}, "read"},
		{[]string{"power", "read"}, "read,power"},
	}
	for _, tt := range tests {
		r := newAccessRig(t, tt.given)
		got := r.must("", "", r.iss.Assertion("a@example.com"))
		if got.status != 200 || got.scopes != tt.want {
			t.Errorf("scopes %v: status %d, scopes %q; want 200 %q", tt.given, got.status, got.scopes, tt.want)
		}
	}
}

func TestParseScopeList(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"read play", "read,play", true},
		{"read,play", "read,play", true},
		{" play , read\tlibrary ", "read,play,library", true},
		{"household power", "power,household", true},
		{"read pwer", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := ParseScopeList(tt.in)
		if (err == nil) != tt.ok || strings.Join(got, ",") != tt.want {
			t.Errorf("ParseScopeList(%q) = %v, %v; want %q ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestAccessIgnoredWhenOff: without Access configured the header means
// nothing: a valid assertion alone is refused for want of a bearer token,
// and a bearer token beside one is accepted.
func TestAccessIgnoredWhenOff(t *testing.T) {
	iss := &fakeaccess.Issuer{}
	path := filepath.Join(t.TempDir(), "token")
	tok, err := NewToken(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &accessRig{iss: iss, server: newServer(t, Options{TokenPath: path})}
	a := iss.Assertion("a@example.com")
	if got := r.must("", "", a); got.status != 401 {
		t.Errorf("assertion alone: %d, want 401", got.status)
	}
	if got := r.must("", "Bearer "+tok, a); got.status != 200 || got.caller != DefaultName {
		t.Errorf("bearer beside an assertion: %d %q, want 200 default", got.status, got.caller)
	}
}

// TestAccessFlood: behind the tunnel every request comes from cloudflared's
// one address. 2000 forged assertions from 127.0.0.1, interleaved with a
// real user's valid ones from the same address: every forgery gets 403,
// every valid one 200 (never 429: assertions are outside the per-peer
// throttle), and the flood is logged once, not 2000 times.
func TestAccessFlood(t *testing.T) {
	r := newAccessRig(t, nil)
	iss := r.iss
	valid := iss.Assertion("player@example.com")
	forger := iss.NewKey()
	forger.Kid = iss.Current().Kid
	forged := []string{
		iss.Sign(forger, fakeaccess.Claims{Email: "player@example.com"}),
		iss.HS256WithPublicKey("player@example.com"),
		iss.AlgNone("player@example.com"),
		iss.Sign(iss.Current(), fakeaccess.Claims{Email: "player@example.com", Audience: strings.Repeat("cd", 32)}),
	}
	const forgeries, workers = 2000, 8
	c := clientFrom("127.0.0.1")
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, workers+1)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < forgeries; i += workers {
				got, err := r.send(c, "", "Bearer "+strings.Repeat("y", 43), forged[i%len(forged)])
				if err != nil || got.status != 403 {
					errs <- fmt.Sprintf("forgery %d: %v status %d %s, want 403", i, err, got.status, got.body)
					return
				}
			}
		})
	}
	valids := 0
	wg.Go(func() {
		for valids < 200 {
			got, err := r.send(c, "", "", valid)
			if err != nil || got.status != 200 || got.caller != "cf-access:player@example.com" {
				errs <- fmt.Sprintf("valid assertion %d during the flood: %v status %d %s, want 200", valids, err, got.status, got.body)
				return
			}
			valids++
		}
	})
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	took := time.Since(start)
	if got := r.must("", "", valid); got.status != 200 {
		t.Errorf("valid after the flood: %d %s", got.status, got.body)
	}
	if n := r.g.throttle.tracked(); n != 0 {
		t.Errorf("the per-peer throttle tracks %d peers after assertion refusals, want 0", n)
	}
	if got := r.must("", "Bearer "+r.token); got.status != 200 {
		t.Errorf("the LAN bearer from the flooded address after the flood: %d, want 200", got.status)
	}
	r.mu.Lock()
	logged := len(r.denied)
	floods := strings.Count(strings.Join(r.denied, "\n"), "a flood of invalid Cloudflare Access assertions")
	r.mu.Unlock()
	if logged > 40 || floods < 1 {
		t.Errorf("%d refusals logged (%d as the flood) for %d forgeries; want the flood logged once and few lines", logged, floods, forgeries)
	}
	t.Logf("%d forgeries and %d valid assertions from one address in %v; %d refusals logged", forgeries, valids, took.Round(time.Millisecond), logged)
}
