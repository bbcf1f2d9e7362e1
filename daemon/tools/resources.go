package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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
func addResources(s *server.MCPServer, ts *toolset) {
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

// errResource is a resource its tool refused: the refusal's text, for the client.
var errResource = errors.New("resource unavailable")

// toolContents calls a read tool's handler and returns its structured result as the resource.
func toolContents(ctx context.Context, h server.ToolHandlerFunc, tool, uri string, args map[string]any) ([]mcp.ResourceContents, error) {
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
		return nil, fmt.Errorf("%w: %s", errResource, msg)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: resourceMIME, Text: string(b)}}, nil
}
