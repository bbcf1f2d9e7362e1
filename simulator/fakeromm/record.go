package fakeromm

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/url"
)

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	// Authorized: it carried the accepted token (the token itself is not kept).
	Authorized bool
	// Authorization: it carried an Authorization header at all.
	Authorization bool
	// Range is the Range header, "" without one.
	Range string
	// Status is the status answered, filled in once the answer is done:
	// 0 while it is still being written, or when the connection dropped
	// before a status was.
	Status int
	seq    uint64
}

// maxRecorded bounds the log: a benchmark of 50,000 ROMs must not grow it
// without end. Older entries are dropped first (see Dropped).
const maxRecorded = 10_000

// record logs r as it arrives (so a test that has its answer finds it in
// the log) and returns the entry's sequence number for recordStatus.
func (s *Server) record(r *http.Request) uint64 {
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
		Authorization: r.Header.Get("Authorization") != "", Range: r.Header.Get("Range")}
	req.Authorized = req.Authorization && s.authenticated(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req.seq = s.seq
	if len(s.requests) == maxRecorded {
		copy(s.requests, s.requests[1:])
		s.requests = s.requests[:maxRecorded-1]
		s.dropped++
	}
	s.requests = append(s.requests, req)
	return req.seq
}

func (s *Server) recordStatus(seq uint64, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		if s.requests[i].seq == seq {
			s.requests[i].Status = status
			return
		}
	}
}

// Requests returns the recorded requests, oldest first.
func (s *Server) Requests() []Request {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Dropped is how many of the oldest requests fell out of the log.
func (s *Server) Dropped() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// ResetRequests empties the log.
func (s *Server) ResetRequests() {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests, s.dropped = nil, 0
}

// statusWriter remembers the status written, and passes Flush and Hijack
// through for the faults that need them.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("fakeromm: the connection cannot be hijacked")
}
