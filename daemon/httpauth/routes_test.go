package httpauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/cfaccess"
)

// fakeOAuth accepts "oauth-read" (scope read) and "oauth-play" (play).
type fakeOAuth struct{}

func (fakeOAuth) Routes(*http.ServeMux) {}
func (fakeOAuth) Verify(tok string) (Caller, error) {
	switch tok {
	case "oauth-read":
		return Caller{Name: "oauth:app", Scopes: []string{ScopeRead}, OAuth: true}, nil
	case "oauth-play":
		return Caller{Name: "oauth:app", Scopes: []string{ScopePlay}, OAuth: true}, nil
	}
	return Caller{}, errors.New("unknown")
}
func (fakeOAuth) ResourceMetadataURL() string {
	return "https://cabinet.test/.well-known/oauth-protected-resource"
}

// fakeAccess accepts the assertion "good".
type fakeAccess struct{}

func (fakeAccess) Verify(_ context.Context, a string) (cfaccess.Identity, error) {
	if a == "good" {
		return cfaccess.Identity{Email: "kid@example.com"}, nil
	}
	return cfaccess.Identity{}, errors.New("bad assertion")
}
func (fakeAccess) Flooding() bool { return false }

// TestRoutes: a route beside /mcp is behind the same checks, for every
// kind of caller (the default token, a named one, OAuth, Cloudflare
// Access) with the scope it names; an open route needs no token but the
// Host check; a token in a query is refused everywhere, and never
// reaches the denial log.
func TestRoutes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	def, err := NewToken(path)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStore(path)
	reader, _, err := st.Create("marquee", []string{ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	player, _, err := st.Create("pad", []string{ScopePlay})
	if err != nil {
		t.Fatal(err)
	}
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := CallerFrom(r.Context())
		io.WriteString(w, "caller="+c.Name)
	})
	var mu sync.Mutex
	var denied []string
	g := New(Options{TokenPath: path, OAuth: fakeOAuth{}, Access: fakeAccess{}, AccessScopes: []string{ScopeRead},
		OnDenied: func(r *http.Request, status int, reason string) {
			mu.Lock()
			denied = append(denied, reason)
			mu.Unlock()
		},
		Routes: []Route{
			{Pattern: "GET /page", Handler: who, Open: true},
			{Pattern: "GET /feed", Handler: who}, // read by default
			{Pattern: "GET /power", Handler: who, Scope: ScopePower},
		}})
	srv := httptest.NewServer(g.Wrap(who))
	defer srv.Close()
	t.Cleanup(g.Flush)

	for _, tc := range []struct {
		name, method, path, host string
		header                   map[string]string
		want                     int
		body                     string
	}{
		{"open page", "GET", "/page", "", nil, 200, "caller="},
		{"open page, HEAD", "HEAD", "/page", "", nil, 200, ""},
		{"open page, foreign host", "GET", "/page", "evil.example", nil, 421, ""},
		{"open page, token in query", "GET", "/page?token=" + def, "", nil, 400, "in the Authorization header"},
		{"open page, POST", "POST", "/page", "", nil, 405, ""},
		{"feed, no token", "GET", "/feed", "", nil, 401, "bearer token"},
		{"feed, default token", "GET", "/feed", "", bearer(def), 200, "caller=default"},
		{"feed, read token", "GET", "/feed", "", bearer(reader), 200, "caller=marquee"},
		{"feed, play token", "GET", "/feed", "", bearer(player), 403, "needs a token with the scope read"},
		{"feed, OAuth read", "GET", "/feed", "", bearer("oauth-read"), 200, "caller=oauth:app"},
		{"feed, OAuth play", "GET", "/feed", "", bearer("oauth-play"), 403, "scope read"},
		{"feed, Access", "GET", "/feed", "", map[string]string{AccessHeader: "good"}, 200, "caller=cf-access:kid@example.com"},
		{"feed, Access refused", "GET", "/feed", "", map[string]string{AccessHeader: "forged"}, 403, ""},
		{"feed, token in query", "GET", "/feed?token=" + reader, "", nil, 400, "refused"},
		{"feed, access_token in query and header", "GET", "/feed?access_token=" + reader, "", bearer(reader), 400, "refused"},
		{"feed, other query", "GET", "/feed?game=nes%2Fx", "", bearer(reader), 200, "caller=marquee"},
		{"feed, foreign origin", "GET", "/feed", "", map[string]string{"Authorization": "Bearer " + reader, "Origin": "https://evil.example"}, 403, "origin"},
		{"feed, foreign host", "GET", "/feed", "evil.example", bearer(reader), 421, ""},
		{"feed, POST", "POST", "/feed", "", bearer(reader), 405, ""},
		{"power route, default token", "GET", "/power", "", bearer(def), 403, "scope power"},
		{"mcp, token in query", "POST", "/mcp?token=" + def, "", bearer(def), 400, "refused"},
		{"mcp, still served", "POST", "/mcp", "", bearer(def), 200, "caller=default"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s: %d %q, want %d and %q", tc.name, resp.StatusCode, b, tc.want, tc.body)
		}
		for _, tok := range []string{def, reader, player} {
			if strings.Contains(string(b), tok) {
				t.Errorf("%s: the answer holds a token: %q", tc.name, b)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, reason := range denied {
		for _, tok := range []string{def, reader, player} {
			if strings.Contains(reason, tok) {
				t.Errorf("a denial's reason holds a token: %q", reason)
			}
		}
	}
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
