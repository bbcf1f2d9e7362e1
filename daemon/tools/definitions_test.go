package tools

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
)

var update = flag.Bool("update", false, "rewrite testdata/toolsnaps from the current tool definitions")

// The expected kinds, written out independently of the definitions: a tool
// moved to the wrong kind fails here.
var (
	readTools = []string{"batocera_get_status", "batocera_list_systems", "batocera_find_games", "batocera_get_game",
		"batocera_get_health", "batocera_play_history", "batocera_get_limits", "library_saves"}
	writeTools = []string{"batocera_launch_game", "batocera_show_message", "batocera_reload_games",
		"batocera_pause_game", "batocera_save_state", "batocera_change_save_slot", "batocera_take_screenshot",
		"batocera_adjust_volume", "batocera_set_volume", "batocera_grant_time", "batocera_set_player", "batocera_set_ui_mode", "library_sync_saves"}
	destructiveTools = []string{"batocera_quit_game", "batocera_load_state", "batocera_reset_game", "batocera_power",
		"batocera_set_limits", "batocera_pause_play", "library_resolve_save"}
	idempotentWrites = []string{"batocera_quit_game", "batocera_reload_games", "batocera_set_volume",
		"batocera_set_limits", "batocera_pause_play", "batocera_set_player", "batocera_set_ui_mode", "library_sync_saves"}
	// openWorldTools reach the household's RomM (the save sync).
	openWorldTools = []string{"library_saves", "library_sync_saves", "library_resolve_save"}
)

// allDefinitions builds every tool, play history, power, volume, the
// household's and the save sync's included, without dependencies
// (definitions never touch them).
func allDefinitions(t *testing.T) []server.ServerTool {
	t.Helper()
	ts := buildToolset(newWiring(Deps{History: stubHistory{}, Power: &power.Runner{}, Volume: &sysaudio.Audio{},
		Household: newFakeHousehold(nil), SaveSync: newFakeSaveSync(), SaveSyncWrites: true}, Options{}))
	return ts.registered(false)
}

func TestToolAnnotations(t *testing.T) {
	tools := allDefinitions(t)
	var names []string
	for _, st := range tools {
		tl := st.Tool
		names = append(names, tl.Name)
		a := tl.Annotations
		if tl.Title == "" || a.Title != tl.Title {
			t.Errorf("%s: title %q, annotation title %q; want both set and equal", tl.Name, tl.Title, a.Title)
		}
		if tl.Description == "" {
			t.Errorf("%s: no description", tl.Name)
		}
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: not all four hints set: %+v", tl.Name, a)
			continue
		}
		read := slices.Contains(readTools, tl.Name)
		destructive := slices.Contains(destructiveTools, tl.Name)
		write := slices.Contains(writeTools, tl.Name) || destructive
		if read == write {
			t.Errorf("%s: in neither or both of the read and write lists", tl.Name)
		}
		want := mcp.ToolAnnotation{Title: tl.Title, ReadOnlyHint: ptr(read), DestructiveHint: ptr(destructive),
			IdempotentHint: ptr(read || slices.Contains(idempotentWrites, tl.Name)),
			OpenWorldHint:  ptr(slices.Contains(openWorldTools, tl.Name))}
		if got, _ := json.Marshal(a); string(got) != mustJSON(t, want) {
			t.Errorf("%s: annotations %s, want %s", tl.Name, got, mustJSON(t, want))
		}
		if write && *a.ReadOnlyHint {
			t.Errorf("%s: a write tool marked read-only", tl.Name)
		}
		if tl.InputSchema.Type != "object" || tl.InputSchema.AdditionalProperties != false {
			t.Errorf("%s: input schema is not a closed object: %+v", tl.Name, tl.InputSchema)
		}
		if tl.OutputSchema.Type != "object" || len(tl.OutputSchema.Properties) == 0 {
			t.Errorf("%s: no output schema", tl.Name)
		}
	}
	all := append(append(append([]string(nil), readTools...), writeTools...), destructiveTools...)
	slices.Sort(all)
	got := slices.Sorted(slices.Values(names))
	if strings.Join(got, ",") != strings.Join(all, ",") {
		t.Errorf("tools:\n got  %v\n want %v", got, all)
	}
}

func TestMisannotatedToolPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(ts *toolset)
	}{
		{"write tool in read list", func(ts *toolset) {
			ts.addRead(define("x", "X", "x", writes, false), nil)
		}},
		{"read tool in write list", func(ts *toolset) {
			ts.addWrite(define("x", "X", "x", reads, true), nil)
		}},
		{"destructive tool in read list", func(ts *toolset) {
			ts.addRead(define("x", "X", "x", destroys, false), nil)
		}},
		{"unannotated tool in write list", func(ts *toolset) {
			tl := mcp.NewTool("x")
			tl.Annotations.DestructiveHint = nil
			ts.addWrite(tl, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.add(&toolset{})
		})
	}
}

// TestToolSnapshots compares every definition with testdata/toolsnaps
// (go test -update rewrites them): a changed schema is a changed contract.
func TestToolSnapshots(t *testing.T) {
	dir := filepath.Join("testdata", "toolsnaps")
	seen := map[string]bool{}
	for _, st := range allDefinitions(t) {
		got, err := json.MarshalIndent(st.Tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		file := filepath.Join(dir, st.Tool.Name+".json")
		seen[filepath.Base(file)] = true
		matchSnapshot(t, file, got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !seen[e.Name()] {
			t.Errorf("stale snapshot %s: no such tool", e.Name())
		}
	}
}

// TestSchemasAreEnforced proves each tool's schemas compile and are applied:
// mcp-go skips schemas it cannot compile, so a broken one would silently let
// anything through. Each tool's definition is served with a handler that
// returns content no output schema allows.
func TestSchemasAreEnforced(t *testing.T) {
	srv := server.NewMCPServer("check", "0", server.WithToolCapabilities(false), server.WithInputSchemaValidation(),
		server.WithOutputSchemaValidation())
	defs := allDefinitions(t)
	for _, st := range defs {
		srv.AddTool(st.Tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"not_in_any_schema": 1}, "x"), nil
		})
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, st := range defs {
		call := func(args map[string]any) *mcp.CallToolResult {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = st.Tool.Name, args
			res, err := c.CallTool(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", st.Tool.Name, err)
			}
			return res
		}
		if res := call(map[string]any{"unknown_argument": true}); !res.IsError || !strings.Contains(text(res), "input schema") {
			t.Errorf("%s: an unknown argument was not refused by the input schema: %s", st.Tool.Name, text(res))
		}
		args := validArgs(st.Tool.Name)
		if res := call(args); !res.IsError || !strings.Contains(text(res), "output schema") {
			t.Errorf("%s: content outside the output schema was not refused: %s", st.Tool.Name, text(res))
		}
	}
}

// validArgs are arguments every schema accepts, per tool.
func validArgs(tool string) map[string]any {
	switch tool {
	case "batocera_get_game", "batocera_launch_game", "library_saves":
		return map[string]any{"system": "nes", "game_id": strings.Repeat("a", 32)}
	case "library_resolve_save":
		return map[string]any{"system": "nes", "game_id": strings.Repeat("a", 32), "slot": "autosave", "keep": "romm"}
	case "batocera_show_message":
		return map[string]any{"text": "hi"}
	case "batocera_change_save_slot":
		return map[string]any{"direction": "next"}
	case "batocera_adjust_volume":
		return map[string]any{"action": "up"}
	case "batocera_power":
		return map[string]any{"action": "shutdown"}
	case "batocera_grant_time":
		return map[string]any{"minutes": 15}
	case "batocera_pause_play":
		return map[string]any{"paused": true}
	case "batocera_set_player":
		return map[string]any{"player": ""}
	case "batocera_set_ui_mode":
		return map[string]any{"mode": "Kid"}
	}
	return map[string]any{}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type stubHistory struct {
	sessions []Session
	unlocks  []Achievement
	err      error
	got      *HistoryQuery
}

func (s stubHistory) Sessions(_ context.Context, q HistoryQuery) ([]Session, error) {
	if s.got != nil {
		*s.got = q
	}
	return append([]Session(nil), s.sessions...), s.err
}

func (s stubHistory) Achievements(_ context.Context, q HistoryQuery) ([]Achievement, error) {
	var out []Achievement
	for _, a := range s.unlocks {
		if !a.At.Before(q.Since) && a.At.Before(q.Until) && (q.Limit <= 0 || len(out) < q.Limit) {
			out = append(out, a)
		}
	}
	return out, s.err
}
