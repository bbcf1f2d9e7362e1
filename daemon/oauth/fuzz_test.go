package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

func FuzzCheckRedirect(f *testing.F) {
	for _, s := range []string{"https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:1/cb", "http://localhost/cb", "cursor://x/y",
		"com.example:/cb", "http://[::1]:9/cb", "javascript:alert(1)", "https://x#y", "http://evil/cb", "HTTPS://X/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		class, err := CheckRedirect(raw)
		if err != nil {
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || u.Fragment != "" || strings.ContainsAny(raw, "# \t\r\n") || u.User != nil || len(raw) > maxRedirectLen {
			t.Fatalf("accepted %q (%s)", raw, class)
		}
		switch class {
		case RedirectHTTPS:
			if !strings.EqualFold(u.Scheme, "https") || u.Hostname() == "" {
				t.Fatalf("https class for %q", raw)
			}
		case RedirectLoopback:
			if !loopbackHost(u.Hostname()) {
				t.Fatalf("loopback class for %q", raw)
			}
		case RedirectApp:
			if notAppSchemes[strings.ToLower(u.Scheme)] {
				t.Fatalf("app class for %q", raw)
			}
		default:
			t.Fatalf("class %q", class)
		}
		// A request's redirect matches a registered one only when both are
		// the same, or loopback ones differing by port.
		if !redirectMatches([]string{raw}, raw) {
			t.Fatalf("%q does not match itself", raw)
		}
	})
}

func FuzzParseRegistration(f *testing.F) {
	f.Add([]byte(`{"client_name":"Cursor","redirect_uris":["cursor://a/b","http://localhost:8787/callback","http://evil/x"]}`))
	f.Add([]byte(`{"redirect_uris":[],"grant_types":["x"]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		reg, err := parseRegistration(b)
		if err != nil {
			return
		}
		if len(reg.RedirectURIs) == 0 || len(reg.RedirectURIs) > maxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", len(reg.RedirectURIs))
		}
		good, _ := goodRedirects(reg.RedirectURIs)
		for _, g := range good {
			if _, err := CheckRedirect(g); err != nil {
				t.Fatalf("kept %q: %v", g, err)
			}
		}
	})
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"version":1,"clients":[{"id":"a","name":"n","kind":"registered","redirect_uris":["https://x/cb"],"created":"2026-12-06T10:00:00Z"}],"grants":[],"limits":{}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`nope`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseState(b)
		if err != nil {
			return
		}
		if st.Version != stateVersion {
			t.Fatalf("version %d accepted", st.Version)
		}
		st.prune(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC))
		st.bound()
		if len(st.Grants) > maxGrants {
			t.Fatalf("%d grants after bound", len(st.Grants))
		}
		if _, err := json.Marshal(st); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzEndpoints: any form posted to the token, revocation and consent
// endpoints, and any query of the authorization endpoint, is answered
// (never a panic), and never with a token or a code.
func FuzzEndpoints(f *testing.F) {
	f.Add("/oauth/token", "grant_type=authorization_code&code=x&code_verifier=y&client_id=z")
	f.Add("/oauth/token", "grant_type=refresh_token&refresh_token=cabinet_rt_x")
	f.Add("/oauth/revoke", "token=x&token_type_hint=access_token")
	f.Add("/oauth/authorize", "request=a&csrf=b&pin=123456&action=approve")
	f.Add("/oauth/authorize?", "response_type=code&client_id=x&redirect_uri=https://x/cb&code_challenge=abc&code_challenge_method=S256")
	dir := f.TempDir()
	srv, err := New(Config{PublicURL: "https://cabinet.example", StatePath: dir + "/oauth.json", Clock: clock.NewFake(time.Unix(1e9, 0)), Log: zerolog.Nop()})
	if err != nil {
		f.Fatal(err)
	}
	mux := http.NewServeMux()
	srv.Routes(mux)
	f.Fuzz(func(t *testing.T, path, body string) {
		if !utf8.ValidString(path) || len(body) > 1<<16 {
			return
		}
		var r *http.Request
		if strings.HasSuffix(path, "?") {
			r = httptest.NewRequest(http.MethodGet, "https://cabinet.example/oauth/authorize", nil)
			r.URL.RawQuery = body
		} else {
			u := &url.URL{Path: path}
			if !strings.HasPrefix(u.Path, "/") {
				return
			}
			r = httptest.NewRequest(http.MethodPost, "https://cabinet.example/", strings.NewReader(body))
			r.URL.Path = u.Path
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Origin", "https://cabinet.example")
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		out := w.Body.String()
		if w.Code == http.StatusOK && strings.Contains(out, "access_token") || strings.Contains(w.Header().Get("Location"), "code=") {
			t.Fatalf("%s %q issued something: %d %s", path, body, w.Code, out)
		}
	})
}
