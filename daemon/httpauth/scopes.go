package httpauth

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The token scopes (architecture.md, "Token scopes"; the names are the
// contract). Which tool needs which is package tools' table.
const (
	ScopeRead      = "read"
	ScopePlay      = "play"
	ScopeLibrary   = "library"
	ScopePower     = "power"
	ScopeHousehold = "household"
)

// Scopes are every scope, in the order they are shown.
var Scopes = []string{ScopeRead, ScopePlay, ScopeLibrary, ScopePower, ScopeHousehold}

// DefaultName is the token in its own file, the one `cabinet token show`
// prints.
const DefaultName = "default"

// DefaultTokenScopes are the default token's; NewTokenScopes a new named
// token's unless --scope says otherwise. power and household are only ever
// granted explicitly.
var (
	DefaultTokenScopes = []string{ScopeRead, ScopePlay, ScopeLibrary}
	NewTokenScopes     = []string{ScopeRead, ScopePlay}
)

// ParseScopes reads a comma-separated scope list (--scope read,play),
// refusing unknown names; the result is in the order of Scopes, without
// duplicates.
func ParseScopes(s string) ([]string, error) {
	var got []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if !slices.Contains(Scopes, f) {
			return nil, fmt.Errorf("unknown scope %q: the scopes are %s", f, strings.Join(Scopes, ", "))
		}
		got = append(got, f)
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("no scope given: name at least one of %s", strings.Join(Scopes, ", "))
	}
	return normalScopes(got), nil
}

// normalScopes keeps the known scopes of s in the order of Scopes.
func normalScopes(s []string) []string {
	out := []string{}
	for _, k := range Scopes {
		if slices.Contains(s, k) {
			out = append(out, k)
		}
	}
	return out
}

// Caller is who a request authenticated as: the token's name and scopes.
type Caller struct {
	Name   string
	Scopes []string
	// OAuth: the token came from the cabinet's authorization server, so a
	// tool call outside its scopes is answered 403 insufficient_scope
	// (the client can ask for more); other callers get the tool's error.
	OAuth bool
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller the guard put in a request's context.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
