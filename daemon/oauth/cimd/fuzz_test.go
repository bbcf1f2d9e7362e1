package cimd

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// FuzzParseDocument: never panics; an accepted document is bound to the URL, has what the
// authorization server relies on within its bounds, carries only clean display text, and
// authenticates as a public client; a refusal is ErrDocument with a message fit to show.
func FuzzParseDocument(f *testing.F) {
	f.Add([]byte(docFor(claudeID, nil)), claudeID)
	f.Add([]byte(`{"client_id":"https://a.example.net/c","client_name":"C","redirect_uris":["http://localhost/cb"]}`), "https://a.example.net/c")
	f.Add([]byte(`{"client_id":"x","client_id":"x"}`), "x")
	f.Add([]byte(`{"client_id":"`+claudeID+`","client_name":"\u202eC","redirect_uris":["cursor://a/b"],"token_endpoint_auth_method":"private_key_jwt","token_endpoint_auth_methods_supported":["none"]}`), claudeID)
	f.Add([]byte(`[1,2,3]`), claudeID)
	f.Add([]byte(`{"client_secret":null}`), claudeID)
	f.Fuzz(func(t *testing.T, body []byte, clientID string) {
		d, err := parseDocument(body, clientID)
		if err != nil {
			if !errors.Is(err, ErrDocument) {
				t.Fatalf("refusal %v does not wrap ErrDocument", err)
			}
			if d.ClientID != "" || d.RedirectURIs != nil {
				t.Fatalf("refusal came with a document %+v", d)
			}
			checkMessage(t, err)
			return
		}
		switch {
		case d.ClientID != clientID:
			t.Fatalf("ClientID %q, fetched from %q", d.ClientID, clientID)
		case d.TokenEndpointAuthMethod != "none":
			t.Fatalf("TokenEndpointAuthMethod %q", d.TokenEndpointAuthMethod)
		case len(d.RedirectURIs) == 0 || len(d.RedirectURIs) > maxRedirectURIs:
			t.Fatalf("%d redirect URIs", len(d.RedirectURIs))
		case d.ClientName == "":
			t.Fatal("no ClientName")
		case len(d.GrantTypes) > maxListLen || len(d.ResponseTypes) > maxListLen:
			t.Fatalf("lists too long: %d, %d", len(d.GrantTypes), len(d.ResponseTypes))
		}
		for _, r := range d.RedirectURIs {
			if why := checkRedirect(r); why != "" {
				t.Fatalf("accepted redirect %q that %s", r, why)
			}
			if u, err := url.Parse(r); err != nil || u.Scheme == "" || u.Fragment != "" {
				t.Fatalf("accepted redirect %q", r)
			}
		}
		for _, s := range []struct {
			v   string
			max int
		}{{d.ClientName, maxNameRunes}, {d.Scope, maxScopeRunes}, {d.SoftwareID, maxIDRunes}, {d.SoftwareVersion, maxWordRunes}} {
			if untrusted.Clean(s.v, s.max) != s.v {
				t.Fatalf("display text %q is not clean", s.v)
			}
		}
		for _, u := range []string{d.ClientURI, d.LogoURI} {
			if u != "" && !strings.HasPrefix(u, "https://") {
				t.Fatalf("link %q is not https", u)
			}
		}
	})
}

// FuzzClientIDURL: never panics; an accepted client_id is what IsURL routes to Get, and is the
// plain https URL the draft asks for: short, ASCII, no user info, query or fragment, a path of
// no dot segments, and a host name (never an address) the fetch can name in TLS.
func FuzzClientIDURL(f *testing.F) {
	for _, s := range []string{
		claudeID, "https://claude.ai:8443/x", "https://claude.ai/", "https://claude.ai/a/../b",
		"https://claude.ai/%2e%2e", "https://u@claude.ai/x", "https://[::1]/x", "https://0x7f.1/x",
		"https://claude.ai/x?y#z", "HTTPS://claude.ai/x", "https://claude.ai:0443/x", "https://a.b/\u202e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := parseClientID(s)
		if err != nil {
			if !errors.Is(err, ErrClientID) {
				t.Fatalf("refusal %v does not wrap ErrClientID", err)
			}
			checkMessage(t, err)
			return
		}
		if !IsURL(s) {
			t.Fatalf("accepted %q, which IsURL does not route to Get", s)
		}
		u, err := url.Parse(s)
		switch {
		case len(s) > maxClientIDLen:
			t.Fatalf("accepted %d bytes", len(s))
		case err != nil:
			t.Fatalf("accepted %q, which url.Parse refuses: %v", s, err)
		case u.Scheme != "https" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, "?#"):
			t.Fatalf("accepted %q", s)
		case u.Hostname() != tg.host || tg.port == 0 || !strings.HasPrefix(s, "https://"+tg.host):
			t.Fatalf("accepted %q as host %q port %d", s, tg.host, tg.port)
		case u.Path == "" || u.Path == "/":
			t.Fatalf("accepted %q without a path", s)
		case checkDNSName(tg.host) != nil || strings.ToLower(tg.host) != tg.host:
			t.Fatalf("accepted host %q", tg.host)
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("accepted %q with a dot segment", s)
			}
		}
		for _, r := range s {
			if r <= ' ' || r >= 0x7f {
				t.Fatalf("accepted %q with %U", s, r)
			}
		}
	})
}
