package fakees

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Faults make the fake misbehave on the wire. They apply to every request
// from the moment SetFaults returns. Delays are real time (they are network
// behaviour, not ES behaviour), and stop early when the client goes away.
// Connection refused is Listener.Stop.
type Faults struct {
	// Latency delays every response before anything is written.
	Latency time.Duration
	// Status, when non-zero, answers every request with that status (e.g.
	// 500, 503) and a text/html body "<code> <reason>", before routing.
	Status int
	// Forbidden answers every request 403 "403 - Forbidden", as ES does
	// for a peer other than 127.0.0.1 while PublicWebAccess is off.
	Forbidden bool
	// Malformed gives JSON bodies a syntax error at their end (same length).
	Malformed bool
	// Truncated sends half of each JSON body under a Content-Length for the
	// whole body, then drops the connection.
	Truncated bool
	// Dribble sends bodies in 16-byte pieces with this pause between them.
	Dribble time.Duration
}

// SetFaults replaces the active faults; Faults{} turns them all off.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Faults returns the active faults.
func (s *Server) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// dribbleChunk is the piece size of a slow body.
const dribbleChunk = 16

// delay waits d or until the request is abandoned; it reports whether the
// request is still wanted.
func delay(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// allowed is ES's isAllowed: only the exact peer address 127.0.0.1.
func (s *Server) allowed(r *http.Request) bool {
	if s.cfg.PublicWebAccess {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	return err == nil && host == "127.0.0.1"
}

// send writes a response the way cpp-httplib does: Content-Length always, a
// Content-Type only when the handler set one, no Date. isJSON marks bodies
// the JSON faults apply to.
func (s *Server) send(w http.ResponseWriter, r *http.Request, status int, ctype string, body []byte, isJSON bool) {
	f := s.Faults()
	if isJSON && f.Malformed && len(body) > 0 {
		body = append(append([]byte(nil), body[:len(body)-1]...), '!')
	}
	h := w.Header()
	h["Date"] = nil
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	if status == http.StatusNoContent || status == http.StatusNotModified {
		w.WriteHeader(status)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method == http.MethodHead || len(body) == 0 {
		return
	}
	flusher, _ := w.(http.Flusher)
	if isJSON && f.Truncated && len(body) > 1 {
		w.Write(body[:len(body)/2])
		if flusher != nil {
			flusher.Flush()
		}
		// The short body under a longer Content-Length, then a dropped
		// connection: what a crashed or restarted ES looks like.
		panic(http.ErrAbortHandler)
	}
	if f.Dribble <= 0 || flusher == nil {
		w.Write(body)
		return
	}
	for len(body) > 0 {
		n := min(dribbleChunk, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		flusher.Flush()
		body = body[n:]
		if len(body) > 0 && !delay(r, f.Dribble) {
			return
		}
	}
}

// sendText answers with a cpp-httplib text/html string body.
func (s *Server) sendText(w http.ResponseWriter, r *http.Request, status int, text string) {
	s.send(w, r, status, "text/html", []byte(text), false)
}

// sendEmpty answers with no body and no Content-Type.
func (s *Server) sendEmpty(w http.ResponseWriter, r *http.Request, status int) {
	s.send(w, r, status, "", nil, false)
}

// sendJSON answers application/json.
func (s *Server) sendJSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	s.send(w, r, status, "application/json", body, true)
}

// preflight applies the request-level faults; it reports whether routing
// should go on.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) bool {
	f := s.Faults()
	if !delay(r, f.Latency) {
		return false
	}
	if f.Status != 0 {
		s.sendText(w, r, f.Status, fmt.Sprintf("%d %s", f.Status, http.StatusText(f.Status)))
		return false
	}
	return true
}

// forbid is the check every ES handler starts with (isAllowed); it answers
// 403 and reports true when the peer is refused.
func (s *Server) forbid(w http.ResponseWriter, r *http.Request) bool {
	if !s.Faults().Forbidden && s.allowed(r) {
		return false
	}
	s.sendText(w, r, http.StatusForbidden, "403 - Forbidden")
	return true
}
