// Package cfaccess verifies Cloudflare Access assertions: the JWT that Access
// puts in the Cf-Access-Jwt-Assertion header of every request it lets
// through to an application. It owns the Access signing keys (fetched from
// the team's certs URL, cached by kid) and the decision whether an assertion
// names an identity the cabinet accepts.
//
// The checks run cheapest first, and each refuses before anything dearer is
// done, because anyone who can reach the endpoint can send assertions:
//
//  1. size, shape and alphabet of the string (no parsing at all);
//  2. the header parses and alg is exactly RS256 (Access signs with nothing
//     else), so "none", HMAC forgeries keyed with the public key and other
//     algorithms never reach a key lookup, let alone a fetch;
//  3. the claims parse and, still unverified, name our issuer and audience,
//     have not expired, are not from the future and carry an allowed
//     e-mail: junk and replays from elsewhere cost a JSON parse;
//  4. the kid is known, or fetchable: only an assertion that got this far
//     can make us fetch keys, at most once per RefetchEvery;
//  5. the RSA signature, through golang-jwt, which validates the claims
//     again with the same rules once they are known to be Access's.
//
// A forgery that reaches step 5 must copy a real issuer, audience and
// unexpired time, and then costs one RSA public-key operation (tens of
// microseconds with e = 65537; see BenchmarkVerify). Valid assertions are
// never throttled: nothing but their own validity decides them. Refusals
// share one failure budget (a token bucket, FailBurst and FailRate) whose
// only effect is to say that a flood is under way (Flooding), so a caller can
// stop logging each refusal; it refuses nothing and suppresses no key fetch,
// because a flood that coincided with a key rotation would otherwise lock
// real users out. Key fetches are bounded by RefetchEvery alone.
package cfaccess

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MaxAssertionBytes bounds the assertion; Access's are around 1 KiB, and
// anything longer is refused before it is decoded.
const MaxAssertionBytes = 8 << 10

// Identity is who a valid assertion speaks for.
type Identity struct {
	// Email is the user's address; "" for a service token.
	Email string
	// Subject is the user's sub, or a service token's common_name.
	Subject string
	// Expires is when the assertion stops being valid (its exp).
	Expires time.Time
}

// Verifier checks assertions; it is safe for concurrent use.
type Verifier struct {
	issuer   string
	audience string
	emails   map[string]bool // whole addresses, lower case
	domains  map[string]bool // from "@domain" entries, lower case
	now      func() time.Time
	leeway   time.Duration
	parser   *jwt.Parser
	keys     *keySource
	budget   *budget
	stats    *counters
}

// claims are the parts of an Access assertion we read.
type claims struct {
	jwt.RegisteredClaims
	Email      string `json:"email"`
	CommonName string `json:"common_name"`
}

// Verify checks assertion (the Cf-Access-Jwt-Assertion header) and returns
// the identity it speaks for. Every error is an *Error whose Reason is safe
// to send to the client. ctx bounds only the wait for keys being fetched.
func (v *Verifier) Verify(ctx context.Context, assertion string) (Identity, error) {
	id, refusal := v.verify(ctx, assertion)
	if refusal != nil {
		v.stats.countRefusal(refusal.reason)
		if !v.budget.take() {
			v.stats.budgetExhausted.Add(1)
		}
		return Identity{}, refusal
	}
	v.stats.accepted.Add(1)
	return id, nil
}

func (v *Verifier) verify(ctx context.Context, assertion string) (Identity, *Error) {
	switch {
	case assertion == "":
		return Identity{}, refuse(ReasonMissing, "", nil)
	case len(assertion) > MaxAssertionBytes:
		return Identity{}, refuse(ReasonTooLarge, fmt.Sprintf("%d bytes, at most %d", len(assertion), MaxAssertionBytes), nil)
	case !wellFormed(assertion):
		return Identity{}, refuse(ReasonMalformed, "not three base64url parts", nil)
	}
	var c claims
	var early *Error // a refusal from the key function, before any signature work
	checked := false
	tok, err := v.parser.ParseWithClaims(assertion, &c, func(t *jwt.Token) (any, error) {
		key, refusal := v.precheck(ctx, t, &c)
		if refusal != nil {
			early = refusal
			return nil, refusal
		}
		checked = true
		v.stats.signatureChecks.Add(1)
		return key, nil
	})
	switch {
	case err == nil:
		return v.identity(&c), nil
	case early != nil:
		return Identity{}, early
	case tok != nil && tok.Header != nil && tok.Header["alg"] != "RS256":
		return Identity{}, refuse(ReasonAlgorithm, "", err)
	case checked && errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return Identity{}, refuse(ReasonSignature, "", err)
	}
	return Identity{}, fromJWT(err)
}

