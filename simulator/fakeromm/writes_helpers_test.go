package fakeromm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// t0 is where the manual clocks of the write-side tests start.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// writeServer is a 5.3.1 fake whose token holds WriteScopes, on a fake clock.
func writeServer(t *testing.T) (*Server, string, *clock.Fake) {
	t.Helper()
	s, base := newServer(t, Options{Scopes: WriteScopes()})
	clk := clock.NewFake(t0)
	s.SetClock(clk.Now)
	return s, base, clk
}

// send sends method base+path with body as JSON (a string is sent as is;
// nil sends none) and returns the status, the headers and the body.
func send(t testing.TB, method, base, path, token string, body any) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, out
}

// sendJSON is send that expects want and decodes the answer into v.
func sendJSON(t testing.TB, method, base, path, token string, body any, want int, v any) {
	t.Helper()
	code, _, out := send(t, method, base, path, token, body)
	if code != want {
		t.Fatalf("%s %s: status %d, want %d; body %.400s", method, path, code, want, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("%s %s: %v; body %.400s", method, path, err, out)
		}
	}
}

// detail is an HTTPException body with a string detail.
func detail(t testing.TB, body []byte) string {
	t.Helper()
	var d struct {
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("not a detail body: %v: %.300s", err, body)
	}
	return d.Detail
}

// wantDetail sends and checks the status and the string detail.
func wantDetail(t testing.TB, method, base, path, token string, body any, status int, want string) {
	t.Helper()
	code, _, out := send(t, method, base, path, token, body)
	if code != status {
		t.Fatalf("%s %s: status %d, want %d; body %.400s", method, path, code, status, out)
	}
	if got := detail(t, out); got != want {
		t.Fatalf("%s %s: detail %q, want %q", method, path, got, want)
	}
}

// locs are the locations of a 422's detail items, "body.sessions.0".
func locs(t testing.TB, body []byte) []string {
	t.Helper()
	var v struct {
		Detail []validationError `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not a 422 body: %v: %.300s", err, body)
	}
	var out []string
	for _, d := range v.Detail {
		parts := make([]string, 0, len(d.Loc))
		for _, l := range d.Loc {
			b, _ := json.Marshal(l)
			parts = append(parts, strings.Trim(string(b), `"`))
		}
		out = append(out, strings.Join(parts, "."))
	}
	return out
}

func decode(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode: %v: %.300s", err, body)
	}
}
