package fakeromm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// serve starts s on a loopback port for t.
func serve(t testing.TB, s *Server) string {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

func newServer(t testing.TB, o Options) (*Server, string) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, serve(t, s)
}

// get sends GET base+path with the token (when not "") and returns the
// status, the headers and the body.
func get(t testing.TB, base, path, token string) (int, http.Header, []byte) {
	t.Helper()
	return do(t, http.MethodGet, base+path, token, nil)
}

func do(t testing.TB, method, url, token string, hdr http.Header) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp.StatusCode, resp.Header, b
}

// getJSON is get that expects want and decodes the body into v.
func getJSON(t testing.TB, base, path, token string, want int, v any) {
	t.Helper()
	code, _, body := get(t, base, path, token)
	if code != want {
		t.Fatalf("GET %s: status %d, want %d; body %.300s", path, code, want, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v; body %.300s", path, err, body)
		}
	}
}

// page is the part of a ROM page the tests read.
type page struct {
	Items []struct {
		ID            int    `json:"id"`
		Name          string `json:"name"`
		FSName        string `json:"fs_name"`
		PlatformID    int    `json:"platform_id"`
		MissingFromFS bool   `json:"missing_from_fs"`
		CRCHash       string `json:"crc_hash"`
		Files         []struct {
			ID int `json:"id"`
		} `json:"files"`
	} `json:"items"`
	Total        *int            `json:"total"`
	Limit        int             `json:"limit"`
	Offset       int             `json:"offset"`
	CharIndex    map[string]int  `json:"char_index"`
	ROMIDIndex   []int           `json:"rom_id_index"`
	FilterValues json.RawMessage `json:"filter_values"`
}

func (p page) ids() []int {
	out := []int{}
	for _, it := range p.Items {
		out = append(out, it.ID)
	}
	return out
}
