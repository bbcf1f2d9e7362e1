package httpauth

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/cfaccess"
)

// AccessHeader is where Cloudflare Access puts its assertion on every
// request it lets through to the tunnel.
const AccessHeader = "Cf-Access-Jwt-Assertion"

// AccessCallerPrefix starts the Caller name of an Access identity, so the
// logs and the tools tell it from a bearer token's name.
const AccessCallerPrefix = "cf-access:"

// AccessVerifier checks a Cloudflare Access assertion (cfaccess.Verifier).
type AccessVerifier interface {
	Verify(ctx context.Context, assertion string) (cfaccess.Identity, error)
	// Flooding says refusals come faster than the verifier's failure
	// budget refills; the guard then logs the flood once, not each one.
	Flooding() bool
}

// DefaultAccessScopes are an Access identity's scopes unless
// cabinet.mcp.cf_access.scopes says otherwise: a tunnel reaches the cabinet
// from anywhere, so power and household are only ever granted by name.
var DefaultAccessScopes = []string{ScopeRead, ScopePlay}

// hasAssertion tells whether the request names an Access assertion at all,
// an empty one included: a header without a token is a forgery to refuse,
// not a request to hand to the bearer check.
func hasAssertion(r *http.Request) bool {
	_, ok := r.Header[http.CanonicalHeaderKey(AccessHeader)]
	return ok
}

// access decides a request that carries an assertion, by the assertion
// alone: any Authorization header beside it (Access's own sign-in may add
// one) is ignored, and the per-peer throttle is neither asked nor told,
// because behind the tunnel every request comes from cloudflared's address,
// and a flood of forgeries must not get the real user refused with it.
func (g *Guard) access(w http.ResponseWriter, r *http.Request, next http.Handler) {
	values := r.Header.Values(AccessHeader)
	var assertion string
	if len(values) == 1 {
		assertion = values[0]
	}
	var (
		id  cfaccess.Identity
		err error
	)
	if len(values) > 1 {
		// Two assertions cannot both be the one Access sent.
		err = errTwoAssertions
	} else {
		id, err = g.opts.Access.Verify(r.Context(), assertion)
	}
	if err != nil {
		g.accessDenied(w, r, err)
		return
	}
	name := id.Email
	if name == "" {
		name = id.Subject // a service token
	}
	caller := Caller{Name: AccessCallerPrefix + name, Scopes: slices.Clone(g.accessScopes)}
	if r.ContentLength > g.opts.MaxBody {
		g.deny(w, r, http.StatusRequestEntityTooLarge, "request body too large")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxBody)
	next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), caller)))
}

// errTwoAssertions refuses a request with two assertion headers (reason
// "assertion malformed").
var errTwoAssertions = errors.New("cf access: more than one " + AccessHeader + " header")

// accessDenied answers 403 with the verifier's safe reason (never the token
// or a claim) and logs the detailed error, which may name the refused
// e-mail but never carries the token. While a flood is under way only its
// first refusal is logged, as the flood's.
func (g *Guard) accessDenied(w http.ResponseWriter, r *http.Request, err error) {
	reason := string(cfaccess.ReasonOf(err))
	logged := err.Error()
	flooding := g.opts.Access.Flooding()
	switch {
	case flooding && g.accessFlood.Swap(true):
		logged = "" // already reported
	case flooding:
		logged = "a flood of invalid Cloudflare Access assertions: each is refused with 403 and no longer logged; valid assertions still pass (first: " + logged + ")"
	default:
		g.accessFlood.Store(false)
	}
	g.denied.Add(1)
	if logged != "" && g.opts.OnDenied != nil {
		g.opts.OnDenied(r, http.StatusForbidden, logged)
	}
	writeDenial(w, http.StatusForbidden, "cloudflare access: "+reason)
}

// accessScopesOf is the scopes an Access identity gets: those given, in the
// order of Scopes, or DefaultAccessScopes when none are.
func accessScopesOf(given []string) []string {
	if len(given) == 0 {
		return slices.Clone(DefaultAccessScopes)
	}
	return normalScopes(given)
}

// ParseScopeList reads a scope list separated by commas or blanks
// (cabinet.mcp.cf_access.scopes=read play), as ParseScopes does.
func ParseScopeList(s string) ([]string, error) {
	return ParseScopes(strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }), ","))
}
