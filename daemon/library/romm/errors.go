package romm

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels for errors.Is. Every error the Client returns wraps at most one of them, and its text
// already says what to do, so callers can show it as it is.
var (
	// ErrUnauthorized: RomM did not accept the credential (missing, wrong, expired or revoked
	// token), or — on RomM up to 5.1, which answers 403 for both — lacked a scope.
	ErrUnauthorized = errors.New("RomM refused the token")
	// ErrMissingScope: RomM (5.2 and later) accepted the token but it lacks the scope the route
	// needs. errors.As gives the *ScopeError naming it.
	ErrMissingScope = errors.New("RomM token lacks a scope")
	// ErrUnsupported: the RomM version is too old for the request (or for client tokens).
	ErrUnsupported = errors.New("not supported by this RomM version")
	// ErrNotRomM: the server answered, but not like RomM's API (HTML, no heartbeat).
	ErrNotRomM = errors.New("not RomM's API")
	// ErrTooLarge: an answer went over its size bound.
	ErrTooLarge = errors.New("RomM's answer is too large")
	// ErrNotFound: RomM answered 404.
	ErrNotFound = errors.New("not found in RomM")
	// ErrBadData: RomM's answer did not have the shape its API documents.
	ErrBadData = errors.New("unexpected data from RomM")
	// ErrInvalid: the caller's request was invalid before anything was sent.
	ErrInvalid = errors.New("invalid RomM request")
)

// tokenAdvice is the fix for every credential problem: what to create in RomM and where to put it.
const tokenAdvice = "create a client token in RomM (Profile → Client tokens) with the scopes " +
	"roms.read, platforms.read, collections.read and set cabinet.romm.token_file"

// AuthError is a refused credential (Is ErrUnauthorized).
type AuthError struct {
	Status int // 401 or 403
	// Scope is the scope the route needs, when known. On RomM up to 5.1 a 403 may mean either a
	// bad token or a missing scope (Ambiguous), so the message names both.
	Scope     string
	Ambiguous bool
	Version   string // the RomM version, "" when unknown
	NoToken   bool   // no token was configured at all
}

func (e *AuthError) Error() string {
	var b strings.Builder
	if e.NoToken {
		b.WriteString("RomM wants a token and cabinet.romm.token is empty: ")
	} else {
		b.WriteString("RomM refused the token: ")
	}
	b.WriteString(tokenAdvice)
	if e.Ambiguous {
		fmt.Fprintf(&b, " (RomM %s answers 403 both for a bad token and for one without a needed scope", e.Version)
		if e.Scope != "" {
			fmt.Fprintf(&b, "; this request needs %s", e.Scope)
		}
		b.WriteString(")")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUnauthorized) work.
func (e *AuthError) Is(target error) bool { return target == ErrUnauthorized }

// ScopeError is a token RomM accepted that lacks the scope a route needs (Is ErrMissingScope).
type ScopeError struct {
	Scope string // "" when the route is not one the client knows (generic Get)
	Route string // "GET /api/collections"
}

func (e *ScopeError) Error() string {
	if e.Scope == "" {
		return fmt.Sprintf("the RomM token lacks a scope that %s needs (RomM's /openapi.json names it under the route's security): %s, adding that scope",
			e.Route, tokenAdvice)
	}
	return fmt.Sprintf("the RomM token lacks the scope %s that %s needs: %s (the token must include %s)",
		e.Scope, e.Route, tokenAdvice, e.Scope)
}

// Is makes errors.Is(err, ErrMissingScope) work.
func (e *ScopeError) Is(target error) bool { return target == ErrMissingScope }

// opError is every other failure: a message built here from clean parts, the sentinel it belongs to
// and the underlying cause (a network or context error; never text from the server).
type opError struct {
	msg      string
	sentinel error
	cause    error
}

func (e *opError) Error() string { return e.msg }

func (e *opError) Unwrap() []error {
	var errs []error
	if e.sentinel != nil {
		errs = append(errs, e.sentinel)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

func newError(sentinel, cause error, format string, args ...any) error {
	return &opError{msg: fmt.Sprintf(format, args...), sentinel: sentinel, cause: cause}
}
