package chromium

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"image/png"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testTimeout bounds each browser test's calls; the package's own
// per-call default (30s) bounds each one inside it.
const testTimeout = 90 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func portOf(t testing.TB, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// closedPort is a loopback URL prefix nobody listens on (port 1 will not
// do: Chromium refuses it as an unsafe port).
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func evalString(t *testing.T, ctx context.Context, b *Browser, js string) string {
	t.Helper()
	raw, err := b.Eval(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("eval %s: got %s, want a string", js, raw)
	}
	return s
}

func consentURL(origin, redirect, csp string) string {
	q := url.Values{"redirect": {redirect}}
	if csp != "" {
		q.Set("csp", csp)
	}
	return origin + "/consent?" + q.Encode()
}

func navigate(t *testing.T, ctx context.Context, b *Browser, u string) Response {
	t.Helper()
	resp, err := b.Navigate(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusOK || resp.NetError != "" {
		t.Fatalf("navigate %s: got status %d %q, want 200", u, resp.Status, resp.NetError)
	}
	return resp
}

func TestConsentFlow(t *testing.T) {
	pki := newPKI(t, "cabinet.test")
	cs, _, origin := startConsent(t, pki)
	b := Launch(t, Options{TrustCerts: []*x509.Certificate{pki.Leaf}, Hosts: []string{"cabinet.test"}})
	t.Logf("chromium launched in %v", b.Started.Round(time.Millisecond))
	ctx := testContext(t)

	t.Run("page", func(t *testing.T) {
		resp := navigate(t, ctx, b, consentURL(origin, origin+"/done", ""))
		if resp.SecurityState != "secure" {
			t.Errorf("security state %q, want secure (the test certificate trusted)", resp.SecurityState)
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != consentCSP {
			t.Errorf("CSP header %q, want %q", got, consentCSP)
		}
		if got := evalString(t, ctx, b, "String(isSecureContext) + ' ' + document.cookie"); got != "true visible=1" {
			t.Errorf("secure context and document.cookie: got %q, want %q (the HttpOnly cookie hidden)", got, "true visible=1")
		}
		if got := evalString(t, ctx, b, "document.title"); got != "Allow access?" {
			t.Errorf("title %q: the inline script ran despite default-src 'none'", got)
		}
		if _, err := b.WaitConsole(ctx, "Executing inline script violates"); err != nil {
			t.Error(err)
		}
		cookies, err := b.Cookies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(cookies, func(c Cookie) bool { return c.Name == "session" })
		if i < 0 {
			t.Fatalf("no session cookie in %+v", cookies)
		}
		if c := cookies[i]; c.Value != "s3cret" || !c.Secure || !c.HTTPOnly || c.SameSite != "Strict" || c.Path != "/" || c.Domain != "cabinet.test" {
			t.Errorf("session cookie %+v, want s3cret, Secure, HttpOnly, SameSite Strict, path /, domain cabinet.test", c)
		}
	})

	t.Run("invalid form is held back", func(t *testing.T) {
		navigate(t, ctx, b, consentURL(origin, origin+"/done", ""))
		before := cs.postCount()
		_, err := b.Submit(ctx, "#approve")
		if err == nil || !strings.Contains(err.Error(), "pin:") {
			t.Fatalf("submit with no PIN: got %v, want the browser's validation error for pin", err)
		}
		if n := cs.postCount() - before; n != 0 {
			t.Fatalf("%d POSTs arrived, want none", n)
		}
	})

	t.Run("approve", func(t *testing.T) {
		navigate(t, ctx, b, consentURL(origin, origin+"/done", ""))
		if err := b.Fill(ctx, "#pin", "1234567"); err != nil {
			t.Fatal(err)
		}
		if got := evalString(t, ctx, b, "document.querySelector('#pin').value"); got != "123456" {
			t.Errorf("PIN field holds %q, want 123456 (maxlength 6)", got)
		}
		if err := b.Click(ctx, "#play"); err != nil {
			t.Fatal(err)
		}
		resp, err := b.Submit(ctx, "#approve")
		if err != nil {
			t.Fatal(err)
		}
		if want := origin + "/done?code=c0de"; resp.URL != want || resp.Status != http.StatusOK {
			t.Errorf("after submit: %s (status %d), want %s (200)", resp.URL, resp.Status, want)
		}
		if want := []string{origin + "/consent"}; !slices.Equal(resp.Redirects, want) {
			t.Errorf("redirects %q, want %q", resp.Redirects, want)
		}
		p := cs.lastPost(t)
		if p.Origin != origin {
			t.Errorf("POST Origin %q, want %q", p.Origin, origin)
		}
		if !strings.Contains(p.Cookie, "session=s3cret") {
			t.Errorf("POST Cookie %q, want the SameSite=Strict session cookie", p.Cookie)
		}
		if got, want := p.Form["scope"], []string{"read", "play"}; !slices.Equal(got, want) {
			t.Errorf("scopes %q, want %q", got, want)
		}
		if p.Form.Get("pin") != "123456" || p.Form.Get("action") != "approve" {
			t.Errorf("form %v, want pin 123456 and action approve", p.Form)
		}
		path := filepath.Join(t.TempDir(), "done.png")
		if err := b.Screenshot(ctx, path); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path, 0, 0)
	})

	t.Run("form-action blocks a cross-origin redirect", func(t *testing.T) {
		// Chromium applies form-action to the redirects after a form
		// POST: a consent page with form-action 'self' cannot 303 to a
		// client's callback on another origin.
		callback := closedPort(t) + "/callback"
		navigate(t, ctx, b, consentURL(origin, callback, ""))
		before := cs.postCount()
		if err := b.Fill(ctx, "#pin", "123456"); err != nil {
			t.Fatal(err)
		}
		resp, err := b.Submit(ctx, "#approve")
		if err != nil {
			t.Fatal(err)
		}
		if cs.postCount() != before+1 {
			t.Fatalf("the POST did not arrive")
		}
		if resp.NetError != "net::ERR_ABORTED" || strings.HasPrefix(resp.URL, callback) {
			t.Errorf("got %+v, want the redirect to %s aborted", resp, callback)
		}
		if _, err := b.WaitConsole(ctx, "form-action"); err != nil {
			t.Error(err)
		}
	})

	// The callback's origin in form-action lets the redirect through.
	loose := strings.Replace(consentCSP, "form-action 'self'", "form-action 'self' http://127.0.0.1:*", 1)

	t.Run("callback nobody serves", func(t *testing.T) {
		callback := closedPort(t) + "/callback"
		navigate(t, ctx, b, consentURL(origin, callback, loose))
		if err := b.Fill(ctx, "#pin", "654321"); err != nil {
			t.Fatal(err)
		}
		resp, err := b.Submit(ctx, "#deny")
		if err != nil {
			t.Fatal(err)
		}
		if want := callback + "?error=access_denied"; resp.URL != want || resp.NetError != "net::ERR_CONNECTION_REFUSED" {
			t.Errorf("got %s (%q), want %s refused", resp.URL, resp.NetError, want)
		}
	})

	t.Run("loopback callback server", func(t *testing.T) {
		var mu sync.Mutex
		var codes []string
		cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			codes = append(codes, r.URL.Query().Get("code"))
			mu.Unlock()
			w.Write([]byte("ok"))
		}))
		defer cb.Close()
		navigate(t, ctx, b, consentURL(origin, cb.URL+"/callback", loose))
		if err := b.Fill(ctx, "#pin", "111111"); err != nil {
			t.Fatal(err)
		}
		resp, err := b.Submit(ctx, "#approve")
		if err != nil {
			t.Fatal(err)
		}
		if want := cb.URL + "/callback?code=c0de"; resp.URL != want || resp.Status != http.StatusOK {
			t.Errorf("got %s (status %d %q), want %s (200)", resp.URL, resp.Status, resp.NetError, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(codes, []string{"c0de"}) {
			t.Errorf("callback got codes %q, want [c0de]", codes)
		}
	})
}

func TestPhoneViewport(t *testing.T) {
	cs := &consentServer{}
	srv := httptest.NewTLSServer(cs)
	defer srv.Close()
	b := Launch(t, Options{TrustCerts: []*x509.Certificate{srv.Certificate()}})
	ctx := testContext(t)
	if err := b.SetViewport(ctx, Phone); err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, b, consentURL(srv.URL, srv.URL+"/done", ""))
	if got := evalString(t, ctx, b, "innerWidth + 'x' + innerHeight + ' ' + matchMedia('(pointer: coarse)').matches"); got != "390x844 true" {
		t.Errorf("viewport %q, want 390x844 with a coarse pointer", got)
	}
	path := filepath.Join(t.TempDir(), "phone.png")
	if err := b.Screenshot(ctx, path); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 390, 844)
	if err := b.Fill(ctx, "#pin", "123456"); err != nil {
		t.Fatal(err)
	}
	resp, err := b.Submit(ctx, "#approve")
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/done?code=c0de"; resp.URL != want {
		t.Errorf("after submit on a phone: %s, want %s", resp.URL, want)
	}
}

