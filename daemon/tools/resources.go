package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/es"
)

// Resources (issue 31): what the read tools answer, as MCP resources a client can read (and,
// later, subscribe to). Each is its tool's structured result as JSON, from the tool's own
// handler: one source of truth, the same bounds and cleaning, and the same answer a model gets
// from the tool.

// resourceMIME is every resource's type.
const resourceMIME = "application/json"

// resourceDef is one resource over a read tool.
type resourceDef struct {
	uri, name, title, description string
	tool                          string
	args                          map[string]any
}

// resourceDefs are the fixed resources, for the tools a server has.
func resourceDefs() []resourceDef {
	return []resourceDef{
		{uri: "cabinet://status", name: "status", title: "Cabinet status",
			description: "What batocera_get_status says: the running game, ES, RetroArch, the links.", tool: "batocera_get_status"},
		{uri: "cabinet://systems", name: "systems", title: "Game systems",
			description: "What batocera_list_systems says: every system with games, and how many.", tool: "batocera_list_systems"},
		{uri: "cabinet://play-history/today", name: "play-history-today", title: "Played today",
			description: "batocera_play_history since local midnight: sessions, totals per game and per day.", tool: "batocera_play_history",
			args: map[string]any{"since": "today"}},
		{uri: "cabinet://play-history/week", name: "play-history-week", title: "Played this week",
			description: "batocera_play_history over the last 7 days.", tool: "batocera_play_history", args: map[string]any{"since": "7d"}},
	}
}

// gamesTemplate is the resource template of one game (batocera_get_game).
const gamesTemplate = "cabinet://games/{system}/{game_id}"

// addResources registers the resources whose tools ts has, and the games template.
func addResources(s *server.MCPServer, ts *toolset, playing Playing) {
	// The tool's handler behind its scope check: a token that may not call the tool may not
	// read its resource (over HTTP; on the cabinet itself everything is allowed, as for tools).
	handler := func(name string) server.ToolHandlerFunc {
		for _, t := range ts.read {
			if t.Tool.Name == name {
				return scopeCheck(t.Handler)
			}
		}
		return nil
	}
	for _, r := range resourceDefs() {
		h := handler(r.tool)
		if h == nil {
			continue // the server has no such tool (no history store)
		}
		s.AddResource(mcp.NewResource(r.uri, r.name, mcp.WithResourceTitle(r.title), mcp.WithResourceDescription(r.description),
			mcp.WithMIMEType(resourceMIME)),
			func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return toolContents(ctx, h, r.tool, r.uri, r.args)
			})
	}
	if playing != nil {
		addNowPlaying(s, playing, handler("batocera_get_game"))
	}
	if h := handler("batocera_get_game"); h != nil {
		s.AddResourceTemplate(mcp.NewResourceTemplate(gamesTemplate, "game", mcp.WithTemplateTitle("A game"),
			mcp.WithTemplateDescription("What batocera_get_game says of one game: system and game_id as batocera_find_games gives them."),
			mcp.WithTemplateMIMEType(resourceMIME)),
			func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				system, id := templateArg(req, "system"), templateArg(req, "game_id")
				return toolContents(ctx, h, "batocera_get_game", req.Params.URI, map[string]any{"system": system, "game_id": id})
			})
	}
}

// templateArg is a template variable: mcp-go gives them as []string.
func templateArg(req mcp.ReadResourceRequest, name string) string {
	switch v := req.Params.Arguments[name].(type) {
	case []string:
		if len(v) == 1 {
			return v[0]
		}
	case string:
		return v
	}
	return ""
}

// resourceError is a resource that cannot be read, with its JSON-RPC code: not found is -32002 in
// 2025-11-25 and -32602 in 2026-07-28 (each era's resources.mdx), as mcp-go answers an unknown
// URI; anything else a tool refused (a scope, ES away) is -32603 with the refusal's text.
type resourceError struct {
	code int
	msg  string
	uri  string
}

func (e *resourceError) Error() string { return e.msg }

func (e *resourceError) JSONRPCError() mcp.JSONRPCError {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.NewJSONRPCErrorDetails(e.code, e.msg, map[string]any{"uri": e.uri})}
}

func resourceNotFound(ctx context.Context, uri, msg string) error {
	code := mcp.RESOURCE_NOT_FOUND
	if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		code = mcp.INVALID_PARAMS
	}
	return server.NewHandlerError(&resourceError{code: code, msg: msg, uri: uri})
}

