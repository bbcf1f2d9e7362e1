// Package cimd resolves OAuth Client ID Metadata Documents
// (draft-ietf-oauth-client-id-metadata-document, the client registration MCP 2026-07-28 prefers)
// for the cabinet's authorization server. A client_id that is an https URL names a JSON document,
// served at that URL by the client's publisher, saying the client's name and redirect URIs.
//
// The package owns the whole trip, because every step of it is reachable by anyone who can send
// the cabinet an authorization request: the URL's shape, which hosts may be asked at all, the
// address check that keeps the fetch off the home network (server-side request forgery), the
// bounded fetch itself, the strict reading of the document, and the cache that spares the
// client's host. The authorization server decides what a Document allows (the exact
// redirect_uri match, the consent screen); this package only says what the client published.
package cimd

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// DefaultHosts are the hosts of the MCP clients found to publish a Client ID Metadata Document,
// each on public evidence (client sources, their merged pull requests, documents other
// authorization servers fetched), September 2026:
//
//   - claude.ai: Claude web, desktop and mobile, https://claude.ai/oauth/mcp-oauth-client-metadata,
//     and Claude Code, https://claude.ai/oauth/claude-code-client-metadata.
//   - chatgpt.com: ChatGPT, https://chatgpt.com/oauth/client.json (per-connector documents under
//     /oauth/{id}/client.json when the server lacks RFC 9207), and Codex,
//     https://chatgpt.com/oauth/codex/client.json (per-server under /oauth/codex/{id}/client.json).
//   - vscode.dev and insiders.vscode.dev: VS Code and VS Code Insiders,
//     https://vscode.dev/oauth/client-metadata.json and its insiders twin.
//   - goose-docs.ai: Goose, https://goose-docs.ai/oauth/client-metadata.json (aaif-goose/goose#8550).
//   - zed.dev: Zed, https://zed.dev/oauth/client-metadata.json (a constant in Zed's source).
//   - opencode.ai: opencode, https://opencode.ai/oauth/opencode/client.json (anomalyco/opencode#47737).
//
// Left out for want of evidence: Cursor (dynamic registration or a static client only; CIMD is
// still a forum request) and MCP Inspector (no document published; modelcontextprotocol/inspector
// #1150 is open). A host here only lets its documents be fetched: every document is still checked
// in full, and the authorization server still asks the user.
var DefaultHosts = []string{
	"claude.ai",
	"chatgpt.com",
	"vscode.dev",
	"insiders.vscode.dev",
	"goose-docs.ai",
	"zed.dev",
	"opencode.ai",
}

// The refusals Get's errors wrap, for the authorization server to choose its answer with
// errors.Is. Only ErrUnavailable is worth retrying as is; the others need the client_id, the
// document or the cabinet's host list changed.
var (
	// ErrClientID: the client_id is not a URL this package will fetch (its shape).
	ErrClientID = errors.New("client_id is not a usable client metadata URL")
	// ErrHost: the URL's host is not on the allowed list.
	ErrHost = errors.New("client metadata host not allowed")
	// ErrAddress: the host's name resolves to an address that is not public (the SSRF guard).
	ErrAddress = errors.New("client metadata host has a non-public address")
	// ErrDocument: the server answered, and what it answered is not a valid document (or is gone).
	ErrDocument = errors.New("client metadata document refused")
	// ErrUnavailable: the document could not be had now (network, timeout, the server's trouble).
	ErrUnavailable = errors.New("client metadata document unavailable")
)

// Tunables of the fetch and the cache. The draft leaves them to the server; these follow the
// MCP authorization spec's guidance (5 KB, a few seconds, minutes to a day of caching).
const (
	maxClientIDLen = 512
	maxBody        = 5 << 10 // bytes of document read; a longer one is refused
	defaultTimeout = 5 * time.Second
	minFresh       = 5 * time.Minute // even no-store: one authorization needs several lookups
	defaultFresh   = time.Hour       // no max-age given
	maxFresh       = 24 * time.Hour
	maxStale       = 7 * 24 * time.Hour // a copy this old is not served even when the host is down
	retryAfter     = 30 * time.Second   // a URL whose fetch failed is not fetched again sooner
	maxEntries     = 64
	maxInFlight    = 8 // distinct URLs fetched at once
)

// HostResolver looks names up; *net.Resolver is one.
type HostResolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Options configure a Fetcher. The zero value is the production setting.
type Options struct {
	// Hosts allowed to serve documents: exact host names, lower case, no port. nil means
	// DefaultHosts; an empty, non-nil list allows none; "*" allows any host whose addresses are
	// all public.
	Hosts []string
	// Resolver resolves host names (nil: net.DefaultResolver). Its answer is checked and then
	// dialed as is, so a second lookup can never swap the address (DNS rebinding).
	Resolver HostResolver
	// Dial connects to a checked address, "ip:port" (nil: a net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// RootCAs verify the host's certificate (nil: the system's roots).
	RootCAs *x509.CertPool
	// Now is the cache's clock (nil: time.Now).
	Now func() time.Time
	// Timeout bounds one fetch: lookup, connection, TLS and the whole answer (0: 5 s).
	Timeout time.Duration
}

// Document is what a client published about itself, checked: ClientID is the URL it was fetched
// from, ClientName and RedirectURIs are present, and TokenEndpointAuthMethod is "none" (the
// client authenticates with PKCE alone; it has no secret). Display text has no control, bidi or
// invisible characters and a bounded length; RedirectURIs are kept byte for byte, since the
// authorization server compares them exactly.
type Document struct {
	ClientID, ClientName, ClientURI, LogoURI string
	RedirectURIs, GrantTypes, ResponseTypes  []string
	TokenEndpointAuthMethod, Scope           string
	SoftwareID, SoftwareVersion              string
}

// IsURL reports whether the authorization server should resolve clientID with Get rather than
// look it up among its registered clients: it starts with "https://" (the scheme in any case, so
// that a client writing HTTPS:// hears from Get why it is refused instead of "unknown client").
// It does not validate; Get does.
func IsURL(clientID string) bool {
	const scheme = "https://"
	return len(clientID) > len(scheme) && strings.EqualFold(clientID[:len(scheme)], scheme)
}

// Get returns the document clientID names, from the cache when it is fresh, else fetched. When a
// refetch fails for a reason that may pass (ErrUnavailable) it returns the last good copy, up to
// seven days old. Errors wrap one of the Err values above and say what to do.
func (f *Fetcher) Get(ctx context.Context, clientID string) (Document, error) {
	t, err := parseClientID(clientID)
	if err != nil {
		return Document{}, err
	}
	if err := f.allow(clientID, t.host); err != nil {
		return Document{}, err
	}
	return f.cached(ctx, clientID, t)
}

// refuse builds Get's errors: which client_id, which refusal, and the detail.
func refuse(kind error, clientID, format string, args ...any) error {
	return fmt.Errorf("client_id %s: %w: %s", show(clientID, 120), kind, fmt.Sprintf(format, args...))
}

// show quotes text that came from outside (a client_id, a server's header), cleaned and cut, so
// an error never carries control characters or unbounded text.
func show(s string, maxRunes int) string {
	return strconv.Quote(untrusted.Clean(s, maxRunes))
}
