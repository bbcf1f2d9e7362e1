package httpauth

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// originAllowed: a browser Origin is allowed when it is one of the
// server's own origins or listed in cabinet.mcp.allowed_origins.
func (g *Guard) originAllowed(r *http.Request, origin string) bool {
	for _, o := range g.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), strings.TrimSuffix(origin, "/")) {
			return true
		}
	}
	return g.ownOrigin(r, origin)
}

// ownOrigin: the Origin is the server's own: the scheme it serves (http,
// or https behind TLS), a host of the Host allow-list and the port this
// connection arrived on. Nothing else: no path, user or query, and not the
// opaque "null".
func (g *Guard) ownOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Opaque != "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	scheme, defPort := "http", "80"
	if r.TLS != nil {
		scheme, defPort = "https", "443"
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		return false
	}
	port := u.Port()
	if port == "" {
		port = defPort
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	_, lport, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	if p, err := strconv.Atoi(port); err != nil || strconv.Itoa(p) != lport {
		return false
	}
	return g.hostAllowed(u.Hostname())
}

// hostAllowed: host (no port) is loopback, one of the machine's names and
// addresses, or in cabinet.mcp.allowed_hosts.
func (g *Guard) hostAllowed(host string) bool {
	return g.hosts[strings.ToLower(strings.Trim(host, "[]"))]
}

// Hosts is the list hostAllowed checks against, sorted: loopback, the
// machine's names and addresses, and Options.AllowedHosts, lowercased and
// without ports. The daemon gives it to mcp-go's own Host check
// (server.WithAllowedHosts), which must let through what this one does.
func (g *Guard) Hosts() []string {
	hosts := make([]string, 0, len(g.hosts))
	for h := range g.hosts { // set by New, never changed
		if h != "" {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	return hosts
}
