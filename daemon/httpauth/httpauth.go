// Package httpauth guards Cabinet's MCP endpoint on the LAN: bearer tokens
// (the default one kept 0600 in its own file in the state dir, named ones
// as SHA-256 hashes in tokens.json beside it) compared in constant time,
// each with its scopes, which it puts in the request's context; a Host
// header allow-list against DNS rebinding; refusal of browser Origins that
// are neither the server's own nor allowed; a throttle on failed
// authentication per peer address; a cap on request bodies; refusal of a
// token in a URL's query; an unauthenticated GET /healthz; and other
// packages' routes behind the same checks (Route: the second screens'
// /events and /marquee). With Cloudflare Access configured, a
// request that carries an Access assertion is decided by the assertion
// alone (access.go), outside the per-peer throttle.
package httpauth

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure the guard.
type Options struct {
	TokenPath string // the default token's file
	// TokensPath is the named tokens' file (default TokensFile(TokenPath)).
	TokensPath string
	// AllowedHosts are extra Host header values (cabinet.mcp.allowed_hosts);
	// loopback and the machine's own names and addresses are always allowed.
	AllowedHosts []string
	// AllowedOrigins are browser origins allowed to call besides the
	// server's own (cabinet.mcp.allowed_origins).
	AllowedOrigins []string
	MaxBody        int64 // default 1 MiB
	// FailLimit failed authentications from one peer within FailWindow get
	// it 429 until the window ends; at most MaxPeers are tracked. Zero
	// values take the defaults.
	FailLimit  int
	FailWindow time.Duration
	MaxPeers   int
	// UseEvery bounds how often a token's last use is written (default a
	// minute).
	UseEvery time.Duration
	// Now is the clock of the throttle and of last uses (nil: time.Now).
	Now func() time.Time
	// Access, when set, decides every request that carries an
	// AccessHeader (cabinet.mcp.cf_access.*); AccessScopes are the scopes
	// of the identities it accepts (default DefaultAccessScopes). Nil: the
	// header is ignored and every request needs a bearer token.
	Access       AccessVerifier
	AccessScopes []string
	// OnDenied is told about refusals (never the token) for logging.
	OnDenied func(r *http.Request, status int, reason string)
	// OnError is told when a token's last use cannot be recorded.
	OnError func(err error)
	// OAuth, when set, is the cabinet's authorization server: its routes
	// are served, its access tokens accepted, and a 401 points clients at
	// it. Nil: the OAuth paths answer a JSON 404.
	OAuth OAuthServer
	// ToolScope names the scope a tool needs (tools.ToolScope), for the
	// 403 insufficient_scope an OAuth caller gets outside its scopes.
	ToolScope func(tool string) string
	// Routes are more paths served beside /mcp (routes.go): the second
	// screens' /events and /marquee.
	Routes []Route
}

// Guard wraps the MCP handler.
type Guard struct {
	opts     Options
	hosts    map[string]bool
	store    *Store
	throttle *throttle
	denied   atomic.Int64
	// accessScopes are an Access identity's; accessFlood is set while a
	// flood of invalid assertions is being refused unlogged.
	accessScopes []string
	accessFlood  atomic.Bool

	mu    sync.Mutex
	def   Cached[string]
	named Cached[[]namedToken]
	used  map[string]time.Time // token name → when its use was last written
	// writing counts the use records being written; wrote (on mu) is
	// signalled when it drops to zero. Not a WaitGroup: a request may note
	// a use while Flush waits (the daemon's shutdown), which a WaitGroup
	// forbids.
	writing int
	wrote   *sync.Cond
}

// New builds a guard. The machine's names and addresses are read once.
func New(opts Options) *Guard {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.TokensPath == "" {
		opts.TokensPath = TokensFile(opts.TokenPath)
	}
	if opts.FailLimit <= 0 {
		opts.FailLimit = DefaultFailLimit
	}
	if opts.FailWindow <= 0 {
		opts.FailWindow = DefaultFailWindow
	}
	if opts.MaxPeers <= 0 {
		opts.MaxPeers = DefaultMaxPeers
	}
	if opts.UseEvery <= 0 {
		opts.UseEvery = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := &Guard{opts: opts, hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true},
		store:    &Store{DefaultPath: opts.TokenPath, Path: opts.TokensPath, Now: opts.Now},
		throttle: newThrottle(opts.FailLimit, opts.FailWindow, opts.MaxPeers),
		def:      Cached[string]{path: opts.TokenPath}, named: Cached[[]namedToken]{path: opts.TokensPath},
		used: map[string]time.Time{}, accessScopes: accessScopesOf(opts.AccessScopes)}
	g.wrote = sync.NewCond(&g.mu)
	if h, err := os.Hostname(); err == nil && h != "" {
		h = strings.ToLower(h)
		g.hosts[h], g.hosts[h+".local"] = true, true
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				g.hosts[ipn.IP.String()] = true
			}
		}
	}
	for _, h := range opts.AllowedHosts {
		g.hosts[strings.ToLower(strings.TrimSpace(h))] = true
	}
	return g
}

