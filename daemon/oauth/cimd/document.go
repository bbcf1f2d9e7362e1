package cimd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds of a document's fields. Display text is cut to fit (a long name is not wrong, just
// long); lists over their bound and redirect URIs over theirs are refused (cutting those would
// change what the client registered).
const (
	maxRedirectURIs = 20
	maxRedirectLen  = 2048
	maxListLen      = 20 // grant_types, response_types, token_endpoint_auth_methods_supported
	maxURILen       = 2048
	maxNameRunes    = 100
	maxScopeRunes   = 1000
	maxWordRunes    = 100 // a grant type, a software version
	maxIDRunes      = 200 // software_id
)

// secretMethods are the token endpoint methods built on a shared secret, which the draft
// forbids a metadata document: anyone can read the document, so a secret in it is no secret.
var secretMethods = []string{"client_secret_basic", "client_secret_post", "client_secret_jwt"}

// parseDocument reads a document strictly: one JSON object and nothing after it, no member
// twice (two client_ids would let two readers disagree), member names matched exactly, each
// known member of its type. Unknown members are allowed, as the draft wants.
func parseDocument(body []byte, clientID string) (Document, error) {
	bad := func(format string, args ...any) (Document, error) {
		return Document{}, refuse(ErrDocument, clientID, format, args...)
	}
	m, err := members(body)
	if err != nil {
		return bad("%s; the client's publisher has to fix its document", err)
	}
	for _, name := range []string{"client_secret", "client_secret_expires_at"} {
		if _, ok := m[name]; ok {
			return bad("it has a %s; a public metadata document must not carry a secret, so this cabinet does not use it", name)
		}
	}

	var d Document
	id, ok, err := m.str("client_id")
	switch {
	case err != nil:
		return bad("%s", err)
	case !ok:
		return bad("it has no client_id")
	case id != clientID:
		return bad("its client_id is %s, not the URL it was fetched from; a client must use its document's own URL", show(id, 120))
	}
	d.ClientID = id

	name, ok, err := m.str("client_name")
	if err != nil {
		return bad("%s", err)
	}
	if d.ClientName = untrusted.Clean(name, maxNameRunes); !ok || d.ClientName == "" {
		return bad("it has no client_name; this cabinet shows the name when it asks you to allow the client")
	}

	redirects, ok, err := m.strs("redirect_uris", maxRedirectURIs)
	switch {
	case err != nil:
		return bad("%s", err)
	case !ok || len(redirects) == 0:
		return bad("it has no redirect_uris")
	}
	for i, r := range redirects {
		if why := checkRedirect(r); why != "" {
			return bad("redirect_uris[%d] %s", i, why)
		}
	}
	d.RedirectURIs = redirects

	if d.TokenEndpointAuthMethod, err = authMethod(m); err != nil {
		return bad("%s", err)
	}

	for _, l := range []struct {
		name string
		to   *[]string
	}{{"grant_types", &d.GrantTypes}, {"response_types", &d.ResponseTypes}} {
		vs, _, err := m.strs(l.name, maxListLen)
		if err != nil {
			return bad("%s", err)
		}
		for _, v := range vs {
			if v = untrusted.Clean(v, maxWordRunes); v != "" {
				*l.to = append(*l.to, v)
			}
		}
	}
	for _, s := range []struct {
		name string
		to   *string
		max  int // runes of text; 0: a URI, kept only when it is https
	}{
		{"client_uri", &d.ClientURI, 0},
		{"logo_uri", &d.LogoURI, 0},
		{"scope", &d.Scope, maxScopeRunes},
		{"software_id", &d.SoftwareID, maxIDRunes},
		{"software_version", &d.SoftwareVersion, maxWordRunes},
	} {
		v, _, err := m.str(s.name)
		if err != nil {
			return bad("%s", err)
		}
		if s.max > 0 {
			*s.to = untrusted.Clean(v, s.max)
		} else if webURL(v) {
			*s.to = v
		}
	}
	return d, nil
}

