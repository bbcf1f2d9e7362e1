package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The token scopes (architecture.md, "Token scopes"); package httpauth
// grants them, a test checks that both name the same ones.
const (
	ScopeRead      = "read"
	ScopePlay      = "play"
	ScopeLibrary   = "library"
	ScopePower     = "power"
	ScopeHousehold = "household"
)

// Scopes are every scope, in the order they are shown.
var Scopes = []string{ScopeRead, ScopePlay, ScopeLibrary, ScopePower, ScopeHousehold}

// toolScopes is the scope each tool needs (mcp-tools.md, the scope table).
// Every registered tool must be here (a test fails otherwise, and a tool
// missing at run time is refused to every token). Tools not registered yet
// keep their reserved names here.
var toolScopes = map[string]string{
	"batocera_get_status":       ScopeRead,
	"batocera_list_systems":     ScopeRead,
	"batocera_find_games":       ScopeRead,
	"batocera_get_game":         ScopeRead,
	"batocera_get_health":       ScopeRead,
	"batocera_play_history":     ScopeRead,
	"batocera_get_limits":       ScopeRead,
	"library_status":            ScopeRead,
	"library_search":            ScopeRead,
	"library_requests":          ScopeRead,
	"library_saves":             ScopeRead,
	"romm_get_rom":              ScopeRead,
	"romm_list_platforms":       ScopeRead,
	"romm_list_collections":     ScopeRead,
	"romm_get_collection":       ScopeRead,
	"romm_api_list":             ScopeRead,
	"romm_api_describe":         ScopeRead,
	"romm_api_read":             ScopeRead,
	"romarr_status":             ScopeRead,
	"romarr_wanted":             ScopeRead,
	"romarr_queue":              ScopeRead,
	"batocera_launch_game":      ScopePlay,
	"batocera_quit_game":        ScopePlay,
	"batocera_show_message":     ScopePlay,
	"batocera_reload_games":     ScopePlay,
	"batocera_pause_game":       ScopePlay,
	"batocera_save_state":       ScopePlay,
	"batocera_load_state":       ScopePlay,
	"batocera_reset_game":       ScopePlay,
	"batocera_change_save_slot": ScopePlay,
	"batocera_adjust_volume":    ScopePlay,
	"batocera_set_volume":       ScopePlay,
	"batocera_take_screenshot":  ScopePlay,
	"romarr_request_game":       ScopeLibrary,
	"library_request":           ScopeLibrary,
	"library_install":           ScopeLibrary,
	"library_uninstall":         ScopeLibrary,
	"library_sync_saves":        ScopeLibrary,
	"library_resolve_save":      ScopeLibrary,
	"batocera_power":            ScopePower,
	"batocera_set_limits":       ScopeHousehold,
	"batocera_set_player":       ScopeHousehold,
	"batocera_grant_time":       ScopeHousehold,
	"batocera_pause_play":       ScopeHousehold,
	"batocera_set_ui_mode":      ScopeHousehold,
}

// ToolScope is the scope a tool needs ("" for a tool without one, which
// only local callers may run).
func ToolScope(name string) string { return toolScopes[name] }

// callerScopes is the scopes of an MCP client over HTTP, and its token's name.
type callerScopes struct {
	scopes []string
	name   string
}

type scopesKey struct{}

// WithScopes returns ctx for a call by a client holding scopes (the HTTP
// transport sets it from the bearer token; nil means none). A context
// without it is a local caller (stdio, `cabinet call`, the daemon's socket
// and its own controls), who has every scope.
func WithScopes(ctx context.Context, scopes []string) context.Context {
	return context.WithValue(ctx, scopesKey{}, callerScopes{scopes: slices.Clone(scopes)})
}

// WithCaller is WithScopes for the token named name (what the subscriptions are bounded by).
func WithCaller(ctx context.Context, name string, scopes []string) context.Context {
	return context.WithValue(ctx, scopesKey{}, callerScopes{scopes: slices.Clone(scopes), name: name})
}

// callerName is the token's name of a caller over HTTP, "" for a local one.
func callerName(ctx context.Context) string {
	c, _ := ctx.Value(scopesKey{}).(callerScopes)
	return c.name
}

// scopesFrom returns the caller's scopes; local is true for a local caller.
func scopesFrom(ctx context.Context) (scopes []string, local bool) {
	c, ok := ctx.Value(scopesKey{}).(callerScopes)
	if !ok {
		return nil, true
	}
	return c.scopes, false
}

// scopeCheck refuses a call the caller's token has no scope for, as a tool
// error naming the scope and the command that grants it. Every tool stays
// listed to every token. A call that came over HTTP (it has headers)
// without scopes in its context has none: if the transport forgot to set
// them, nothing runs.
func scopeCheck(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		have, local := scopesFrom(ctx)
		if local && len(req.Header) == 0 {
			return next(ctx, req)
		}
		name := req.Params.Name
		need := toolScopes[name]
		if need == "" {
			return mcp.NewToolResultError(fmt.Sprintf("%s has no token scope, so it runs only on the cabinet itself (cabinet call %s).", name, name)), nil
		}
		if slices.Contains(have, need) {
			return next(ctx, req)
		}
		grant := []string{need}
		for _, s := range have {
			if slices.Contains(Scopes, s) {
				grant = append(grant, s)
			}
		}
		var ordered []string
		for _, s := range Scopes {
			if slices.Contains(grant, s) {
				ordered = append(ordered, s)
			}
		}
		return mcp.NewToolResultError(fmt.Sprintf("this token lacks the scope %s: make one with `cabinet token new --name NAME --scope %s` "+
			"on the cabinet and use it instead (%s needs %s).", need, strings.Join(ordered, ","), name, need)), nil
	}
}
