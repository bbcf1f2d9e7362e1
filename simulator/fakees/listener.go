package fakees

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// cpp-httplib's keep-alive defaults, which ES keeps (httplib.h:15-25).
const (
	keepAliveTimeout = 5 * time.Second
	keepAliveMax     = 5
)

// Listener serves a handler on one TCP address, 127.0.0.1:<port> by
// default, and can stop (clients then get "connection refused", as while ES
// restarts) and start again on the same port.
type Listener struct {
	h http.Handler

	mu     sync.Mutex
	addr   string // fixed after the first listen, so Start reuses the port
	srv    *http.Server
	served chan struct{} // closed when srv.Serve has returned
}

type connCounterKey struct{}

// Serve starts serving h on addr ("" means 127.0.0.1:0, a free port).
func Serve(addr string, h http.Handler) (*Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l := &Listener{h: h, addr: addr}
	if err := l.Start(); err != nil {
		return nil, err
	}
	return l, nil
}

// Addr is host:port, e.g. "127.0.0.1:41234".
func (l *Listener) Addr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addr
}

// URL is the base URL clients use, e.g. "http://127.0.0.1:41234".
func (l *Listener) URL() string { return "http://" + l.Addr() }

// Start listens again on the same address; it is a no-op while serving.
func (l *Listener) Start() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	l.addr = ln.Addr().String()
	srv := &http.Server{
		Handler:           http.HandlerFunc(l.serve),
		IdleTimeout:       keepAliveTimeout,
		ReadHeaderTimeout: keepAliveTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connCounterKey{}, new(atomic.Int32))
		},
	}
	served := make(chan struct{})
	l.srv, l.served = srv, served
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			ln.Close()
		}
	}()
	return nil
}

// serve closes a connection after its fifth request, as cpp-httplib does.
func (l *Listener) serve(w http.ResponseWriter, r *http.Request) {
	if n, ok := r.Context().Value(connCounterKey{}).(*atomic.Int32); ok && n.Add(1) >= keepAliveMax {
		w.Header().Set("Connection", "close")
	}
	l.h.ServeHTTP(w, r)
}

// Stop closes the listener and every open connection; until Start, clients
// get "connection refused".
func (l *Listener) Stop() error {
	l.mu.Lock()
	srv, served := l.srv, l.served
	l.srv = nil
	l.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Close()
	// The socket is really closed only once the goroutine blocked in
	// Accept lets go of it; until then a client would be accepted by the
	// kernel and reset instead of refused.
	<-served
	return err
}

// Close stops serving for good (it is Stop; Start would reopen).
func (l *Listener) Close() error { return l.Stop() }
