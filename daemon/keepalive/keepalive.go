// Package keepalive keeps server-sent event streams talking: a response that is a stream
// (Content-Type text/event-stream) and has sent nothing for a while gets an SSE comment, so a
// proxy or tunnel between the cabinet and the client (cloudflared, a reverse proxy) does not
// take it for dead and cut it. MCP's 2026-07-28 transport asks for exactly this on
// subscriptions/listen streams (streamable-http.mdx: "X-Accel-Buffering: no" and a periodic ":"
// comment), which mcp-go does not send.
package keepalive

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Comment is what an idle stream gets: an SSE comment line and the blank line that ends it,
// which a client ignores (no data, so no event).
const Comment = ": keep-alive\n\n"

// Wrap serves h, adding Comment to an event stream of h that has written nothing for every.
// h's own writes are whole events (one Write each, as mcp-go writes them): a comment only ever
// goes between two of them.
func Wrap(h http.Handler, every time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := &writer{w: w, last: time.Now()}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { kw.keep(every, done) })
		defer wg.Wait()
		defer close(done) // before wg.Wait: nothing is written after h has returned
		h.ServeHTTP(kw, r)
	})
}

type writer struct {
	w      http.ResponseWriter
	mu     sync.Mutex
	stream bool // the headers went, as an event stream
	last   time.Time
	failed bool
}

func (k *writer) Header() http.Header { return k.w.Header() }

func (k *writer) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if strings.HasPrefix(k.w.Header().Get("Content-Type"), "text/event-stream") {
		k.w.Header().Set("X-Accel-Buffering", "no") // nginx and friends: pass each event on at once
		k.stream = code == http.StatusOK
	}
	k.w.WriteHeader(code)
}

func (k *writer) Write(b []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.last = time.Now()
	n, err := k.w.Write(b)
	if err != nil {
		k.failed = true
	}
	return n, err
}

func (k *writer) Flush() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if f, ok := k.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (k *writer) Unwrap() http.ResponseWriter { return k.w }

func (k *writer) keep(every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every / 4)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			k.mu.Lock()
			if k.stream && !k.failed && now.Sub(k.last) >= every {
				if _, err := k.w.Write([]byte(Comment)); err != nil {
					k.failed = true
				} else if f, ok := k.w.(http.Flusher); ok {
					f.Flush()
				}
				k.last = now
			}
			k.mu.Unlock()
		}
	}
}
