// Package oauth is the cabinet's own OAuth 2.1 authorization server for MCP
// (MCP 2026-07-28 authorization): Protected Resource Metadata (RFC 9728) and
// authorization server metadata (RFC 8414), dynamic client registration
// (RFC 7591) and Client ID Metadata Documents, the authorization code grant
// with PKCE S256 only, RFC 8707 resource indicators, RFC 9207 iss on every
// authorization response, rotating refresh tokens inside a 30-day session,
// and revocation (RFC 7009). The consent is confirmed by a PIN shown on the
// cabinet's own screen, so only someone in the room can connect a client.
//
// Tokens are opaque (256 random bits) and kept only as SHA-256 hashes, in
// one file in the state dir (oauth.json) changed under a lock, so the
// `cabinet clients` commands and the daemon never undo each other and a
// revocation takes effect at the next request. Codes and the pending
// consent live in memory: they last seconds to minutes.
package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/oauth/cimd"
)

// The lifetimes (issue 28; Roomote's OAuth MCP server sets the same bar).
const (
	AccessLife      = time.Hour
	SessionLife     = 30 * 24 * time.Hour // a refresh token's family; rotation does not extend it
	CodeLife        = 60 * time.Second
	RequestLife     = 3 * time.Minute // a consent waiting for its PIN
	UnusedClientTTL = time.Hour       // a registration no code exchange followed
	IdleClientTTL   = 90 * 24 * time.Hour
	PINRepeat       = 10 * time.Second // a message over a game lasts about 3 s
	PINTries        = 5
	RequestGap      = 30 * time.Second
	RequestsPerDay  = 20
	WrongPINsPerDay = 20
)

// Paths the server answers.
const (
	PathPRM          = "/.well-known/oauth-protected-resource"
	PathASMetadata   = "/.well-known/oauth-authorization-server"
	PathRegister     = "/oauth/register"
	PathAuthorize    = "/oauth/authorize"
	PathToken        = "/oauth/token"
	PathRevoke       = "/oauth/revoke"
	ResourcePath     = "/mcp"
	AccessPrefix     = "cabinet_at_"
	RefreshPrefix    = "cabinet_rt_"
	CallerPrefix     = "oauth:"
	maxFormBytes     = 16 << 10
	maxRegisterBytes = 16 << 10
)

// Screen shows one line on the cabinet's screen (pairing.CabinetScreen: an
// ES notification, or RetroArch's message over a running game).
type Screen interface {
	Show(ctx context.Context, text string) error
}

// Metadata resolves a client_id that is a URL (cimd.Fetcher).
type Metadata interface {
	Get(ctx context.Context, clientID string) (cimd.Document, error)
}

// Config is the server's setup.
type Config struct {
	// PublicURL is the https URL clients use (cabinet.mcp.public_url): the
	// issuer, and with ResourcePath the resource.
	PublicURL string
	// StatePath is the clients' and grants' file (<state_dir>/oauth.json).
	StatePath string
	Screen    Screen
	// Metadata resolves Client ID Metadata Documents; nil: only registered
	// clients.
	Metadata Metadata
	Clock    clock.Clock
	Log      zerolog.Logger
	// OnChange, when set, is told after the clients' file changed through
	// this server (a registration, a sign-in, a refresh, a revocation, a
	// request noted), in the writer's goroutine: keep it quick.
	OnChange func()
}

// Server is the authorization server. Its handlers are mounted by Routes.
type Server struct {
	cfg      Config
	issuer   string
	resource string
	clock    clock.Clock
	store    *store

	mu       sync.Mutex
	pending  *pending
	codes    map[string]*code     // by the code's hash
	lastNew  time.Time            // the last consent request made
	lastHeld bool                 // whether that request holds the next back (it did not end approved)
	regs     window               // registrations in the last hour
	used     map[string]time.Time // grant → last request recorded
	wg       sync.WaitGroup
}

