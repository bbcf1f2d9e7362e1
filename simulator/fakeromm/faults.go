package fakeromm

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
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
	// CutAfter sends the real answer's headers and only this many bytes of
	// its body, then drops the connection: a download cut mid-way (a body
	// no longer than this goes out whole).
	CutAfter int64
	// Times limits the faults to the first Times requests that match Path
	// after SetFaults (0: every one), so that a test can cut a download and
	// let its resumption through.
	Times int

	matched *atomic.Int64 // requests the faults applied to; set by SetFaults, shared by copies
}

// off reports whether f has no fault at all.
func (f Faults) off() bool {
	f.matched = nil
	return f == Faults{}
}

// SetFaults replaces the active faults; Faults{} turns them off.
func (s *Server) SetFaults(f Faults) {
	s.init()
	f.matched = new(atomic.Int64)
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
	if f.off() || !strings.HasPrefix(r.URL.Path, f.Path) {
		return false
	}
	if f.Times > 0 && f.matched != nil && f.matched.Add(1) > int64(f.Times) {
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
		nginxPage(w, f.Status)
		return true
	case f.HTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("<!DOCTYPE html><html><head><title>Sign in</title></head><body><form method=\"post\">" +
			"<input name=\"username\"><input name=\"password\" type=\"password\"></form></body></html>"))
		return true
	case f.CutAfter > 0:
		s.handler.ServeHTTP(&cutWriter{ResponseWriter: w, left: f.CutAfter}, r)
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

// nginxPage is nginx's own error page for status, as a proxy in front of
// RomM (or nginx's static files) answers.
func nginxPage(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	text := strconv.Itoa(status) + " " + http.StatusText(status)
	w.Write([]byte("<html>\r\n<head><title>" + text + "</title></head>\r\n<body>\r\n<center><h1>" + text +
		"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"))
}

// cutError is what a cutWriter's Write returns once the connection is gone.
type cutError struct{}

func (cutError) Error() string { return "fakeromm: connection cut by Faults.CutAfter" }

// cutWriter passes the answer through until left body bytes have gone,
// then drops the connection (Truncated's way, without buffering the body).
type cutWriter struct {
	http.ResponseWriter
	left int64
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, cutError{}
	}
	if int64(len(p)) <= c.left {
		c.left -= int64(len(p))
		return c.ResponseWriter.Write(p)
	}
	n, _ := c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	if fl, ok := c.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	if hj, ok := c.ResponseWriter.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			closeNow(conn)
		}
	}
	return n, cutError{}
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
