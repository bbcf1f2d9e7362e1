package fakees

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// env is a fake ES on a real loopback socket with a fake clock.
type env struct {
	t      *testing.T
	srv    *Server
	clock  *clock.Fake
	ln     *Listener
	events *Recorder
}

var epoch = time.Date(2026, 11, 30, 3, 6, 35, 0, time.UTC)

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{t: t, clock: clock.NewFake(epoch), events: &Recorder{}}
	if cfg.Clock == nil {
		cfg.Clock = e.clock
	}
	if cfg.Events == nil {
		cfg.Events = e.events
	}
	e.srv = New(cfg)
	ln, err := Serve("", e.srv)
	if err != nil {
		t.Fatal(err)
	}
	e.ln = ln
	t.Cleanup(func() { ln.Close(); e.srv.Close() })
	return e
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with net/http (a Content-Length for any body).
func (e *env) do(method, path, body string, header ...string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" || method == http.MethodPost || method == http.MethodPut {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ln.URL()+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

func (e *env) get(path string) response { e.t.Helper(); return e.do(http.MethodGet, path, "") }

// raw sends one request verbatim on a new connection (e.g. a POST with no
// Content-Length, which net/http never sends).
func (e *env) raw(request string) response {
	e.t.Helper()
	c, err := net.Dial("tcp", e.ln.Addr())
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, request); err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
