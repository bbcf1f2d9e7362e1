package events

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// retryMillis is the reconnection delay the stream asks an EventSource for.
const retryMillis = 2000

// heartbeat is the comment line sent while nothing else is: a proxy that
// closes idle connections sees traffic, and a client sees the stream live.
var heartbeat = []byte(": ping\n\n")

// ServeHTTP streams the hub's events as text/event-stream (GET /events):
// first the last event of each kind (see Subscribe for Last-Event-ID),
// then every event as it is published, with a heartbeat comment every
// Heartbeat, until the client goes, is dropped, or the hub disconnects
// everyone. Authentication is the guard's (Routes).
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		jsonError(w, http.StatusMethodNotAllowed, "method not allowed: GET /events")
		return
	}
	hd := w.Header()
	if r.Method == http.MethodHead {
		streamHeaders(hd)
		return
	}
	c, err := h.Subscribe(r.Header.Get("Last-Event-ID"))
	if errors.Is(err, ErrFull) {
		hd.Set("Retry-After", "30")
		jsonError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer c.Close()
	streamHeaders(hd)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// send writes and flushes within WriteTimeout: a client that stopped
	// reading fails it, and its handler ends.
	send := func(b ...[]byte) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
		for _, p := range b {
			if _, err := w.Write(p); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
	// The headers and the reconnection delay at once: a fetch() resolves
	// and a proxy sees the stream start before any event.
	if !send([]byte("retry: " + strconv.Itoa(retryMillis) + "\n\n")) {
		return
	}
	tick, tc := h.opts.Clock.NewTicker(h.opts.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case ev := <-c.Events():
			frames := [][]byte{ev.frame}
			for more := true; more; { // what else is queued, in one flush
				select {
				case ev := <-c.Events():
					frames = append(frames, ev.frame)
				default:
					more = false
				}
			}
			// Re-armed before the write: once a client has the frames, the
			// next heartbeat is already due a whole Heartbeat later (a test's
			// fake clock may move as soon as it reads them).
			tick.Reset(h.opts.Heartbeat)
			if !send(frames...) {
				return
			}
		case <-tc:
			if !send(heartbeat) {
				return
			}
		case <-c.Gone():
			// Dropped, or the server is shutting down: abort, so the
			// connection closes (a stream ended cleanly would leave it
			// open for another request) and the client reconnects.
			panic(http.ErrAbortHandler)
		case <-r.Context().Done():
			return
		}
	}
}

func streamHeaders(hd http.Header) {
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store, no-transform")
	hd.Set("X-Accel-Buffering", "no") // nginx and friends: do not buffer the stream
	hd.Set("X-Content-Type-Options", "nosniff")
}

// jsonError answers {"error": msg}, as the guard's refusals do.
func jsonError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"error\":%q}\n", msg)
}
