package fakeromm

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Faults make the fake misbehave the way a RomM behind a reverse proxy, a
// captive portal or a dying disk misbehaves. They apply from the moment
// SetFaults returns, to requests whose path starts with Path ("" for all).
type Faults struct {
	// Path limits the faults to paths with this prefix ("/api/roms").
	Path string
	// Latency delays the response (real time: it is network behaviour);
	// it ends early when the client goes away.
	Latency time.Duration
	// LatencyAfter runs the request, then holds its answer this long (real
	// time): the request took effect, but a client that dies meanwhile
	// never hears so (it ends early, unanswered, when the client goes).
	LatencyAfter time.Duration
	// Status answers with this status instead (500, 502, 503, ...): Starlette's
	// text/plain "Internal Server Error" for 500, a proxy's HTML page else.
	Status int
	// HTML answers 200 text/html, as an SSO or captive portal in front of
	// RomM does.
	HTML bool
	// Truncated sends half of the body under a Content-Length for all of
	// it, then drops the connection.
	Truncated bool
	// Huge pads a JSON answer with this many bytes of leading whitespace:
	// still valid JSON, but larger than any bounded client should read.
	Huge int64
	// RedirectTo answers 302 to this origin (scheme://host:port) + the same
	// path and query: a client must not carry its token to another host.
	RedirectTo string
}

// SetFaults replaces the active faults; Faults{} turns them off.
func (s *Server) SetFaults(f Faults) {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// applyFaults answers r itself when a fault says so and reports whether it
// did; faults that alter a real answer wrap w instead.
func (s *Server) applyFaults(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	if f == (Faults{}) || !strings.HasPrefix(r.URL.Path, f.Path) {
		return false
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return true
		}
	}
	switch {
	case f.LatencyAfter > 0:
		rec := &recorder{header: http.Header{}}
		s.handler.ServeHTTP(rec, r)
		t := time.NewTimer(f.LatencyAfter)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return true
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(max(rec.status, http.StatusOK))
		w.Write(rec.body.Bytes())
		return true
	case f.RedirectTo != "":
		http.Redirect(w, r, strings.TrimSuffix(f.RedirectTo, "/")+r.URL.RequestURI(), http.StatusFound)
		return true
	case f.Status == http.StatusInternalServerError:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(f.Status)
		w.Write([]byte("Internal Server Error"))
		return true
	case f.Status != 0:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		text := strconv.Itoa(f.Status) + " " + http.StatusText(f.Status)
		w.Write([]byte("<html>\r\n<head><title>" + text + "</title></head>\r\n<body>\r\n<center><h1>" + text +
			"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"))
		return true
	case f.HTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("<!DOCTYPE html><html><head><title>Sign in</title></head><body><form method=\"post\">" +
			"<input name=\"username\"><input name=\"password\" type=\"password\"></form></body></html>"))
		return true
	case f.Truncated || f.Huge > 0:
		rec := &recorder{header: http.Header{}}
		s.handler.ServeHTTP(rec, r)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		if f.Truncated {
			truncate(w, rec)
			return true
		}
		pad(w, rec, f.Huge)
		return true
	}
	return false
}

// recorder buffers a response for a fault to rewrite.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

func truncate(w http.ResponseWriter, rec *recorder) {
	body := rec.body.Bytes()
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.status)
	w.Write(body[:len(body)/2])
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	// Drop the connection so the client sees a short body, not a hang.
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			closeNow(conn)
		}
	}
}

func closeNow(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// pad streams n bytes of whitespace before the body, without holding them.
func pad(w http.ResponseWriter, rec *recorder, n int64) {
	body := rec.body.Bytes()
	w.Header().Set("Content-Length", strconv.FormatInt(n+int64(len(body)), 10))
	w.WriteHeader(rec.status)
	bw := bufio.NewWriterSize(w, 64<<10)
	chunk := bytes.Repeat([]byte(" "), 64<<10)
	for n > 0 {
		k := min(n, int64(len(chunk)))
		if _, err := bw.Write(chunk[:k]); err != nil {
			return
		}
		n -= k
	}
	bw.Write(body)
	bw.Flush()
}
