package romm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestTokenNeverInErrors drives every failure path with a server that echoes the Authorization
// header wherever it can (details, HTML, redirect targets, JSON) and checks the error text, and
// every error it wraps, for the token.
func TestTokenNeverInErrors(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	otherURL, _ := url.Parse(other.URL)
	echo := func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })

	modes := map[string]http.HandlerFunc{
		"401 with detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 401, map[string]any{"detail": "bad token " + echo(r)})
		},
		"403 with detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 403, map[string]any{"detail": "no scope for " + echo(r)})
		},
		"422 list detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 422, map[string]any{"detail": []map[string]any{{"msg": echo(r)}}})
		},
		"500 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, map[string]any{"detail": "Traceback: Authorization: Bearer " + echo(r)})
		},
		"404 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 404, map[string]any{"detail": echo(r)})
		},
		"html": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html>"+echo(r)+"</html>")
		},
		"bad json": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"items": [`+echo(r))
		},
		"wrong types": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"items": []any{map[string]any{"id": echo(r)}}})
		},
		"cross-host redirect with the token in the path": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/"+echo(r)+"?t="+echo(r), http.StatusFound)
		},
		"cross-host redirect with the token as host": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://"+echo(r)+".example:"+otherURL.Port()+"/", http.StatusFound)
		},
		"redirect loop": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/api/roms?t="+echo(r), http.StatusFound)
		},
		"too large": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"x":"`+echo(r)+strings.Repeat("a", maxJSON)+`"}`)
		},
		"binary": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = io.WriteString(w, echo(r))
		},
		"slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		},
		"hang up": func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"+echo(r))
				conn.Close()
			}
		},
	}
	// Each call returns its result as text (Get hands back error answers with their status) and
	// its error; every mode must fail SearchROMs, and neither text may carry the token.
	calls := map[string]func(c *Client, mode string) (string, error){
		"SearchROMs": func(c *Client, _ string) (string, error) {
			p, err := c.SearchROMs(context.Background(), SearchQuery{Term: "x"})
			return fmt.Sprintf("%+v", p), err
		},
		"Get": func(c *Client, mode string) (string, error) {
			status, body, err := c.Get(context.Background(), "/api/roms", url.Values{"x": {"1"}})
			if err == nil && status >= 200 && status <= 299 && mode != "wrong types" {
				return "", fmt.Errorf("Get returned %d without an error", status)
			}
			return string(body), err
		},
	}
	for name, h := range modes {
		for cname, call := range calls {
			t.Run(name+"/"+cname, func(t *testing.T) {
				f, srv := newFake(t, "5.3.1")
				f.route("/api/roms", h)
				c := newClient(t, srv.URL)
				if name == "slow" {
					c = withShortTimeout(t, c, 200*time.Millisecond)
				}
				result, err := call(c, name)
				if strings.Contains(result, testToken) {
					t.Fatalf("result carries the token: %s", result)
				}
				if err == nil && cname == "SearchROMs" {
					t.Fatalf("no error from failure mode %q", name)
				}
				for _, s := range errorChain(err) {
					if strings.Contains(s, testToken) || strings.Contains(s, testToken[4:20]) {
						t.Fatalf("error text carries the token: %q", s)
					}
				}
			})
		}
	}
}

// TestTokenNeverInResults: a RomM that echoes the token into data does not get it into results.
func TestTokenNeverInResults(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/roms", func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		fmt.Fprintf(w, `{"items":[{"id":1,"platform_id":1,"name":"%s","summary":"%s","fs_name":"%s.sfc"}],"total":1}`, tok, tok, tok)
	})
	c := newClient(t, srv.URL)
	page, err := c.SearchROMs(context.Background(), SearchQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%+v", page); strings.Contains(s, testToken) {
		t.Fatalf("result carries the token: %s", s)
	}
	_, body, err := c.Get(context.Background(), "/api/roms", nil)
	if err != nil || bytes.Contains(body, []byte(testToken)) || !bytes.Contains(body, []byte("[token]")) {
		t.Fatalf("Get body %s, %v: want the token redacted", body, err)
	}
}
