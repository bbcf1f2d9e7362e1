package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Each hostile request is refused with the right OAuth error, and nothing
// is issued.
func TestHostileAuthorize(t *testing.T) {
	k := newKit(t)
	redirect := "https://client.example/cb"
	client := k.register(redirect)
	_, ch := pkce()
	for _, tc := range []struct {
		name  string
		mod   func(url.Values)
		page  int    // an error page, never a redirect
		error string // or an error redirected to the client
	}{
		{"unregistered redirect", func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }, http.StatusBadRequest, ""},
		{"open redirect by prefix", func(q url.Values) { q.Set("redirect_uri", "https://client.example/cb/../../evil") }, http.StatusBadRequest, ""},
		{"open redirect by query", func(q url.Values) { q.Set("redirect_uri", "https://client.example/cb?next=https://evil.example") }, http.StatusBadRequest, ""},
		{"redirect host lookalike", func(q url.Values) { q.Set("redirect_uri", "https://client.example.evil.example/cb") }, http.StatusBadRequest, ""},
		{"unknown client", func(q url.Values) { q.Set("client_id", "cabinet-nobody") }, http.StatusBadRequest, ""},
		{"no client", func(q url.Values) { q.Del("client_id") }, http.StatusBadRequest, ""},
		{"repeated parameter", func(q url.Values) { q.Add("redirect_uri", redirect) }, http.StatusBadRequest, ""},
		{"no PKCE", func(q url.Values) { q.Del("code_challenge") }, 0, "invalid_request"},
		{"plain PKCE", func(q url.Values) { q.Set("code_challenge_method", "plain") }, 0, "invalid_request"},
		{"short challenge", func(q url.Values) { q.Set("code_challenge", "abc") }, 0, "invalid_request"},
		{"token response type", func(q url.Values) { q.Set("response_type", "token") }, 0, "unsupported_response_type"},
		{"another server's resource", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, 0, "invalid_target"},
		{"resource path differs", func(q url.Values) { q.Set("resource", k.srv.Issuer()+"/admin") }, 0, "invalid_target"},
		{"only unknown scopes", func(q url.Values) { q.Set("scope", "admin openid") }, 0, "invalid_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := k.authQuery(client, redirect, ch, "read")
			tc.mod(q)
			c := k.authorize(q, nil)
			if tc.page != 0 {
				if c.status != tc.page || c.header.Get("Location") != "" || c.request != "" {
					t.Fatalf("want an error page %d, got %d Location=%q", tc.page, c.status, c.header.Get("Location"))
				}
				return
			}
			if c.status != http.StatusSeeOther {
				t.Fatalf("want a redirect with %s, got %d: %s", tc.error, c.status, c.body)
			}
			u, _ := url.Parse(c.header.Get("Location"))
			if !strings.HasPrefix(u.String(), redirect+"?") || u.Query().Get("error") != tc.error || u.Query().Get("iss") != k.srv.Issuer() ||
				u.Query().Get("state") != "st-1" || u.Query().Get("code") != "" {
				t.Fatalf("redirect %s, want error=%s with iss and state", u, tc.error)
			}
		})
	}
	select {
	case text := <-k.screen.shown:
		t.Fatalf("a refused request showed a PIN: %q", text)
	default:
	}
}

