package daemon

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/cfaccess"
	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/keepalive"
	"github.com/batocera-cabinet/cabinet/daemon/oauth"
	"github.com/batocera-cabinet/cabinet/daemon/oauth/cimd"
	"github.com/batocera-cabinet/cabinet/daemon/tlsconf"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
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

// serveHTTP serves MCP over Streamable HTTP on ln, behind the bearer token
// (or, from the tunnel, a Cloudflare Access assertion), Host and Origin
// checks, until ctx ends; with a certificate configured, HTTPS and (unless
// cabinet.mcp.tls_only) plain HTTP on the same port. Without a listener (the
// address was taken) it tries again with backoff, logging only its success.
func (d *Daemon) serveHTTP(ctx context.Context, ln net.Listener) error {
	cfg := d.config()
	for wait := 5 * time.Second; ln == nil; wait = min(2*wait, time.Minute) {
		if !d.sleep(ctx, wait) {
			return nil
		}
		l, err := net.Listen("tcp", cfg.HTTP.Listen)
		if err != nil {
			d.log.Debug().Err(err).Msg("MCP over HTTP: address still taken")
			continue
		}
		ln = l
		d.setHTTP(httpState{addr: ln.Addr().String()})
	}
	tokenPath := cfg.Layout.Token()
	if _, err := httpauth.EnsureToken(tokenPath); err != nil {
		ln.Close()
		return err
	}
	opts := httpauth.Options{
		TokenPath: tokenPath, AllowedOrigins: cfg.HTTP.AllowedOrigins,
		Now: d.clock.Now, OnDenied: d.deniedLogger(),
		OnError: func(err error) { d.log.Warn().Err(err).Msg("MCP over HTTP: a token's last use was not recorded") },
	}
	if a := cfg.HTTP.Access; a != nil {
		if v := d.accessVerifier(ctx, a); v != nil {
			opts.Access, opts.AccessScopes = v, a.Scopes
		}
	}
	scheme := "http"
	event := d.log.Info()
	var cert *tlsconf.Info // the certificate served; nil: plain HTTP only
	if tc := cfg.HTTP.TLS; tc.On() {
		addr := ln.Addr().String()
		src := d.openTLS(ctx, tc, cfg.Layout.State, addr)
		if src == nil {
			ln.Close()
			return nil // ctx ended
		}
		d.setHTTP(httpState{addr: addr})
		ln = tlsconf.Listen(ln, src.Config(), tlsconf.ListenOptions{Plain: !tc.Only, SniffTimeout: httpHeaderTimeout})
		scheme = "https"
		info := src.Info()
		cert = &info
		event = event.Str("tls", info.Source).Str("subject", info.Subject).Time("expires", info.NotAfter).Bool("plain_http", !tc.Only)
		if tc.SelfSigned {
			event = event.Str("fingerprint", info.Fingerprint)
		}
	}
	if opts.Access != nil {
		event = event.Str("cf_access", cfg.HTTP.Access.TeamDomain).Strs("cf_access_scopes", opts.AccessScopes)
	}
	opts.AllowedHosts = allowedHosts(cfg.HTTP, cert)
	var as *oauth.Server
	if o := cfg.HTTP.OAuth; o != nil {
		if as = d.newOAuth(o, cfg.Layout.OAuth()); as != nil {
			opts.OAuth, opts.ToolScope = as, tools.ToolScope
			event = event.Str("oauth_issuer", as.Issuer())
		}
	}
	// The second screens' /marquee, /events and /marquee/image (screens.go).
	opts.Routes = events.Routes(d.events, d.marquees, d.log)
	guard := httpauth.New(opts)
	// Both Host checks, the guard's and mcp-go's behind it, use the
	// guard's whole list (mcpHTTP says why mcp-go needs it).
	mcp, closeStreams := d.mcpHTTP(guard.Hosts())
	// An MCP stream a client holds open (a subscription, a slow call) that has sent nothing for a
	// while gets a comment, so no proxy or tunnel on the way cuts it (package keepalive).
	srv := &http.Server{Handler: guard.Wrap(keepalive.Wrap(mcp, mcpKeepAlive)), ReadHeaderTimeout: httpHeaderTimeout,
		IdleTimeout: 2 * time.Minute, ErrorLog: log.New(serverErrors{d.log}, "", 0)}
	// Event streams never go idle: end them as Shutdown begins, or it
	// would wait for them until its deadline.
	srv.RegisterOnShutdown(d.events.DisconnectAll)
	srv.RegisterOnShutdown(closeStreams)
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(sctx)
		cancel()
	}()
	event.Str("url", scheme+"://"+ln.Addr().String()+"/mcp").Str("token_file", tokenPath).Msg("MCP over HTTP listening")
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		// Serve returns as Shutdown begins; the requests still being
		// answered note their tokens' uses until it ends.
		<-shut
	}
	guard.Flush() // the last token uses written before the state dir may go
	if as != nil {
		as.Flush()
	}
	d.mu.Lock()
	d.http.addr = ""
	d.mu.Unlock()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpHeaderTimeout bounds a request's headers, and the wait for a new
