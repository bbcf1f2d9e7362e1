package httpauth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// stubOAuth accepts one access token with read only.
type stubOAuth struct{}

func (stubOAuth) Routes(mux *http.ServeMux) {
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })
}
func (stubOAuth) Verify(tok string) (Caller, error) {
	if tok == "cabinet_at_good" {
		return Caller{Name: "oauth:c", Scopes: []string{ScopeRead}, OAuth: true}, nil
	}
	return Caller{}, io.EOF
}
func (stubOAuth) ResourceMetadataURL() string {
	return "https://cabinet.example/.well-known/oauth-protected-resource/mcp"
}

func oauthGuard(t testing.TB) (http.Handler, *int) {
	calls := new(int)
	g := New(Options{TokenPath: t.TempDir() + "/token", OAuth: stubOAuth{},
		ToolScope: func(tool string) string { return map[string]string{"status": ScopeRead, "pause": ScopePlay}[tool] }})
	return g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*calls++
		b, _ := io.ReadAll(r.Body) // the body the scope check read is still there
		w.Write(b)
	})), calls
}

func TestOAuthScopeChallenge(t *testing.T) {
	h, calls := oauthGuard(t)
	for _, tc := range []struct {
		name, token, body, remote string
		status                    int
		header                    string
	}{
		{"in scope", "cabinet_at_good", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status"}}`, "127.0.0.1:1", 200, ""},
		{"not a tool call", "cabinet_at_good", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "127.0.0.1:1", 200, ""},
		{"out of scope", "cabinet_at_good", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pause"}}`, "127.0.0.1:1", 403,
			`Bearer error="insufficient_scope", scope="read play", resource_metadata="https://cabinet.example/.well-known/oauth-protected-resource/mcp"`},
		{"out of scope in a batch", "cabinet_at_good", `[{"method":"tools/call","params":{"name":"status"}},{"method":"tools/call","params":{"name":"pause"}}]`, "127.0.0.1:1", 403, `error="insufficient_scope"`},
		{"not JSON", "cabinet_at_good", `{{{`, "127.0.0.1:1", 200, ""},
		{"bad token", "cabinet_at_bad", `{}`, "127.0.0.1:1", 401, `Bearer resource_metadata="https://cabinet.example/.well-known/oauth-protected-resource/mcp", scope="read play library", error="invalid_token"`},
		{"no token", "", `{}`, "127.0.0.1:1", 401, `Bearer resource_metadata=`},
		{"no token from the LAN over plain HTTP", "", `{}`, "192.168.1.9:1", 401, `Bearer realm="cabinet"`},
	} {
		before := *calls
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(tc.body))
		r.RemoteAddr = tc.remote
		if tc.token != "" {
			r.Header.Set("Authorization", "Bearer "+tc.token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.status || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), tc.header) && !strings.Contains(w.Header().Get("WWW-Authenticate"), tc.header) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, w.Code, w.Header().Get("WWW-Authenticate"), tc.status, tc.header)
		}
		if passed := *calls > before; passed != (tc.status == 200) {
			t.Errorf("%s: passed to MCP = %v", tc.name, passed)
		}
		if tc.status == 200 && w.Body.String() != tc.body {
			t.Errorf("%s: MCP got %q", tc.name, w.Body.String())
		}
	}
	// OAuth's paths are served behind the Host check.
	r := httptest.NewRequest(http.MethodGet, "http://evil.example/.well-known/oauth-protected-resource/mcp", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host on the metadata: %d", w.Code)
	}
}

// Without OAuth its paths answer a JSON 404 (clients give up on HTML).
func TestOAuthOffJSON404(t *testing.T) {
	h := New(Options{TokenPath: t.TempDir() + "/token"}).Wrap(http.NotFoundHandler())
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/oauth/token"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://localhost"+p, nil))
		if w.Code != 404 || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s", p, w.Code, w.Header().Get("Content-Type"))
		}
	}
}

func FuzzOAuthScopeCheck(f *testing.F) {
	f.Add(`{"method":"tools/call","params":{"name":"pause"}}`)
	f.Add(`[{"method":"tools/call","params":{"name":"status"}}]`)
	f.Add(`{"method":"tools/call","params":{"name":"` + "\u202e" + `"}}`)
	h, _ := oauthGuard(f)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:1"
		r.Header.Set("Authorization", "Bearer cabinet_at_good")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case 200:
			if w.Body.String() != body {
				t.Fatalf("the body changed on its way: %q", w.Body.String())
			}
		case 403:
			if v := w.Header().Get("WWW-Authenticate"); strings.ContainsAny(v, "\r\n") || !strings.Contains(v, "insufficient_scope") {
				t.Fatalf("challenge %q", v)
			}
		default:
			t.Fatalf("%d for %q", w.Code, body)
		}
	})
}