// precheck runs in golang-jwt's key function: after the header and claims
// have parsed and alg was found to be RS256, before the signature. It makes
// the cheap checks on the still unverified claims, then finds the key.
func (v *Verifier) precheck(ctx context.Context, t *jwt.Token, c *claims) (*rsa.PublicKey, *Error) {
	kid, _ := t.Header["kid"].(string)
	now := v.now()
	switch {
	case kid == "":
		return nil, refuse(ReasonUnknownKey, "the header names no key id", nil)
	case c.Issuer != v.issuer:
		return nil, refuse(ReasonIssuer, "", nil)
	case !slices.Contains(c.Audience, v.audience):
		return nil, refuse(ReasonAudience, "", nil)
	case c.ExpiresAt == nil:
		return nil, refuse(ReasonMalformed, "no exp claim", nil)
	case !now.Before(c.ExpiresAt.Add(v.leeway)):
		return nil, refuse(ReasonExpired, "", nil)
	case c.NotBefore != nil && now.Before(c.NotBefore.Add(-v.leeway)):
		return nil, refuse(ReasonNotYetValid, "nbf is in the future", nil)
	case c.IssuedAt != nil && now.Before(c.IssuedAt.Add(-v.leeway)):
		return nil, refuse(ReasonNotYetValid, "iat is in the future", nil)
	}
	if refusal := v.allowed(c.Email); refusal != nil {
		return nil, refusal
	}
	return v.keys.lookup(ctx, kid)
}

// allowed applies AllowedEmails. An empty email is a service token, which an
// allow-list of e-mail addresses cannot name, so it is refused by any list.
func (v *Verifier) allowed(email string) *Error {
	if len(v.emails) == 0 && len(v.domains) == 0 {
		return nil
	}
	if email == "" {
		return refuse(ReasonNoEmail, "a service token, and cabinet.mcp.cf_access.allowed_emails is set", nil)
	}
	e := strings.ToLower(email)
	if v.emails[e] {
		return nil
	}
	if at := strings.LastIndexByte(e, '@'); at >= 0 && v.domains[e[at+1:]] {
		return nil
	}
	// The address goes to the log (Error), never to the client (Reason).
	return refuse(ReasonEmail, fmt.Sprintf("%q is not in cabinet.mcp.cf_access.allowed_emails", email), nil)
}

func (v *Verifier) identity(c *claims) Identity {
	id := Identity{Email: c.Email, Subject: c.Subject, Expires: c.ExpiresAt.Time}
	if c.Email == "" && c.CommonName != "" {
		id.Subject = c.CommonName
	}
	return id
}

// Refresh fetches the keys now, ignoring RefetchEvery: for a start-up or
// doctor check that the certs URL works. A failure keeps the keys held.
func (v *Verifier) Refresh(ctx context.Context) error {
	if err := v.keys.refresh(ctx); err != nil {
		return fmt.Errorf("cf access: %w", err)
	}
	return nil
}

// Flooding reports whether refusals have emptied the failure budget: more
// than FailBurst of them, faster than FailRate a second. It changes no
// decision; it is for a caller that wants to log a flood once rather than
// every refusal in it.
func (v *Verifier) Flooding() bool { return !v.budget.available() }

// Stats returns the counters since New.
func (v *Verifier) Stats() Stats {
	st := Stats{
		Accepted:            v.stats.accepted.Load(),
		Refused:             make(map[Reason]uint64, len(reasons)),
		SignatureChecks:     v.stats.signatureChecks.Load(),
		BudgetExhausted:     v.stats.budgetExhausted.Load(),
		Fetches:             v.stats.fetches.Load(),
		FetchFailures:       v.stats.fetchFailures.Load(),
		RefetchesSuppressed: v.stats.refetchesSuppressed.Load(),
	}
	for i, r := range reasons {
		st.Refused[r] = v.stats.refused[i].Load()
	}
	v.keys.snapshot(&st)
	return st
}

// fromJWT maps a golang-jwt error that no earlier check caught. The claim
// checks normally refuse in precheck; these cover the clock moving between
// precheck and golang-jwt's own validation.
func fromJWT(err error) *Error {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return refuse(ReasonExpired, "", err)
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return refuse(ReasonNotYetValid, "", err)
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return refuse(ReasonAudience, "", err)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return refuse(ReasonIssuer, "", err)
	}
	return refuse(ReasonMalformed, "", err)
}

// wellFormed reports whether s is three base64url parts and nothing else, so
// that no later step sees line breaks (which base64 decoders skip) or other
// bytes a header could not have carried.
func wellFormed(s string) bool {
	dots := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dots++
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return dots == 2
}