// connection's first byte, which says whether it is TLS.
const httpHeaderTimeout = 10 * time.Second

// mcpKeepAlive is how long an MCP stream may send nothing before it gets a comment: well under
// the idle cut of the proxies in front of cabinets (Cloudflare's 100 s, nginx's 60 s).
const mcpKeepAlive = 25 * time.Second

// sleep waits d on the daemon's clock, reporting false when ctx ended first.
func (d *Daemon) sleep(ctx context.Context, wait time.Duration) bool {
	t, tc := d.clock.NewTimer(wait)
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-tc:
		return true
	}
}

func (d *Daemon) setHTTP(st httpState) {
	d.mu.Lock()
	d.http = st
	d.mu.Unlock()
}

// openTLS opens the certificate source, trying again with backoff while it
// fails (the files not there yet: tailscale cert runs after boot). Until it
// opens nothing is served and the status says why; nil means ctx ended.
func (d *Daemon) openTLS(ctx context.Context, tc TLS, stateDir, addr string) *tlsconf.Source {
	opts := tlsconf.Options{
		CertFile: tc.CertFile, KeyFile: tc.KeyFile, Now: d.clock.Now,
		// tlsconf reports a repeated failure or expiry warning once a day,
		// so these need no limit of their own.
		OnError: func(err error) { d.log.Warn().Err(err).Msg("MCP over HTTPS: certificate") },
		OnReload: func(i tlsconf.Info) {
			d.log.Info().Str("subject", i.Subject).Time("expires", i.NotAfter).Str("fingerprint", i.Fingerprint).
				Str("source", i.Source).Msg("MCP over HTTPS: serving a new certificate")
		},
	}
	if tc.SelfSigned {
		opts.SelfSignedDir, opts.Hosts = stateDir, selfSignedHosts()
	}
	for wait := 5 * time.Second; ; wait = min(2*wait, time.Minute) {
		src, err := tlsconf.Open(ctx, opts)
		if err == nil {
			return src
		}
		d.setHTTP(httpState{err: err.Error()})
		d.log.Error().Err(err).Str("addr", addr).Dur("retry_in", wait).
			Msg("MCP over HTTP is not served until its certificate loads: fix the key named, or set cabinet.mcp.tls=off (hooks, MQTT and MCP over the socket go on)")
		if !d.sleep(ctx, wait) {
			return nil
		}
	}
}

// accessVerifier builds the Cloudflare Access verifier and fetches the
// team's keys in the background, so the first tunnel request does not wait
// for them and a wrong team domain shows in the log at once. A
// configuration the verifier refuses (cmd/cabinet checked it already) leaves
// Access off: requests from the tunnel then need a bearer token.
func (d *Daemon) accessVerifier(ctx context.Context, a *Access) *cfaccess.Verifier {
	o := a.Options()
	o.Now = d.clock.Now
	v, err := cfaccess.New(o)
	if err != nil {
		d.log.Error().Err(err).Msg("Cloudflare Access is off: fix cabinet.mcp.cf_access.*")
		return nil
	}
	go func() {
		if err := v.Refresh(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn().Err(err).Msg("Cloudflare Access: the signing keys could not be fetched; assertions are refused until they are (tried again on the next one)")
		}
	}()
	return v
}

