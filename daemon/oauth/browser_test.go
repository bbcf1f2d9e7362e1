package oauth

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/chromium"
)

// callbacks is a client's loopback redirect listener: what came back.
type callbacks struct {
	mu   sync.Mutex
	got  []url.Values
	addr string
}

func newCallbacks(t *testing.T) *callbacks {
	t.Helper()
	c := &callbacks{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.addr = l.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.got = append(c.got, r.URL.Query())
		c.mu.Unlock()
		w.Write([]byte("signed in; you can close this page"))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return c
}

func (c *callbacks) last() url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		return nil
	}
	return c.got[len(c.got)-1]
}

// TestConsentInBrowser: the consent page in real headless Chromium, on a
// phone-sized screen: its CSP and cookie as the browser keeps them, a
// wrong PIN, fewer scopes granted than asked (the browser follows the
// approval to the client's loopback callback, which the CSP allows), a
// request that expired while the page was open, and a denial.
func TestConsentInBrowser(t *testing.T) {
	chromium.Require(t)
	// The page is served under a name, as a cabinet's is (Chromium counts
	// 127.0.0.1 as a secure context even over plain HTTP).
	k := newKit(t, func(c *Config) { c.PublicURL = strings.Replace(c.PublicURL, "127.0.0.1", "cabinet.test", 1) })
	b := chromium.Launch(t, chromium.Options{TrustCerts: []*x509.Certificate{k.ts.Certificate()}, Hosts: []string{"cabinet.test"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := b.SetViewport(ctx, chromium.Phone); err != nil {
		t.Fatal(err)
	}
	cb := newCallbacks(t)
	redirect := "http://" + cb.addr + "/callback"
	client := k.register(redirect)
	open := func(scope string) (verifier string) {
		t.Helper()
		v, ch := pkce()
		q := k.authQuery(client, redirect, ch, scope)
		resp, err := b.Navigate(ctx, k.srv.Issuer()+PathAuthorize+"?"+q.Encode())
		if err != nil || resp.Status != http.StatusOK {
			t.Fatalf("consent page: %v %+v", err, resp)
		}
		if resp.SecurityState != "secure" {
			t.Errorf("security state %q", resp.SecurityState)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self' http://" + cb.addr, "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		return v
	}
	text := func(js string) string {
		t.Helper()
		raw, err := b.Eval(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		var s string
		json.Unmarshal(raw, &s)
		return s
	}

	verifier := open("read play library power")
	pin := k.screen.pin(t)
	cookies, err := b.Cookies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var consent *chromium.Cookie
	for i := range cookies {
		if cookies[i].Name == consentCookie {
			consent = &cookies[i]
		}
	}
	if consent == nil || !consent.Secure || !consent.HTTPOnly || consent.SameSite != "Strict" || consent.Path != "/" {
		t.Fatalf("consent cookie %+v", consent)
	}
	if got := text(`[...document.querySelectorAll('input[name=scope]')].map(e => e.value + (e.checked ? '+' : '-')).join(' ')`); got != "read+ play+ library+ power-" {
		t.Errorf("scopes offered %q: power must not be ticked", got)
	}
	if err := b.Screenshot(ctx, chromium.Artifact(t, "oauth-consent-phone.png")); err != nil {
		t.Fatal(err)
	}

	// A wrong PIN: the page says so, nothing reaches the client.
	wrong := "000000"
	if pin == wrong {
		wrong = "111111"
	}
	if err := b.Fill(ctx, "#pin", wrong); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Submit(ctx, "button.ok"); err != nil {
		t.Fatal(err)
	}
	if got := text(`document.body.innerText`); !strings.Contains(got, "4 tries left") || cb.last() != nil {
		t.Fatalf("after a wrong PIN: %q", got)
	}
	// Fewer scopes than asked, the right PIN: back at the client.
	for _, s := range []string{"play", "library"} {
		if err := b.Click(ctx, "input[value="+s+"]"); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Fill(ctx, "#pin", pin); err != nil {
		t.Fatal(err)
	}
	resp, err := b.Submit(ctx, "button.ok")
	if err != nil {
		t.Fatal(err)
	}
	q := cb.last()
	if !strings.HasPrefix(resp.URL, redirect+"?") || q == nil || q.Get("iss") != k.srv.Issuer() || q.Get("code") == "" {
		t.Fatalf("after approving: %+v %v", resp, q)
	}
	_, tok := k.postForm(PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "client_id": {client},
		"redirect_uri": {redirect}, "code_verifier": {verifier}})
	if str(tok, "scope") != "read" {
		t.Fatalf("granted %v, want read only", tok)
	}

	// A request that expires while its page is open.
	open("read")
	k.screen.pin(t)
	k.clock.Advance(RequestLife)
	b.Fill(ctx, "#pin", pin)
	if _, err := b.Submit(ctx, "button.ok"); err != nil {
		t.Fatal(err)
	}
	if got := text(`document.querySelector('h1').textContent`); got != "This sign-in has ended" {
		t.Fatalf("an expired request: %q", got)
	}
	// Deny: the client hears access_denied (after the 30 s a failed
	// request holds the next back).
	k.clock.Advance(RequestGap)
	open("read")
	k.screen.pin(t)
	if _, err := b.Submit(ctx, "button.no"); err != nil {
		t.Fatal(err)
	}
	if q := cb.last(); q.Get("error") != "access_denied" || q.Get("iss") != k.srv.Issuer() {
		t.Fatalf("deny: %v", q)
	}
}
