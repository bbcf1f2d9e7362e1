package httpauth

import (
	"net/http"
	"slices"
	"strings"
)

// Route is a path served beside /mcp for another package (package events'
// /events and /marquee): always behind the Host check; unless Open, behind
// the same checks as /mcp (Origin, a token or an Access assertion, the
// throttle, the body cap) for a caller holding Scope.
type Route struct {
	// Pattern is a ServeMux pattern, with its method: "GET /events" (GET
	// answers HEAD too; another method gets 405).
	Pattern string
	Handler http.Handler
	// Open: served with no token, behind the Host check only. For a page
	// that is HTML without data: the data it shows needs the token.
	Open bool
	// Scope is the scope the caller needs (default ScopeRead).
	Scope string
}

// queryTokenKeys are query parameters that would carry a token in a URL,
// where proxies, browser history and access logs keep it.
var queryTokenKeys = []string{"token", "access_token", "bearer", "bearer_token"}

// queryToken says whether the request names a token in its query.
func queryToken(r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false
	}
	q := r.URL.Query()
	for _, k := range queryTokenKeys {
		if q.Has(k) {
			return true
		}
	}
	return false
}

// errQueryToken is the refusal of a token in the query (never echoed, nor
// logged: the denial logger is given the reason, not the URL).
const errQueryToken = "a token in the address's query is refused: send it in the Authorization header " +
	"(the marquee page takes it from the address's #token=… instead); it may have been logged on its way, so replace it (cabinet token new)"

// route is rt's handler with its checks.
func (g *Guard) route(rt Route) http.Handler {
	if rt.Open {
		return g.hostOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if queryToken(r) {
				g.deny(w, r, http.StatusBadRequest, errQueryToken)
				return
			}
			rt.Handler.ServeHTTP(w, r)
		}))
	}
	scope := rt.Scope
	if scope == "" {
		scope = ScopeRead
	}
	path := rt.Pattern
	if _, p, ok := strings.Cut(path, " "); ok {
		path = p
	}
	return g.check(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := CallerFrom(r.Context())
		if !slices.Contains(c.Scopes, scope) {
			g.deny(w, r, http.StatusForbidden, "insufficient_scope: "+path+" needs a token with the scope "+scope+
				" (cabinet token new --name NAME --scope "+scope+")")
			return
		}
		rt.Handler.ServeHTTP(w, r)
	}))
}