// selfSignedHosts are the self-signed certificate's names: the cabinet's
// host name (and its .local), loopback, and every address of its
// interfaces, the ones a LAN client dials.
func selfSignedHosts() []string {
	hosts := []string{}
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		h = strings.ToLower(h)
		hosts = append(hosts, h, h+".local")
	}
	hosts = append(hosts, "localhost", "127.0.0.1", "::1")
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() {
				hosts = append(hosts, ipn.IP.String())
			}
		}
	}
	return hosts
}

// allowedHosts are the Host header values MCP over HTTP accepts besides
// loopback and the machine's own names and addresses, which httpauth adds:
// cabinet.mcp.allowed_hosts (a tunnel's or a proxy's public hostname) and
// the names of the certificate served (cert; nil when there is none).
// Through httpauth.Guard.Hosts this one list feeds both Host checks, the
// guard's and mcp-go's, so a new source of names is added here only.
func allowedHosts(cfg HTTP, cert *tlsconf.Info) []string {
	hosts := slices.Clone(cfg.AllowedHosts)
	if cfg.OAuth != nil {
		// The issuer's host: the address clients sign in at and call.
		if u, err := url.Parse(cfg.OAuth.PublicURL); err == nil && u.Hostname() != "" {
			hosts = append(hosts, u.Hostname())
		}
	}
	if cert != nil {
		// The names the certificate was made for (tailscale cert's
		// <host>.<tailnet>.ts.net) are the cabinet's own: a client that
		// checks the certificate uses one of them as its Host.
		hosts = append(hosts, certHosts(*cert)...)
	}
	return hosts
}

// certHosts are a certificate's DNS names that can be a Host header: not
// wildcards, which the Host allow-list does not match.
func certHosts(i tlsconf.Info) []string {
	var out []string
	for _, n := range i.DNSNames {
		if !strings.HasPrefix(n, "*.") {
			out = append(out, n)
		}
	}
	return out
}

// httpScopes carries the scopes of the request's bearer token from the
// HTTP guard into the tool calls (tools.WithScopes). A request without a
// caller, which the guard never lets through, gets no scope at all.
func httpScopes(ctx context.Context, r *http.Request) context.Context {
	c, _ := httpauth.CallerFrom(r.Context())
	return tools.WithCaller(ctx, c.Name, c.Scopes)
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

// serverErrors is net/http's error log: a handler's panic (the connection is cut, the client sees
// the answer end) at error level, with its stack; the rest (a scanner's bad TLS handshake, a
// client gone mid-answer) at debug, where it does not flood the log of a cabinet on a busy LAN.
type serverErrors struct{ log zerolog.Logger }

func (w serverErrors) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	if strings.Contains(line, "panic") {
		w.log.Error().Str("detail", untrusted.Clean(line, 4000)).Msg("MCP over HTTP: a request panicked")
	} else {
		w.log.Debug().Str("detail", untrusted.Clean(line, 300)).Msg("MCP over HTTP: server error")
	}
	return len(p), nil
}

// newOAuth builds the cabinet's authorization server (cabinet.mcp.oauth):
// client metadata documents read from the configured hosts, the PIN shown
// through the links in force when a sign-in starts, its changes of the
// clients' file told to sensor.batocera_mcp_clients. Nil when the public
// URL cannot be the issuer (cmd/cabinet checked it already).
func (d *Daemon) newOAuth(o *OAuth, statePath string) *oauth.Server {
	var meta oauth.Metadata
	if o.ClientHosts == nil || len(o.ClientHosts) > 0 {
		meta = cimd.New(cimd.Options{Hosts: o.ClientHosts, Now: d.clock.Now})
	}
	srv, err := oauth.New(oauth.Config{PublicURL: o.PublicURL, StatePath: statePath, Screen: linksScreen{d},
		Metadata: meta, Clock: d.clock, Log: d.log, OnChange: d.clients.changed})
	if err != nil {
		d.log.Error().Err(err).Msg("OAuth sign-in is off: fix cabinet.mcp.public_url")
		return nil
	}
	return srv
}

// linksScreen shows a line on the cabinet's screen through the links in
// force at that moment (a reload may change ES's or RetroArch's address).
type linksScreen struct{ d *Daemon }

func (s linksScreen) Show(ctx context.Context, text string) error {
	return s.d.links().Screen().Show(ctx, text)
}
