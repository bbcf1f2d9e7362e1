package romm

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestGenericRequestPaths(t *testing.T) {
	tests := []struct {
		path     string
		ok       bool
		wantPath string
	}{
		{"/api/platforms", true, "/api/platforms"},
		{"/api/heartbeat", true, "/api/heartbeat"},
		{"/api/roms/12/simple", true, "/api/roms/12/simple"},
		{"/api/collections/virtual/eyJuYW1lIjogIngifQ==", true, "/api/collections/virtual/eyJuYW1lIjogIngifQ=="},
		{"/api/roms/by-hash", true, "/api/roms/by-hash"},
		{"/api/search/roms%20x", true, "/api/search/roms x"},
		{"/api/", false, ""},
		{"/apix/roms", false, ""},
		{"/openapi.json", false, ""},
		{"api/roms", false, ""},
		{"/api/../admin", false, ""},
		{"/api/%2e%2e/admin", false, ""},
		{"/api/roms/%2F..%2Fx", false, ""},
		{"/api//roms", false, ""},
		{"/api/roms/./1", false, ""},
		{"/api/roms?limit=1", false, ""},
		{"/api/roms#x", false, ""},
		{"/api/roms\\x", false, ""},
		{"/api/ro ms", false, ""},
		{"/api/roms/%00", false, ""},
		{"/api/roms/%zz", false, ""},
		{"/api/" + strings.Repeat("a", maxPathLen), false, ""},
	}
	for _, tt := range tests {
		r, err := genericRequest(tt.path, nil)
		if tt.ok != (err == nil) {
			t.Errorf("genericRequest(%q) error = %v, want ok %v", tt.path, err, tt.ok)
			continue
		}
		if tt.ok && r.path != tt.wantPath {
			t.Errorf("genericRequest(%q) path = %q, want %q", tt.path, r.path, tt.wantPath)
		}
		if !tt.ok && !strings.Contains(err.Error(), "/openapi.json") {
			t.Errorf("refusal %q does not say where paths come from", err)
		}
	}
	many := url.Values{}
	for i := 0; i <= maxQueryKeys; i++ {
		many.Set("k"+strings.Repeat("x", i), "v")
	}
	if _, err := genericRequest("/api/roms", many); err == nil {
		t.Errorf("a query with %d keys was accepted", len(many))
	}
	if _, err := genericRequest("/api/roms", url.Values{"search_term": {strings.Repeat("a", maxQueryLen)}}); err == nil {
		t.Errorf("a %d-byte query was accepted", maxQueryLen)
	}
}

func TestGet(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	ctx := context.Background()

	status, body, err := c.Get(ctx, "/api/roms", url.Values{"search_term": {"zelda"}, "with_char_index": {"true"}})
	if err != nil || status != 200 || !strings.Contains(string(body), "Super Metroid") {
		t.Fatalf("Get /api/roms = %d, %.60s, %v", status, body, err)
	}
	want := "search_term=zelda&with_char_index=true&with_filter_values=false&with_rom_id_index=false&with_total=true"
	if got := f.last("/api/roms").URL.RawQuery; got != want {
		t.Errorf("query\n got %s\nwant %s (cheap flags added, the caller's choice kept)", got, want)
	}
	if got := f.last("/api/roms").Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Get did not send the token")
	}

	status, body, err = c.Get(ctx, "/api/nothing/here", nil)
	if err != nil || status != 404 || !strings.Contains(string(body), "Not Found") {
		t.Errorf("Get 404 = %d, %s, %v; want the status and RomM's JSON", status, body, err)
	}

	if _, _, err := c.Get(ctx, "/api/heartbeat", nil); err != nil {
		t.Errorf("Get heartbeat: %v", err)
	}
	if got := f.last("/api/heartbeat").Header.Get("Authorization"); got != "" {
		t.Errorf("Get /api/heartbeat sent the token; the route is open")
	}

	f.route("/api/roms/1/content/x.zip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		_, _ = io.WriteString(w, "PK\x03\x04")
	})
	_, _, err = c.Get(ctx, "/api/roms/1/content/x.zip", nil)
	mustErr(t, err, ErrNotRomM)

	f.route("/api/text", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "plain words") })
	_, _, err = c.Get(ctx, "/api/text", nil)
	mustErr(t, err, ErrNotRomM)

	f.route("/api/boom", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		_, _ = io.WriteString(w, "Internal Server Error")
	})
	_, _, err = c.Get(ctx, "/api/boom", nil)
	if err == nil || !strings.Contains(err.Error(), "RomM failed on GET /api/boom (500)") {
		t.Errorf("Get 500 with a text body = %v", err)
	}
}

func TestOpenAPI(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	doc, err := c.OpenAPI(context.Background())
	if err != nil || !strings.Contains(string(doc), `"openapi"`) {
		t.Fatalf("OpenAPI = %.80s, %v", doc, err)
	}
	for _, body := range []string{`[1]`, `"x"`, `{"a":`} {
		f.route("/openapi.json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		})
		_, err := c.OpenAPI(context.Background())
		mustErr(t, err, ErrNotRomM)
	}
	f.route("/openapi.json", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 404, map[string]any{"detail": "Not Found"}) })
	_, err = c.OpenAPI(context.Background())
	mustErr(t, err, ErrNotFound)
}