// New checks cfg and builds the server. PublicURL must be an https origin.
func New(cfg Config) (*Server, error) {
	issuer, err := Issuer(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	if cfg.StatePath == "" {
		return nil, errors.New("oauth: no state file")
	}
	c := clock.Or(cfg.Clock)
	s := &Server{cfg: cfg, issuer: issuer, resource: issuer + ResourcePath, clock: c,
		store: newStore(cfg.StatePath, c.Now, cfg.OnChange), codes: map[string]*code{}, used: map[string]time.Time{}}
	return s, nil
}

// Issuer is the issuer identifier of a public URL: its https origin, with
// no path, query or trailing slash. Anything else is refused with why.
func Issuer(public string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(public))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("cabinet.mcp.public_url %q is not a URL: set it to the https address clients use, such as https://cabinet.tail1234.ts.net:8717", public)
	}
	if !strings.EqualFold(u.Scheme, "https") {
		return "", fmt.Errorf("cabinet.mcp.public_url %q is not https: OAuth is served only over HTTPS (a Tailscale certificate, a tunnel's public URL or an ACME certificate)", public)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("cabinet.mcp.public_url %q: give the origin only (scheme, host and port), such as https://cabinet.tail1234.ts.net:8717", public)
	}
	return "https://" + strings.ToLower(u.Host), nil
}

// Issuer is the server's issuer identifier; Resource the MCP endpoint's
// resource identifier; ResourceMetadataURL where its PRM is.
func (s *Server) Issuer() string              { return s.issuer }
func (s *Server) Resource() string            { return s.resource }
func (s *Server) ResourceMetadataURL() string { return s.issuer + PathPRM + ResourcePath }

// Routes mounts the server's endpoints on mux, each behind Serves. Any
// other path under /.well-known/ answers a JSON 404: clients that meet an
// HTML one give up.
func (s *Server) Routes(mux *http.ServeMux) {
	mux.Handle(PathPRM, s.gate(s.servePRM, true))
	mux.Handle(PathPRM+ResourcePath, s.gate(s.servePRM, true))
	mux.Handle(PathASMetadata, s.gate(s.serveASMetadata, true))
	mux.Handle(PathRegister, s.gate(s.serveRegister, true))
	mux.Handle(PathAuthorize, s.gate(s.serveAuthorize, false))
	mux.Handle(PathToken, s.gate(s.serveToken, true))
	mux.Handle(PathRevoke, s.gate(s.serveRevoke, true))
	mux.Handle("/.well-known/", http.HandlerFunc(NotFound))
}

// Serves says whether OAuth answers r (httpauth.OAuthServes: the guard's
// 401 challenge asks the same).
func Serves(r *http.Request) bool { return httpauth.OAuthServes(r) }

// gate answers the JSON 404 for a request that arrives over plain HTTP
// from the LAN, and for cors endpoints answers preflights and allows any
// origin (they carry no cookie: a browser-based client may call them).
func (s *Server) gate(h http.HandlerFunc, cors bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Serves(r) {
			writeJSON(w, http.StatusNotFound, oauthError{Error: "not_found",
				Description: "OAuth is served only over the cabinet's HTTPS (cabinet.mcp.tls) or through a tunnel on the cabinet; use " + s.issuer})
			return
		}
		if cors {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			if r.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
				w.Header().Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h(w, r)
	})
}

// NotFound is the JSON 404 of the well-known paths that are not served.
func NotFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, oauthError{Error: "not_found", Description: "nothing is served at " + untrustedPath(r.URL.Path)})
}

func untrustedPath(p string) string {
	if len(p) > 100 {
		p = p[:100]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return '?'
		}
		return r
	}, p)
}

// oauthError is an OAuth error response body (RFC 6749 §5.2).
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// newSecret is 256 random bits, base64url without padding.
func newSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("oauth: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// newID is a short random identifier (96 bits, hex).
func newID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("oauth: no randomness: " + err.Error())
	}
	return fmt.Sprintf("%x", b)
}

// CallerOf is the caller a grant's tokens authenticate as.
func CallerOf(clientID string, scopes []string) httpauth.Caller {
	return httpauth.Caller{Name: CallerPrefix + clientID, Scopes: scopes, OAuth: true}
}

// window counts events in a sliding period (registrations per hour).
type window struct{ at []time.Time }

func (w *window) allow(now time.Time, period time.Duration, max int) bool {
	keep := w.at[:0]
	for _, t := range w.at {
		if now.Sub(t) < period && !t.After(now) {
			keep = append(keep, t)
		}
	}
	w.at = keep
	if len(w.at) >= max {
		return false
	}
	w.at = append(w.at, now)
	return true
}
