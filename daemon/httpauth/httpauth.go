// Package httpauth guards Cabinet's MCP endpoint on the LAN: a bearer token
// kept 0600 in the state dir and compared in constant time, a Host header
// allow-list against DNS rebinding, refusal of browser Origins that are not
// allowed, a cap on request bodies, and an unauthenticated GET /healthz.
package httpauth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// minTokenLen: shorter tokens are refused (a user may write the file).
const minTokenLen = 32

// NewToken writes a new random token (32 random bytes, base64url: 43
// characters) to path with mode 0600 and returns it.
func NewToken(path string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	os.Chmod(tmp, 0o600)
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	return tok, nil
}

// ErrNoToken means no token has been created yet.
var ErrNoToken = errors.New("no MCP token yet: run `cabinet token new`")

// ReadToken reads the token file.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoToken
	}
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenLen {
		return "", fmt.Errorf("the token in %s is shorter than %d characters: run `cabinet token new`", path, minTokenLen)
	}
	return tok, nil
}

// EnsureToken returns the token, creating one the first time.
func EnsureToken(path string) (string, error) {
	tok, err := ReadToken(path)
	if errors.Is(err, ErrNoToken) {
		return NewToken(path)
	}
	return tok, err
}

// Options configure the guard.
type Options struct {
	TokenPath string
	// AllowedHosts are extra Host header values (cabinet.mcp.allowed_hosts);
	// loopback and the machine's own names and addresses are always allowed.
	AllowedHosts []string
	// AllowedOrigins are browser origins allowed to call (cabinet.mcp.allowed_origins).
	AllowedOrigins []string
	MaxBody        int64 // default 1 MiB
	// OnDenied is told about refusals (never the token) for logging.
	OnDenied func(r *http.Request, status int, reason string)
}

// Guard wraps the MCP handler.
type Guard struct {
	opts   Options
	hosts  map[string]bool
	mu     sync.Mutex
	tok    string
	tokMod time.Time
	denied atomic.Int64
}

// New builds a guard. The machine's names and addresses are read once.
func New(opts Options) *Guard {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	g := &Guard{opts: opts, hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
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

// Denied counts refused requests.
func (g *Guard) Denied() int64 { return g.denied.Load() }

// token returns the current token, re-read when the file changed (so
// `cabinet token new` takes effect without a restart).
func (g *Guard) token() string {
	fi, err := os.Stat(g.opts.TokenPath)
	if err != nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !fi.ModTime().Equal(g.tokMod) || g.tok == "" {
		tok, err := ReadToken(g.opts.TokenPath)
		if err != nil {
			return ""
		}
		g.tok, g.tokMod = tok, fi.ModTime()
	}
	return g.tok
}

// Wrap returns a handler serving /healthz openly and mcp at /mcp behind the
// checks.
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
	return mux
}

func (g *Guard) deny(w http.ResponseWriter, r *http.Request, status int, reason string) {
	g.denied.Add(1)
	if g.opts.OnDenied != nil {
		g.opts.OnDenied(r, status, reason)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cabinet"`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"error\":%q}\n", reason)
}

func (g *Guard) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.ToLower(strings.Trim(host, "[]"))
		if !g.hosts[host] {
			g.deny(w, r, http.StatusMisdirectedRequest, "host not allowed: add it to cabinet.mcp.allowed_hosts")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
			g.deny(w, r, http.StatusForbidden, "origin not allowed: add it to cabinet.mcp.allowed_origins")
			return
		}
		want := g.token()
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if want == "" || !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) != 1 {
			g.deny(w, r, http.StatusUnauthorized, "a valid bearer token is required (cabinet token show)")
			return
		}
		if r.ContentLength > g.opts.MaxBody {
			g.deny(w, r, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxBody)
		next.ServeHTTP(w, r)
	})
}

func (g *Guard) originAllowed(origin string) bool {
	for _, o := range g.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), strings.TrimSuffix(origin, "/")) {
			return true
		}
	}
	return false
}
