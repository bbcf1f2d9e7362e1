package romm

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bigBody writes n bytes of a JSON array without holding them, optionally announcing the length.
func bigBody(n int, announce bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if announce {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		chunk := []byte(strings.Repeat("1,", 32<<10))
		_, _ = w.Write([]byte("["))
		for written := 1; written < n; written += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), n-written)]); err != nil {
				return // the client stopped reading: what the bound is for
			}
		}
	}
}

func TestBodyBound(t *testing.T) {
	for _, announce := range []bool{true, false} {
		t.Run("content-length "+strconv.FormatBool(announce), func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			f.route("/api/platforms", bigBody(20<<20, announce))
			c := newClient(t, srv.URL)
			_, err := c.Platforms(context.Background())
			mustErr(t, err, ErrTooLarge)
			if !strings.Contains(err.Error(), "16 MiB") || !strings.Contains(err.Error(), "GET /api/platforms") {
				t.Errorf("error %q does not name the bound and the route", err)
			}
		})
	}
}

func TestOpenAPIBound(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/openapi.json", bigBody(9<<20, false))
	c := newClient(t, srv.URL)
	_, err := c.OpenAPI(context.Background())
	mustErr(t, err, ErrTooLarge)
	if !strings.Contains(err.Error(), "8 MiB") {
		t.Errorf("error %q does not name the 8 MiB bound", err)
	}
	if got := f.last("/openapi.json").Header.Get("Authorization"); got != "" {
		t.Errorf("/openapi.json carried Authorization; it is open")
	}
}

func TestHTMLAnswer(t *testing.T) {
	html := func(status int, ct string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, "<!doctype html><html><body>RomM</body></html>")
		}
	}
	tests := []struct {
		name string
		path string
		h    http.HandlerFunc
		call func(*Client) error
	}{
		{"heartbeat is the web UI", "/api/heartbeat", html(200, "text/html"), func(c *Client) error { _, err := c.Version(context.Background()); return err }},
		{"no content type", "/api/heartbeat", html(200, ""), func(c *Client) error { _, err := c.Version(context.Background()); return err }},
		{"proxy error page", "/api/platforms", html(502, "text/html"), func(c *Client) error { _, err := c.Platforms(context.Background()); return err }},
		{"login page for roms", "/api/roms", html(200, "text/html; charset=utf-8"), func(c *Client) error {
			_, err := c.SearchROMs(context.Background(), SearchQuery{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			f.route(tt.path, tt.h)
			err := tt.call(newClient(t, srv.URL))
			mustErr(t, err, ErrNotRomM)
			if !strings.Contains(err.Error(), "not RomM's API: is cabinet.romm.url the RomM address") {
				t.Errorf("error %q does not say what to check", err)
			}
		})
	}
}

func TestNoHeartbeat(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL).Version(context.Background())
	mustErr(t, err, ErrNotFound)
}

func TestDeadline(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f, srv := newFake(t, "5.3.1")
	f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
		select { // hold the request until the client gives up or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := withShortTimeout(t, newClient(t, srv.URL), 100*time.Millisecond)
	start := time.Now()
	_, err := c.Platforms(context.Background())
	mustErr(t, err, context.DeadlineExceeded)
	if !strings.Contains(err.Error(), "did not answer GET /api/platforms in time") {
		t.Errorf("error %q does not say RomM was too slow", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %s, want about the 100ms timeout", d)
	}
}

func TestDeadlineWhileReadingTheBody(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f, srv := newFake(t, "5.3.1")
	f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "[")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := withShortTimeout(t, newClient(t, srv.URL), 100*time.Millisecond)
	_, err := c.Platforms(context.Background())
	mustErr(t, err, context.DeadlineExceeded)
}

func TestCancelled(t *testing.T) {
	_, srv := newFake(t, "5.3.1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newClient(t, srv.URL).Platforms(ctx)
	mustErr(t, err, context.Canceled)
}

func TestRedirects(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host got a request (Authorization %q)", r.Header.Get("Authorization"))
	}))
	t.Cleanup(other.Close)

	t.Run("same host is followed with the token", func(t *testing.T) {
		f, srv := newFake(t, "5.3.1")
		f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/api/platforms/", http.StatusTemporaryRedirect)
		})
		f.route("/api/platforms/", func(w http.ResponseWriter, r *http.Request) { serveFile(t, w, "platforms.json") })
		ps, err := newClient(t, srv.URL).Platforms(context.Background())
		if err != nil || len(ps) != 3 {
			t.Fatalf("Platforms = %v, %v", ps, err)
		}
		if got := f.last("/api/platforms/").Header.Get("Authorization"); got != "Bearer "+testToken {
			t.Errorf("redirected request lost the token")
		}
	})
	t.Run("another host is refused", func(t *testing.T) {
		f, srv := newFake(t, "5.3.1")
		f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/api/platforms", http.StatusFound)
		})
		_, err := newClient(t, srv.URL).Platforms(context.Background())
		if err == nil || !strings.Contains(err.Error(), "redirected to another host") || !strings.Contains(err.Error(), "cabinet.romm.url") {
			t.Fatalf("error %v, want a refusal that names the reason", err)
		}
	})
	t.Run("a loop is bounded", func(t *testing.T) {
		f, srv := newFake(t, "5.3.1")
		f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/api/platforms", http.StatusFound)
		})
		_, err := newClient(t, srv.URL).Platforms(context.Background())
		if err == nil || !strings.Contains(err.Error(), "redirected more than 5 times") {
			t.Fatalf("error %v, want the redirect bound", err)
		}
		if n := f.count("/api/platforms"); n != maxRedirect {
			t.Errorf("followed %d requests, want %d", n, maxRedirect)
		}
	})
	t.Run("https to http is refused", func(t *testing.T) {
		plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("the plain-http server got a request (Authorization %q)", r.Header.Get("Authorization"))
		}))
		t.Cleanup(plain.Close)
		f := &fakeRomM{t: t, version: "5.3.1", token: testToken, routes: map[string]http.HandlerFunc{}}
		f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, plain.URL+"/api/platforms", http.StatusFound)
		})
		tlsSrv := quietTLSServer(t, f)
		c := newClient(t, tlsSrv.URL, func(c *Config) { c.HTTPClient = tlsSrv.Client() })
		_, err := c.Platforms(context.Background())
		if err == nil || !strings.Contains(err.Error(), "from https to http") {
			t.Fatalf("error %v, want the downgrade refused", err)
		}
	})
}