// callRead calls a read tool's handler and returns its structured result; a refusal is an error
// with its text (not found when the tool found nothing).
func callRead(ctx context.Context, h server.ToolHandlerFunc, tool, uri string, args map[string]any) (any, error) {
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}}
	res, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		msg := tool + " refused"
		for _, c := range res.Content {
			if t, ok := c.(mcp.TextContent); ok {
				msg = t.Text
			}
		}
		if strings.HasPrefix(msg, noGamePrefix) {
			return nil, resourceNotFound(ctx, uri, msg)
		}
		return nil, server.NewHandlerError(&resourceError{code: mcp.INTERNAL_ERROR, msg: msg, uri: uri})
	}
	return res.StructuredContent, nil
}

// toolContents is a read tool's structured result as the resource uri.
func toolContents(ctx context.Context, h server.ToolHandlerFunc, tool, uri string, args map[string]any) ([]mcp.ResourceContents, error) {
	v, err := callRead(ctx, h, tool, uri, args)
	if err != nil {
		return nil, err
	}
	return jsonContents(uri, v)
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: resourceMIME, Text: string(b)}}, nil
}

// The running game and its picture.
const (
	uriNowPlaying = "cabinet://now-playing"
	uriArtwork    = "cabinet://now-playing/artwork"
)

// nowPlayingView is cabinet://now-playing: the game the engine says runs, since when, ES's
// details of it and where its picture is.
type nowPlayingView struct {
	Playing    bool   `json:"playing"`
	Game       string `json:"game,omitempty"`
	System     string `json:"system,omitempty"`
	SystemName string `json:"system_name,omitempty"`
	GameID     string `json:"game_id,omitempty"`
	Rom        string `json:"rom,omitempty"`
	Since      string `json:"since,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	// Artwork is cabinet://now-playing/artwork when the game has a picture.
	Artwork string `json:"artwork,omitempty"`
	// Details is batocera_get_game's game, when ES lists it.
	Details any `json:"details,omitempty"`
}

// addNowPlaying registers cabinet://now-playing and its artwork over the daemon's engine; game is
// batocera_get_game's handler (nil: no details).
func addNowPlaying(s *server.MCPServer, p Playing, game server.ToolHandlerFunc) {
	s.AddResource(mcp.NewResource(uriNowPlaying, "now-playing", mcp.WithResourceTitle("Now playing"),
		mcp.WithResourceDescription("The game running on the cabinet, since when, its details and picture (subscribe to be told when it changes)."),
		mcp.WithMIMEType(resourceMIME)),
		func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			np := p.NowPlaying()
			v := nowPlayingView{Playing: np.Playing, Game: np.Game, System: np.System, SystemName: np.SystemName,
				Rom: np.Rom, Since: np.Started, SessionID: np.SessionID}
			if np.Playing && np.Rom != "" {
				v.GameID = es.GameID(np.Rom)
				if data, _, err := p.Artwork(ctx); err == nil && len(data) > 0 {
					v.Artwork = uriArtwork
				}
				if game != nil && np.System != "" {
					if d, err := callRead(ctx, game, "batocera_get_game", uriNowPlaying, map[string]any{"system": np.System, "game_id": v.GameID}); err == nil {
						if m, ok := d.(map[string]any); ok {
							v.Details = m["game"]
						}
					}
				}
			}
			return jsonContents(uriNowPlaying, v)
		})
	s.AddResource(mcp.NewResource(uriArtwork, "now-playing-artwork", mcp.WithResourceTitle("Now playing: picture"),
		mcp.WithResourceDescription("The running game's marquee, box art or screenshot as ES has it (a JPEG of at most 512 px)."),
		mcp.WithMIMEType("image/jpeg")),
		func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			if !p.NowPlaying().Playing {
				return nil, resourceNotFound(ctx, uriArtwork, "Nothing is playing, so there is no picture: read cabinet://now-playing.")
			}
			data, typ, err := p.Artwork(ctx)
			if err != nil {
				return nil, fmt.Errorf("read the running game's picture: %w", err)
			}
			if len(data) == 0 {
				return nil, resourceNotFound(ctx, uriArtwork, "The running game has no picture in ES.")
			}
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uriArtwork, MIMEType: typ, Blob: base64.StdEncoding.EncodeToString(data)}}, nil
		})
}
