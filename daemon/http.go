package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
)

// httpState is MCP over HTTP as doctor and the demo see it.
type httpState struct {
	addr string // where it listens; "" while it does not
	err  string // why it does not listen
}

// listenHTTP opens cabinet.mcp.listen before the daemon says it is ready,
// so Ready and the first log lines can name the address. An address that
// is taken (another program, a second daemon under another run dir) is
// reported once, in the log and in the status doctor reads; the rest of
// the daemon runs on, and serveHTTP keeps trying quietly.
func (d *Daemon) listenHTTP(cfg HTTP, tokenPath string) net.Listener {
	d.mu.Lock()
	defer d.mu.Unlock()
	// The token first: whoever is told the address can read it at once.
	if _, err := httpauth.EnsureToken(tokenPath); err != nil {
		d.http = httpState{err: fmt.Sprintf("no bearer token: %v", err)}
		d.log.Error().Err(err).Msg("MCP over HTTP is not available: the bearer token cannot be written; check the state dir")
		return nil
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		d.http = httpState{err: fmt.Sprintf("cannot listen on %s: %v; free the port or set cabinet.mcp.listen to another address", cfg.Listen, err)}
		d.log.Error().Err(err).Str("addr", cfg.Listen).Str("key", "cabinet.mcp.listen").
			Msg("MCP over HTTP is not available: its address is taken; free it or set cabinet.mcp.listen to another address (hooks, MQTT and MCP over the socket go on)")
		return nil
	}
	d.http = httpState{addr: ln.Addr().String()}
	return ln
}

// serveHTTP serves MCP over Streamable HTTP on ln, behind the bearer token,
// Host and Origin checks, until ctx ends. Without a listener (the address
// was taken) it tries again with backoff, logging only its success.
func (d *Daemon) serveHTTP(ctx context.Context, ln net.Listener) error {
	cfg := d.config()
	for wait := 5 * time.Second; ln == nil; wait = min(2*wait, time.Minute) {
		t, tc := d.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-tc:
		}
		l, err := net.Listen("tcp", cfg.HTTP.Listen)
		if err != nil {
			d.log.Debug().Err(err).Msg("MCP over HTTP: address still taken")
			continue
		}
		ln = l
		d.mu.Lock()
		d.http = httpState{addr: ln.Addr().String()}
		d.mu.Unlock()
	}
	tokenPath := cfg.Layout.Token()
	if _, err := httpauth.EnsureToken(tokenPath); err != nil {
		ln.Close()
		return err
	}
	guard := httpauth.New(httpauth.Options{
		TokenPath: tokenPath, AllowedHosts: cfg.HTTP.AllowedHosts, AllowedOrigins: cfg.HTTP.AllowedOrigins,
		Now: d.clock.Now, OnDenied: d.deniedLogger(),
		OnError: func(err error) { d.log.Warn().Err(err).Msg("MCP over HTTP: a token's last use was not recorded") },
	})
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mcp.mu.Lock()
		h := d.mcp.http
		d.mcp.mu.Unlock()
		h.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: guard.Wrap(mcp), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(sctx)
		cancel()
	}()
	d.log.Info().Str("url", "http://"+ln.Addr().String()+"/mcp").Str("token_file", tokenPath).Msg("MCP over HTTP listening")
	err := srv.Serve(ln)
	guard.Flush() // the last token uses written before the state dir may go
	d.mu.Lock()
	d.http.addr = ""
	d.mu.Unlock()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpScopes carries the scopes of the request's bearer token from the
// HTTP guard into the tool calls (tools.WithScopes). A request without a
// caller, which the guard never lets through, gets no scope at all.
func httpScopes(ctx context.Context, r *http.Request) context.Context {
	c, _ := httpauth.CallerFrom(r.Context())
	return tools.WithScopes(ctx, c.Scopes)
}

// deniedLogger logs refused HTTP requests (never the token), at most one
// line per ten seconds so a flood of bad tokens cannot flood the log.
func (d *Daemon) deniedLogger() func(*http.Request, int, string) {
	var mu sync.Mutex
	var last time.Time
	var suppressed int
	return func(r *http.Request, status int, reason string) {
		mu.Lock()
		defer mu.Unlock()
		if !last.IsZero() && d.clock.Since(last) < 10*time.Second {
			suppressed++
			return
		}
		d.log.Warn().Str("remote", r.RemoteAddr).Int("status", status).Str("reason", reason).Int("suppressed", suppressed).Msg("MCP request refused")
		last, suppressed = d.clock.Now(), 0
	}
}

// HTTPAddr is where MCP over HTTP listens ("" while it does not). It is
// set before Ready is called.
func (d *Daemon) HTTPAddr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.http.addr
}