// writeCA writes the test server's certificate as a PEM file, as a home CA would be.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "home-ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCAFile(t *testing.T) {
	f := &fakeRomM{t: t, version: "5.3.1", token: testToken, routes: map[string]http.HandlerFunc{}}
	srv := quietTLSServer(t, f)

	c := newClient(t, srv.URL, func(c *Config) { c.CAFile = writeCA(t, srv) })
	if ps, err := c.Platforms(context.Background()); err != nil || len(ps) != 3 {
		t.Fatalf("with the CA file: %v, %v", ps, err)
	}

	_, err := newClient(t, srv.URL).Platforms(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not trusted: set cabinet.romm.ca_file") {
		t.Fatalf("without the CA file: %v, want the untrusted-certificate advice", err)
	}

	// The certificate is for 127.0.0.1 and example.com; localhost is another name.
	wrongName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	_, err = newClient(t, wrongName, func(c *Config) { c.CAFile = writeCA(t, srv) }).Platforms(context.Background())
	if err == nil || !containsAny(err.Error(), "not for localhost", "not trusted") {
		t.Fatalf("wrong host name: %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"empty url", Config{}, "cabinet.romm.url is empty"},
		{"ftp", Config{URL: "ftp://romm.lan"}, "http:// or https://"},
		{"no host", Config{URL: "http://"}, "no host"},
		{"credentials in url", Config{URL: "http://admin:hunter2@romm.lan"}, "must not carry a user"},
		{"query in url", Config{URL: "http://romm.lan/?x=1"}, "query or fragment"},
		{"token with a space", Config{URL: "http://romm.lan", Token: "rmm_ab cd"}, "a character a token cannot have"},
		{"token with a quote", Config{URL: "http://romm.lan", Token: `rmm_ab"cd`}, "a character a token cannot have"},
		{"long token", Config{URL: "http://romm.lan", Token: "rmm_" + strings.Repeat("a", 1100)}, "longer than 1024"},
		{"missing CA file", Config{URL: "https://romm.lan", CAFile: "/nonexistent/ca.pem"}, "read cabinet.romm.ca_file"},
		{"CA file without a certificate", Config{URL: "https://romm.lan", CAFile: junk}, "holds no PEM certificate"},
		{"CA file and HTTP client", Config{URL: "https://romm.lan", CAFile: junk, HTTPClient: &http.Client{}}, "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") || (tt.cfg.Token != "" && strings.Contains(err.Error(), tt.cfg.Token)) {
				t.Errorf("error %q repeats a secret", err)
			}
		})
	}
}

func TestBasePathPrefix(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	mux := http.NewServeMux()
	mux.Handle("/romm/", http.StripPrefix("/romm", f))
	prefixed := httptest.NewServer(mux)
	t.Cleanup(prefixed.Close)
	_ = srv
	c := newClient(t, prefixed.URL+"/romm/")
	if _, err := c.Platforms(context.Background()); err != nil {
		t.Fatalf("RomM behind a path prefix: %v", err)
	}
}

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		status   int
		body     any
		want     string
		sentinel error
	}{
		{422, map[string]any{"detail": []map[string]any{{"msg": "Input should be a valid integer", "loc": []string{"query", "limit"}}}}, `RomM says "Input should be a valid integer"`, ErrInvalid},
		{500, map[string]any{"detail": "boom\u202e\n"}, `RomM says "boom"`, nil},
		{429, map[string]any{}, "wait a minute", nil},
		{304, nil, "RomM answered 304", ErrNotRomM},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
				if tt.body == nil {
					w.WriteHeader(tt.status)
					return
				}
				writeJSON(w, tt.status, tt.body)
			})
			_, err := newClient(t, srv.URL).Platforms(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v is not %v", err, tt.sentinel)
			}
		})
	}
}

// quietTLSServer is httptest.NewTLSServer without the server's log of handshakes the client
// refuses on purpose.
func quietTLSServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestLoginPageIsNotARomMRefusal(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/platforms", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(401)
		_, _ = io.WriteString(w, "<html>Sign in to Authelia</html>")
	})
	_, err := newClient(t, srv.URL).Platforms(context.Background())
	mustErr(t, err, ErrNotRomM)
	if errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "a proxy in front of RomM") {
		t.Errorf("error %q should blame the proxy, not the token", err)
	}
}
