package tools

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestMCPCheck drives the tools through the official TypeScript SDK over
// Streamable HTTP (protocol 2025-11-25, what Claude Desktop speaks), with
// --strict conformance checks and the SDK's own output-schema validation:
// list, then find, launch, status, pause, save state, screenshot, quit.
// Skipped when node or mcpcheck is missing (required with
// CABINET_REQUIRE_PEERS=1).
func TestMCPCheck(t *testing.T) {
	cabinettest.Long(t, "nine runs of the Node SDK client")
	mcpcheck := cabinettest.NewMCPCheck(t)
	r := newRig(t, rigConfig{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	// Over HTTP a call needs its token's scopes in the context (a call
	// with headers and none is refused); this client holds every scope.
	mux.Handle("/mcp", server.NewStreamableHTTPServer(r.srv.MCP(), server.WithHTTPContextFunc(
		func(ctx context.Context, _ *http.Request) context.Context { return WithScopes(ctx, Scopes) })))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	url := "http://" + ln.Addr().String() + "/mcp"

	check := func(tool string, args map[string]any) cabinettest.MCPReport {
		t.Helper()
		cmdArgs := []string{"--strict", "--fail-on-tool-error", "--url", url}
		if tool != "" {
			if args == nil {
				args = map[string]any{}
			}
			a, _ := json.Marshal(args)
			cmdArgs = append(cmdArgs, "--call", tool, "--args", string(a))
		}
		out, stderr, code := mcpcheck.Run(t, 60*time.Second, nil, cmdArgs...)
		var rep cabinettest.MCPReport
		if jerr := json.Unmarshal(out, &rep); jerr != nil || code != 0 || !rep.OK || (tool != "" && rep.Call == nil) {
			t.Fatalf("mcpcheck %s: exit %d (%v)\nstdout: %s\nstderr: %s", tool, code, jerr, out, stderr)
		}
		return rep
	}
	list := check("", nil)
	if len(list.Tools) != 16 || len(list.Warnings) != 0 || list.ProtocolVersion != "2025-11-25" {
		t.Fatalf("list: %d tools, warnings %v, protocol %s", len(list.Tools), list.Warnings, list.ProtocolVersion)
	}
	found := check("batocera_find_games", map[string]any{"query": "sonic hedgehog", "limit": 1})
	games, _ := found.Call.Result.StructuredContent["games"].([]any)
	if len(games) != 1 {
		t.Fatalf("find: got %v", found.Call.Result.StructuredContent)
	}
	id, _ := games[0].(map[string]any)["game_id"].(string)
	check("batocera_launch_game", map[string]any{"system": "megadrive", "game_id": id})
	r.waitRA(func(s fakeretroarch.Snapshot) bool { return s.Listening })
	check("batocera_get_status", nil)
	check("batocera_pause_game", map[string]any{"paused": true})
	check("batocera_save_state", nil)
	shot := check("batocera_take_screenshot", nil)
	var image bool
	for _, c := range shot.Call.Result.Content {
		image = image || (c["type"] == "image" && c["mimeType"] == "image/png")
	}
	if !image {
		t.Errorf("screenshot: no image content in %v", shot.Call.Result.Content)
	}
	if q := check("batocera_quit_game", nil); q.Call.Result.StructuredContent["outcome"] != "done" {
		t.Errorf("quit: got %v", q.Call.Result.StructuredContent)
	}
}