// authMethod settles how the client authenticates at the token endpoint, which for this
// cabinet is always "none" (PKCE alone). A document without the member means none; one with a
// shared-secret method is refused; one preferring another method (ChatGPT prefers
// private_key_jwt) is accepted when its token_endpoint_auth_methods_supported offers "none",
// since the client then falls back to it (the RP metadata choices of OpenID Connect).
func authMethod(m object) (string, error) {
	method, ok, err := m.str("token_endpoint_auth_method")
	if err != nil || !ok || method == "none" {
		return "none", err
	}
	if slices.Contains(secretMethods, method) {
		return "", fmt.Errorf("it asks for token_endpoint_auth_method %s, a shared secret, which a public metadata document must not use", method)
	}
	supported, _, err := m.strs("token_endpoint_auth_methods_supported", maxListLen)
	if err != nil {
		return "", err
	}
	if !slices.Contains(supported, "none") {
		return "", fmt.Errorf("it asks for token_endpoint_auth_method %s; this cabinet accepts only public clients (none, with PKCE)", show(method, 40))
	}
	return "none", nil
}

// checkRedirect says what is wrong with a redirect URI, or "": a URL written plainly (no
// spaces or controls, so it compares as the client will send it), absolute, without a fragment
// or user info; http only to this device's loopback (RFC 8252), and no scheme a browser runs.
func checkRedirect(r string) string {
	if r == "" || len(r) > maxRedirectLen {
		return fmt.Sprintf("is empty or longer than %d bytes", maxRedirectLen)
	}
	for i := 0; i < len(r); i++ {
		if r[i] <= ' ' || r[i] >= 0x7f {
			return "has a space, a control character or a character outside ASCII"
		}
	}
	u, err := url.Parse(r)
	switch {
	case err != nil || u.Scheme == "":
		return "is not an absolute URL"
	case strings.Contains(r, "#"):
		return "has a fragment (#)"
	case u.User != nil:
		return "has a user name or password"
	}
	switch strings.ToLower(u.Scheme) {
	case "javascript", "data", "file", "vbscript", "blob", "about":
		return fmt.Sprintf("uses the %s: scheme", strings.ToLower(u.Scheme))
	case "https":
		if u.Host == "" {
			return "has no host"
		}
	case "http":
		if !loopback(u.Hostname()) {
			return "uses http to a host other than this device's loopback; only https may leave the device"
		}
	}
	return ""
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// webURL reports whether s is an https URL fit to show as a link (client_uri, logo_uri).
func webURL(s string) bool {
	if s == "" || len(s) > maxURILen || !strings.HasPrefix(s, "https://") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != "" && u.User == nil
}

// object is a document's members, undecoded.
type object map[string]json.RawMessage

// members splits body into its top-level members.
func members(body []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("it is not a JSON object")
	}
	m := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("it is not valid JSON")
		}
		key, _ := tok.(string)
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("it has %s twice", show(key, 40))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("it is not valid JSON")
		}
		m[key] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("it is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("it has more after its JSON object")
	}
	return m, nil
}

// str reads a string member; a missing or null one is absent (ok false).
func (m object) str(name string) (v string, ok bool, err error) {
	raw := bytes.TrimSpace(m[name])
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	if raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", false, fmt.Errorf("its %s is not a string", name)
	}
	return v, true, nil
}

// strs reads a list of strings of at most max items; a missing or null one is absent.
func (m object) strs(name string, max int) ([]string, bool, error) {
	raw := bytes.TrimSpace(m[name])
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, false, fmt.Errorf("its %s is not a list", name)
	}
	if len(items) > max {
		return nil, false, fmt.Errorf("its %s has %d items; this cabinet accepts at most %d", name, len(items), max)
	}
	vs := make([]string, 0, len(items))
	for _, it := range items {
		var v string
		if it = bytes.TrimSpace(it); len(it) == 0 || it[0] != '"' || json.Unmarshal(it, &v) != nil {
			return nil, false, fmt.Errorf("its %s has an item that is not a string", name)
		}
		vs = append(vs, v)
	}
	return vs, true, nil
}