// checkPNG fails t unless path is a PNG (of w×h pixels, when w > 0).
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", path, err)
	}
	if w > 0 && (cfg.Width != w || cfg.Height != h) {
		t.Errorf("screenshot is %dx%d, want %dx%d", cfg.Width, cfg.Height, w, h)
	}
}

func TestFailures(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	defer srv.Close()
	b := Launch(t, Options{Hosts: []string{"cabinet.test"}})
	ctx := testContext(t)

	t.Run("plain HTTP under a name", func(t *testing.T) {
		plain := httptest.NewServer(&consentServer{})
		defer plain.Close()
		u := consentURL("http://cabinet.test:"+portOf(t, plain.Listener.Addr().String()), "/done", "")
		resp := navigate(t, ctx, b, u)
		if resp.SecurityState != "insecure" {
			t.Errorf("security state %q, want insecure", resp.SecurityState)
		}
		if got := evalString(t, ctx, b, "String(isSecureContext)"); got != "false" {
			t.Errorf("isSecureContext %s over plain HTTP, want false", got)
		}
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		resp, err := b.Navigate(ctx, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if resp.NetError != "net::ERR_CERT_AUTHORITY_INVALID" || resp.Status != 0 || resp.URL != srv.URL+"/" {
			t.Errorf("got %+v, want %s/ failed with ERR_CERT_AUTHORITY_INVALID", resp, srv.URL)
		}
	})

	t.Run("no name resolves", func(t *testing.T) {
		resp, err := b.Navigate(ctx, "https://example.com/")
		if err != nil {
			t.Fatal(err)
		}
		if resp.NetError != "net::ERR_NAME_NOT_RESOLVED" {
			t.Errorf("got %+v, want ERR_NAME_NOT_RESOLVED", resp)
		}
	})

	t.Run("exception", func(t *testing.T) {
		_, err := b.Eval(ctx, "Promise.reject(new Error('nope'))")
		if err == nil || !strings.Contains(err.Error(), "nope") {
			t.Errorf("got %v, want the rejection", err)
		}
		raw, err := b.Eval(ctx, "undefined")
		if err != nil || string(raw) != "null" {
			t.Errorf("undefined: got %s, %v; want null", raw, err)
		}
	})

	t.Run("crash", func(t *testing.T) {
		b.cmd.Process.Kill()
		_, err := b.Eval(ctx, "1")
		if err == nil || !strings.Contains(err.Error(), "chromium exited") {
			t.Fatalf("after a crash: got %v, want chromium exited", err)
		}
		if _, err := b.Navigate(ctx, srv.URL); err == nil {
			t.Fatal("navigate after a crash: no error")
		}
	})
}

// BenchmarkLaunch measures a browser's start (to a page ready for
// commands) and stop: go test -run X -bench Launch -benchtime 5x.
func BenchmarkLaunch(b *testing.B) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		br := Launch(b, Options{})
		total += br.Started
		br.Close()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/launch")
}