// Wrap returns a handler serving /healthz openly, mcp at /mcp behind the
// checks, and Options.Routes. mcp finds the caller's token name and scopes
// with CallerFrom. A token in a URL's query is refused on every checked
// path: it would be kept in proxies' logs and browser history.
func (g *Guard) Wrap(mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.Handle("/mcp", g.check(mcp))
	for _, rt := range g.opts.Routes {
		mux.Handle(rt.Pattern, g.route(rt))
	}
	if g.opts.OAuth != nil {
		// Behind the Host check only: the endpoints are public by design
		// (metadata, registration, token), and the consent page checks its
		// own form's Origin against the issuer, which a tunnel's requests
		// (plain HTTP on loopback) would fail here.
		oauth := http.NewServeMux()
		g.opts.OAuth.Routes(oauth)
		mux.Handle("/.well-known/", g.hostOnly(oauth))
		mux.Handle("/oauth/", g.hostOnly(oauth))
	} else {
		mux.HandleFunc("/.well-known/", jsonNotFound)
		mux.HandleFunc("/oauth/", jsonNotFound)
	}
	return mux
}

// hostOnly refuses a Host off the allow-list (DNS rebinding), as check does.
func (g *Guard) hostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.hostRefused(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostRefused answers 421 to a request whose Host is off the allow-list.
func (g *Guard) hostRefused(w http.ResponseWriter, r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if g.hostAllowed(host) {
		return false
	}
	g.deny(w, r, http.StatusMisdirectedRequest, "host not allowed: add it to cabinet.mcp.allowed_hosts")
	return true
}

func (g *Guard) deny(w http.ResponseWriter, r *http.Request, status int, reason string) {
	g.denied.Add(1)
	if g.opts.OnDenied != nil {
		g.opts.OnDenied(r, status, reason)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", g.challenge(r, r.Header.Get("Authorization") != ""))
	}
	writeDenial(w, status, reason)
}

// writeDenial answers {"error": reason}.
func writeDenial(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"error\":%q}\n", reason)
}

func (g *Guard) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.hostRefused(w, r) {
			return
		}
		if queryToken(r) {
			g.deny(w, r, http.StatusBadRequest, errQueryToken)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(r, origin) {
			g.deny(w, r, http.StatusForbidden, "origin not allowed: add it to cabinet.mcp.allowed_origins")
			return
		}
		if g.opts.Access != nil && hasAssertion(r) {
			g.access(w, r, next)
			return
		}
		now := g.opts.Now()
		if wait := g.throttle.wait(r.RemoteAddr, now); wait > 0 {
			secs := int((wait + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			g.deny(w, r, http.StatusTooManyRequests, fmt.Sprintf("too many failed authentications from this address: try again in %d s", secs))
			return
		}
		auth := r.Header.Get("Authorization")
		got, isBearer := strings.CutPrefix(auth, "Bearer ")
		if !isBearer {
			got = ""
		}
		got = strings.TrimSpace(got)
		caller, hexSum, ok := g.authenticate(got)
		if !ok && g.opts.OAuth != nil && got != "" {
			var err error
			caller, err = g.opts.OAuth.Verify(got)
			ok = err == nil
		}
		if !ok {
			if auth != "" { // a credential that is wrong, not a client asking how to authenticate
				g.throttle.fail(r.RemoteAddr, now)
			}
			g.deny(w, r, http.StatusUnauthorized, "a valid bearer token is required (cabinet token show)")
			return
		}
		g.throttle.forgive(r.RemoteAddr)
		if !caller.OAuth { // the authorization server records its own
			g.noteUse(caller.Name, hexSum, r.RemoteAddr, now)
		}
		if r.ContentLength > g.opts.MaxBody {
			g.deny(w, r, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxBody)
		if caller.OAuth {
			tool, need, err := g.missingScope(r, caller)
			if err != nil {
				g.deny(w, r, http.StatusRequestEntityTooLarge, "request body too large")
				return
			}
			if need != "" {
				g.insufficientScope(w, r, caller, tool, need)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), caller)))
	})
}

// noteUse records a token's use, at most once per UseEvery per token, in
// the background (a write to the state dir must not delay the call).
func (g *Guard) noteUse(name, hexSum, remote string, now time.Time) {
	g.mu.Lock()
	last, seen := g.used[name]
	due := !seen || now.Sub(last) >= g.opts.UseEvery || now.Before(last)
	if due {
		if len(g.used) > 4*MaxTokens { // names of tokens long revoked
			clear(g.used)
		}
		g.used[name] = now
		g.writing++
	}
	g.mu.Unlock()
	if !due {
		return
	}
	addr := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		addr = h
	}
	go func() {
		defer func() {
			g.mu.Lock()
			if g.writing--; g.writing == 0 {
				g.wrote.Broadcast()
			}
			g.mu.Unlock()
		}()
		if err := g.store.recordUse(name, hexSum, now, addr); err != nil && g.opts.OnError != nil {
			g.opts.OnError(fmt.Errorf("record the use of the token %s: %w", name, err))
		}
	}()
}

// Flush waits for the use records being written (tests; the daemon at
// shutdown).
func (g *Guard) Flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.writing > 0 {
		g.wrote.Wait()
	}
}