func TestHostileTokenRequests(t *testing.T) {
	k := newKit(t)
	redirect := "https://client.example/cb"
	client := k.register(redirect)
	other := k.register("https://other.example/cb")
	// A code, not yet exchanged.
	newCode := func() (code, verifier string) {
		k.clock.Advance(time.Minute)
		v, ch := pkce()
		c := k.authorize(k.authQuery(client, redirect, ch, "read play"), nil)
		q := k.callback(k.answer(c, k.screen.pin(t), []string{"read", "play"}))
		return q.Get("code"), v
	}
	exchange := func(form url.Values) (int, string) {
		resp, m := k.postForm(PathToken, form)
		if resp.StatusCode != http.StatusOK && str(m, "access_token") != "" {
			t.Fatal("an error answer carries a token")
		}
		return resp.StatusCode, str(m, "error")
	}
	base := func(code, v string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {client}, "redirect_uri": {redirect}, "code_verifier": {v}}
	}
	for _, tc := range []struct {
		name string
		mod  func(url.Values)
		want string
	}{
		{"PKCE mismatch", func(f url.Values) { w, _ := pkce(); f.Set("code_verifier", w) }, "invalid_grant"},
		{"no verifier", func(f url.Values) { f.Del("code_verifier") }, "invalid_request"},
		{"another client", func(f url.Values) { f.Set("client_id", other) }, "invalid_grant"},
		{"another redirect", func(f url.Values) { f.Set("redirect_uri", "https://client.example/other") }, "invalid_grant"},
		{"another resource", func(f url.Values) { f.Set("resource", "https://other.example/mcp") }, "invalid_target"},
		{"unknown code", func(f url.Values) { f.Set("code", "nope") }, "invalid_grant"},
		{"grant type", func(f url.Values) { f.Set("grant_type", "password") }, "unsupported_grant_type"},
		{"client credentials", func(f url.Values) { f.Set("grant_type", "client_credentials") }, "unsupported_grant_type"},
	} {
		c, v := newCode() // a failed exchange burns the code
		f := base(c, v)
		tc.mod(f)
		if status, e := exchange(f); e != tc.want || status == http.StatusOK {
			t.Errorf("%s: %d %s, want %s", tc.name, status, e, tc.want)
		}
	}
	// Code reuse: refused, and the tokens of its first use are revoked.
	code, v := newCode()
	resp, tok := k.postForm(PathToken, base(code, v))
	if resp.StatusCode != http.StatusOK {
		t.Fatal(tok)
	}
	if _, e := exchange(base(code, v)); e != "invalid_grant" {
		t.Fatalf("code reuse: %s", e)
	}
	if _, err := k.srv.Verify(str(tok, "access_token")); err == nil {
		t.Error("the tokens of a reused code still pass")
	}
	// An expired code.
	code, v = newCode()
	k.clock.Advance(CodeLife)
	if _, e := exchange(base(code, v)); e != "invalid_grant" {
		t.Errorf("expired code: %s", e)
	}
	// A repeated parameter, a JSON body, a GET.
	req, _ := http.NewRequest(http.MethodPost, k.ts.URL+PathToken, strings.NewReader("grant_type=authorization_code&code=a&code=b"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, body := k.do(req); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "invalid_request") {
		t.Errorf("repeated code: %d %s", resp.StatusCode, body)
	}
	req, _ = http.NewRequest(http.MethodPost, k.ts.URL+PathToken, strings.NewReader(`{"grant_type":"authorization_code"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, _ := k.do(req); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("JSON token request: %d", resp.StatusCode)
	}
	if resp, _ := k.get(PathToken); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET token: %d", resp.StatusCode)
	}
	// Refresh: another client's refresh token, a scope never granted.
	tok = k.signIn(client, redirect, "read", []string{"read"})
	for _, f := range []url.Values{
		{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")}, "client_id": {other}},
		{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")}, "client_id": {client}, "scope": {"read power"}},
		{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "access_token")}, "client_id": {client}},
	} {
		if status, e := exchange(f); status == http.StatusOK || (e != "invalid_grant" && e != "invalid_scope") {
			t.Errorf("refresh %v: %d %s", f, status, e)
		}
	}
}

func TestConsentForgeries(t *testing.T) {
	k := newKit(t)
	redirect := "https://client.example/cb"
	client := k.register(redirect)
	_, ch := pkce()
	c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil)
	pin := k.screen.pin(t)
	// The page: no framing, no script, forms only here and to the client.
	csp := c.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self' https://client.example", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if c.cookie == nil || !c.cookie.Secure || !c.cookie.HttpOnly || c.cookie.SameSite != http.SameSiteStrictMode || c.cookie.Path != "/" {
		t.Fatalf("consent cookie %+v", c.cookie)
	}
	if !strings.Contains(c.body, "unverified") || !strings.Contains(c.body, redirect) {
		t.Error("the page does not mark the name unverified or show the redirect")
	}
	for _, tc := range []struct {
		name string
		mod  func(url.Values, *http.Request)
	}{
		{"foreign origin", func(_ url.Values, r *http.Request) { r.Header.Set("Origin", "https://evil.example") }},
		{"no origin", func(_ url.Values, r *http.Request) { r.Header.Del("Origin") }},
		{"null origin", func(_ url.Values, r *http.Request) { r.Header.Set("Origin", "null") }},
		{"no csrf", func(f url.Values, _ *http.Request) { f.Del("csrf") }},
		{"wrong csrf", func(f url.Values, _ *http.Request) { f.Set("csrf", "x") }},
		{"another browser", func(_ url.Values, r *http.Request) {
			r.Header.Del("Cookie")
			r.AddCookie(&http.Cookie{Name: consentCookie, Value: "other"})
		}},
		{"no cookie", func(_ url.Values, r *http.Request) { r.Header.Del("Cookie") }},
		{"another request", func(f url.Values, _ *http.Request) { f.Set("request", "x") }},
	} {
		resp, body := k.answer(c, pin, []string{"read"}, tc.mod)
		if resp.StatusCode == http.StatusSeeOther || resp.Header.Get("Location") != "" || strings.Contains(body, "code=") {
			t.Errorf("%s: %d Location=%q", tc.name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// A second authorization from another browser while this one waits.
	c2 := k.authorize(k.authQuery(client, redirect, ch, "read"), nil)
	if c2.status != http.StatusTooManyRequests || c2.request != "" {
		t.Errorf("a second pending request: %d", c2.status)
	}
	// The same browser reloading gets the same request.
	c3 := k.authorize(k.authQuery(client, redirect, ch, "read"), c.cookie)
	if c3.request != c.request {
		t.Errorf("a reload made another request")
	}
	// Granting nothing is asked again; the real answer still works.
	if resp, body := k.answer(c, pin, nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "at least one") {
		t.Errorf("no scope ticked: %d", resp.StatusCode)
	}
	q := k.callback(k.answer(c, pin, []string{"read", "power"})) // power was not asked: not granted
	resp, tok := k.postForm(PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "client_id": {client}, "code_verifier": {"x"}})
	if resp.StatusCode == http.StatusOK {
		t.Fatal("a bad verifier got tokens", tok)
	}
	// The answered request is over.
	if resp, _ := k.answer(c, pin, []string{"read"}); resp.StatusCode == http.StatusSeeOther {
		t.Error("an answered request answered twice")
	}
}

func TestPINGuessing(t *testing.T) {
	k := newKit(t)
	redirect := "https://client.example/cb"
	client := k.register(redirect)
	_, ch := pkce()
	wrong := func(pin string) string {
		if pin == "000000" {
			return "111111"
		}
		return "000000"
	}
	// 5 wrong PINs end a request, with access_denied to the client.
	c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil)
	pin := k.screen.pin(t)
	for i := 1; i < PINTries; i++ {
		resp, body := k.answer(c, wrong(pin), []string{"read"})
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "tries left") {
			t.Fatalf("wrong PIN %d: %d", i, resp.StatusCode)
		}
	}
	q := k.callback(k.answer(c, wrong(pin), []string{"read"}))
	if q.Get("error") != "access_denied" || q.Get("code") != "" {
		t.Fatalf("5th wrong PIN: %v", q)
	}
	if resp, _ := k.answer(c, pin, []string{"read"}); resp.StatusCode == http.StatusSeeOther {
		t.Fatal("the right PIN after the request died still signs in")
	}
	// The next request waits 30 s.
	if c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil); c.status != http.StatusTooManyRequests {
		t.Fatalf("a new request at once after a failed one: %d", c.status)
	}
	// 20 wrong PINs in a day lock sign-in until `cabinet clients unlock`.
	for n := PINTries; n < WrongPINsPerDay; {
		k.clock.Advance(RequestGap)
		c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil)
		if c.status != http.StatusOK {
			t.Fatalf("request after %d wrong PINs: %d %s", n, c.status, c.body)
		}
		pin := k.screen.pin(t)
		for i := 0; i < PINTries && n < WrongPINsPerDay; i++ {
			k.answer(c, wrong(pin), []string{"read"})
			n++
		}
		k.srv.end(k.srv.pending)
	}
	k.clock.Advance(RequestGap)
	c = k.authorize(k.authQuery(client, redirect, ch, "read"), nil)
	if c.status != http.StatusForbidden || !strings.Contains(c.body, "clients unlock") {
		t.Fatalf("after 20 wrong PINs: %d", c.status)
	}
	// Still locked the next day.
	k.clock.Advance(24 * time.Hour)
	if c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil); c.status != http.StatusForbidden {
		t.Fatalf("the next day: %d", c.status)
	}
	if was, err := Unlock(k.state, k.clock.Now()); !was || err != nil {
		t.Fatal(was, err)
	}
	// (The registration, unused for a day, is gone: the app registers again.)
	tok := k.signIn(k.register(redirect), redirect, "read", []string{"read"})
	if str(tok, "access_token") == "" {
		t.Fatal("no sign-in after unlock")
	}
}

func TestRequestLimits(t *testing.T) {
	k := newKit(t)
	redirect := "https://client.example/cb"
	client := k.register(redirect)
	_, ch := pkce()
	// A request expires after 3 minutes; the PIN is shown again every 10 s
	// while it lives.
	c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil)
	pin := k.screen.pin(t)
	for i := 0; i < 3; i++ {
		k.clock.Advance(PINRepeat)
		if got := k.screen.pin(t); got != pin {
			t.Fatalf("PIN shown again changed: %s then %s", pin, got)
		}
	}
	k.clock.Advance(RequestLife)
	if resp, _ := k.answer(c, pin, []string{"read"}); resp.StatusCode == http.StatusSeeOther {
		t.Fatal("an expired request signed in")
	}
	// Deny sends access_denied.
	k.clock.Advance(RequestGap)
	c = k.authorize(k.authQuery(client, redirect, ch, "read"), nil)
	k.screen.pin(t)
	q := k.callback(k.answer(c, "", nil, func(f url.Values, _ *http.Request) { f.Set("action", "deny") }))
	if q.Get("error") != "access_denied" {
		t.Fatalf("deny: %v", q)
	}
	// 20 requests a day.
	for i := 2; i < RequestsPerDay; i++ {
		k.clock.Advance(RequestGap)
		if c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil); c.status != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, c.status)
		}
		k.srv.end(k.srv.pending)
	}
	k.clock.Advance(RequestGap)
	if c := k.authorize(k.authQuery(client, redirect, ch, "read"), nil); c.status != http.StatusTooManyRequests {
		t.Fatalf("request %d in a day: %d", RequestsPerDay+1, c.status)
	}
}
