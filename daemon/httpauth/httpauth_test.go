package httpauth

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	var reasons []string
	g := New(Options{TokenPath: path, AllowedHosts: []string{"cabinet.lan"}, AllowedOrigins: []string{"https://ha.lan"}, MaxBody: 100,
		OnDenied: func(r *http.Request, status int, reason string) { reasons = append(reasons, reason) }})
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		w.Write(b)
	})
	srv := httptest.NewServer(g.Wrap(mcp))
	defer srv.Close()

	do := func(method, path, host, auth, origin string, body []byte) int {
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
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
		{"oversized body", "POST", "/mcp", "", "Bearer " + tok, "", bytes.Repeat([]byte("x"), 1000), 413},
	}
	for _, tt := range tests {
		if got := do(tt.method, tt.path, tt.host, tt.auth, tt.origin, tt.body); got != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.want)
		}
	}
	for _, r := range reasons {
		if strings.Contains(r, tok) {
			t.Errorf("a refusal reason shows the token: %s", r)
		}
	}
	// A thousand bad tokens: all refused, and the good one still works.
	for i := 0; i < 1000; i++ {
		if got := do("POST", "/mcp", "", "Bearer bad-"+strings.Repeat("y", 40), "", nil); got != 401 {
			t.Fatalf("bad token %d: %d", i, got)
		}
	}
	if got := do("POST", "/mcp", "", "Bearer "+tok, "", []byte("{}")); got != 200 {
		t.Errorf("after the storm: %d", got)
	}
	// A new token takes effect without a restart.
	tok2, _ := NewToken(path)
	if do("POST", "/mcp", "", "Bearer "+tok, "", nil) != 401 || do("POST", "/mcp", "", "Bearer "+tok2, "", nil) != 200 {
		t.Error("token rotation not picked up")
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
