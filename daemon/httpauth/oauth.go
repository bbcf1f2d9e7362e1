package httpauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
)

// OAuthServer is the cabinet's authorization server (package oauth) as the
// guard uses it: its endpoints, mounted beside /mcp behind the Host check
// only, and the check of its access tokens.
type OAuthServer interface {
	Routes(mux *http.ServeMux)
	// Verify returns the caller of an access token it issued, or an error.
	Verify(tok string) (Caller, error)
	ResourceMetadataURL() string
}

// OAuthServes says whether OAuth answers r: over the cabinet's own TLS, or
// from a proxy on the cabinet itself (a tunnel's local daemon: cloudflared,
// tailscale serve/funnel), whose clients see the https public URL.
func OAuthServes(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// challenge is the 401's WWW-Authenticate: where OAuth is served, the
// protected resource metadata (RFC 9728 §5.1) and the scopes a client
// should ask for; otherwise the bearer realm of the static tokens.
func (g *Guard) challenge(r *http.Request, hadToken bool) string {
	if g.opts.OAuth == nil || !OAuthServes(r) {
		return `Bearer realm="cabinet"`
	}
	c := fmt.Sprintf(`Bearer resource_metadata=%q, scope=%q`, g.opts.OAuth.ResourceMetadataURL(), strings.Join(DefaultTokenScopes, " "))
	if hadToken {
		c += `, error="invalid_token", error_description="the token is not valid: refresh it or sign in again"`
	}
	return c
}

// jsonNotFound answers the OAuth paths with JSON when OAuth is off: MCP
// clients that meet an HTML 404 on a well-known path give up.
func jsonNotFound(w http.ResponseWriter, r *http.Request) {
	writeDenial(w, http.StatusNotFound, "OAuth sign-in is off on this cabinet (cabinet.mcp.oauth): use a bearer token (cabinet token show)")
}

// rpcCall is what the scope check reads of a JSON-RPC request.
type rpcCall struct {
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// missingScope reads the body of an OAuth caller's POST (then puts it
// back) and names the scope a tool it calls needs and the token lacks: the
// guard answers 403 insufficient_scope, and the client can ask the person
// for more (MCP's step-up authorization). "" when nothing is missing.
func (g *Guard) missingScope(r *http.Request, c Caller) (tool, scope string, err error) {
	if g.opts.ToolScope == nil || r.Method != http.MethodPost {
		return "", "", nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	var calls []rpcCall
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		json.Unmarshal(trimmed, &calls)
	} else {
		var one rpcCall
		if json.Unmarshal(trimmed, &one) == nil {
			calls = []rpcCall{one}
		}
	}
	// A body that is not JSON-RPC is the MCP server's to refuse.
	for _, call := range calls {
		if call.Method != "tools/call" {
			continue
		}
		if need := g.opts.ToolScope(call.Params.Name); need != "" && !slices.Contains(c.Scopes, need) {
			return call.Params.Name, need, nil
		}
	}
	return "", "", nil
}

// insufficientScope answers 403 with the step-up challenge: every scope
// the token had and the one the call needs, in one challenge.
func (g *Guard) insufficientScope(w http.ResponseWriter, r *http.Request, c Caller, tool, need string) {
	want := normalScopes(append(slices.Clone(c.Scopes), need))
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q, error_description=%q`,
		strings.Join(want, " "), g.opts.OAuth.ResourceMetadataURL(), "the tool "+clipName(tool)+" needs the scope "+need))
	g.denied.Add(1)
	if g.opts.OnDenied != nil {
		g.opts.OnDenied(r, http.StatusForbidden, "insufficient scope: "+clipName(tool)+" needs "+need)
	}
	writeDenial(w, http.StatusForbidden, "insufficient_scope: the tool "+clipName(tool)+" needs the scope "+need+"; sign in again granting it")
}

// clipName keeps a tool name from a request printable and short.
func clipName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}
