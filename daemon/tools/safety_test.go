package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

func TestReadOnly(t *testing.T) {
	r := newRig(t, rigConfig{opts: Options{ReadOnly: true}})
	list, err := r.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	want := []string{"batocera_get_status", "batocera_list_systems", "batocera_find_games", "batocera_get_game", "batocera_get_health"}
	if got := r.srv.ToolNames(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ToolNames: got %v, want %v", got, want)
	}
	slices.Sort(names)
	slices.Sort(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("read-only tools listed: got %v, want %v", names, want)
	}
	tetris := r.game("nes", "Tetris")
	if _, err := r.callErr("batocera_launch_game", map[string]any{"system": "nes", "game_id": tetris.ID}); err == nil {
		t.Error("a write tool could be called in read-only mode")
	}
	// The filter refuses a write tool even if something registered it.
	tl, h := launchGameTool(launcher{es: r.esc, guard: newGuard(false, DefaultLimits(), r.clock), cabinet: "Game Room"})
	r.srv.MCP().AddTool(tl, h)
	if _, err := r.callErr("batocera_launch_game", map[string]any{"system": "nes", "game_id": tetris.ID}); err == nil ||
		!strings.Contains(err.Error(), "not found") {
		t.Errorf("a write tool registered behind the filter's back: got %v, want refused", err)
	}
	list, _ = r.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	if len(list.Tools) != len(want) {
		t.Errorf("the filter lists %d tools, want %d", len(list.Tools), len(want))
	}
	if n := len(r.es.Calls()); n != 0 {
		t.Errorf("read-only server sent %d actions to ES", n)
	}
	var st statusResult
	if r.ok("batocera_get_status", nil, &st); !st.Mode.ReadOnly {
		t.Error("status does not say read-only")
	}
}

// TestForbiddenRoutesAreUnreachable exercises every tool, with ordinary and
// hostile arguments, idle and during a game: ES must never see a request
// that reboots, shuts down, quits ES, deletes files or changes metadata.
func TestForbiddenRoutesAreUnreachable(t *testing.T) {
	r := newRig(t, rigConfig{deps: func(d *Deps) { d.History, d.Household = stubHistory{}, newFakeHousehold(onAt60()) }})
	hostile := []string{"/quit", "../../restart", "shutdown", "/addgames/nes", "removegames/nes", "nes/../../quit",
		"%2e%2e/quit", "nes\n/quit", "nes?x=/shutdown", "\u202e/quit", strings.Repeat("q", 300), "favorites"}
	exercise := func() {
		list, err := r.client.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			for _, args := range argsFor(tl, hostile) {
				if _, err := r.callErr(tl.Name, args); err != nil {
					t.Logf("%s %v: %v", tl.Name, args, err)
				}
				r.clock.Advance(time.Minute) // keep the rate limits out of the way
			}
		}
	}
	exercise()
	r.launchDirect("snes", "Super Mario World")
	exercise()
	for _, route := range []string{fakees.RouteQuit, fakees.RouteRestart, fakees.RouteShutdown, fakees.RouteAddGames,
		fakees.RouteRemoveGames, fakees.RouteMetadata, fakees.RouteMediaUpload, fakees.RouteStorageEvent} {
		if n := r.es.CallCount(route); n != 0 {
			t.Errorf("ES got %d %s requests", n, route)
		}
	}
	for _, c := range r.es.Calls() {
		if c.Route == fakees.RouteLaunch && !strings.HasPrefix(c.Body, "/userdata/roms/") {
			t.Errorf("a launch of %q, which is not from ES's list", c.Body)
		}
	}
	allowed := []string{"GET_STATUS", "VERSION", "PAUSE_TOGGLE", "SAVE_STATE", "LOAD_STATE", "STATE_SLOT_PLUS",
		"STATE_SLOT_MINUS", "SCREENSHOT", "RESET", "VOLUME_UP", "VOLUME_DOWN", "MUTE", "SHOW_MSG"}
	s := r.ra.Snapshot()
	for _, c := range s.Commands {
		if name, _, _ := strings.Cut(c, " "); !slices.Contains(allowed, name) {
			t.Errorf("RetroArch got %q", c)
		}
	}
	if len(s.Unrecognized) != 0 {
		t.Errorf("RetroArch got unrecognised commands %q", s.Unrecognized)
	}
}

// argsFor builds argument sets for a tool from its schema: none, then each
// hostile string in every string argument, then each enum value.
func argsFor(tl mcp.Tool, hostile []string) []map[string]any {
	out := []map[string]any{{}}
	props, _, _ := inputProps(tl)
	for name, p := range props {
		switch schemaType(p) {
		case "string":
			for _, v := range append(enumOf(p), hostile...) {
				out = append(out, map[string]any{name: v, "system": "nes", "game_id": strings.Repeat("0", 32)})
			}
		case "integer":
			out = append(out, map[string]any{name: -1}, map[string]any{name: 1 << 40})
		case "boolean":
			out = append(out, map[string]any{name: true}, map[string]any{name: false})
		}
	}
	return out
}

func TestHostileNamesAreCleaned(t *testing.T) {
	lib := hostileLibrary(t)
	r := newRig(t, rigConfig{lib: lib, deps: func(d *Deps) {
		d.History = stubHistory{sessions: []Session{{ID: "s\u202e1", Game: "Evil\x1b[2J\u200bGame", System: "nes\u2066",
			ROM: "/x\u0007.nes", Started: time.Date(2025, 4, 30, 10, 0, 0, 0, time.UTC), Duration: time.Hour, Source: "hook\u200d"}}}
	}})
	var found findResult
	r.ok("batocera_find_games", map[string]any{"query": "balloon"}, &found)
	if len(found.Games) != 1 || found.Games[0].Name != "Balloon Fight exe.gnp iso" {
		t.Errorf("balloon: got %+v", found.Games)
	}
	r.ok("batocera_find_games", map[string]any{"system": "hostile", "limit": 100}, &found)
	if len(found.Games) != 3 {
		t.Fatalf("hostile system: got %+v", found)
	}
	contra := r.game("nes", "Contra\x1b[31m RED\x07\tTab")
	var gg getGameResult
	r.ok("batocera_get_game", map[string]any{"system": "nes", "game_id": contra.ID}, &gg)
	if gg.Game.Name != "Contra[31m RED Tab" || !slices.Equal(gg.Truncated, []string{"description"}) ||
		!strings.HasSuffix(gg.Game.Description, "…") || strings.Contains(gg.Game.Description, "END-OF-LONG-DESC") {
		t.Errorf("contra: got name %q, truncated %v, description ending %q", gg.Game.Name, gg.Truncated,
			gg.Game.Description[max(0, len(gg.Game.Description)-40):])
	}
	long := r.game("hostile", strings.Repeat("Long ", 100))
	r.ok("batocera_get_game", map[string]any{"system": "hostile", "game_id": long.ID}, &gg)
	if !slices.Equal(gg.Truncated, []string{"name", "developer", "genre"}) || len([]rune(gg.Game.Name)) != maxName {
		t.Errorf("long fields: got truncated %v, name of %d runes", gg.Truncated, len([]rune(gg.Game.Name)))
	}
	r.launch("hostile", "Evil\u202e\u200bGame\U000E0041")
	// Every string of every read tool's result is clean.
	for _, tool := range []string{"batocera_get_status", "batocera_list_systems", "batocera_get_health", "batocera_play_history"} {
		assertClean(t, tool, r.ok(tool, nil, nil).StructuredContent)
	}
	for _, id := range []string{long.ID, r.game("hostile", "Evil\u202e\u200bGame\U000E0041").ID, contra.ID} {
		sys := "hostile"
		if id == contra.ID {
			sys = "nes"
		}
		assertClean(t, "get_game", r.ok("batocera_get_game", map[string]any{"system": sys, "game_id": id}, nil).StructuredContent)
	}
	assertClean(t, "find_games", r.ok("batocera_find_games", map[string]any{"limit": 100}, nil).StructuredContent)
	for _, tool := range []string{"batocera_pause_game", "batocera_take_screenshot", "batocera_save_state", "batocera_quit_game"} {
		res := r.ok(tool, nil, nil)
		assertClean(t, tool, res.StructuredContent)
		assertClean(t, tool+" text", text(res))
	}
}

// assertClean fails when a string in v holds a control (other than a line
// break), format (bidi, zero-width), tag or other invisible character.
func assertClean(t *testing.T, what string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	var decoded any
	_ = json.Unmarshal(b, &decoded)
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, r := range x {
				if (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xa0) || r == 0x200b || r == 0x200d || r == 0x2028 || r == 0x2029 ||
					(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || (r >= 0xe0000 && r <= 0xe007f) {
					t.Errorf("%s: %q holds %U", what, x, r)
					return
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(decoded)
}

// hostileLibrary is the fixture plus a system whose every text is hostile.
func hostileLibrary(t *testing.T) *library.Library {
	t.Helper()
	lib := library.Fixture("")
	err := lib.AddSystem(library.System{Name: "hostile", FullName: "Evil\u202e System\x07", HardwareType: "console",
		Extensions: []string{".zip"}, Libretro: true, Emulator: "libretro", Core: "x", CoreName: "X\u200b",
		RetroArchSystem: "evil\u202esys"})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file, name string
		meta       map[string]string
	}{
		{"e\u202evil\u200b.zip", "Evil\u202e\u200bGame\U000E0041", map[string]string{"genre": "Act\x1bion",
			"developer": "Dev\u2066", "desc": "line1\x00\nline2\u202e", "players": "1\u200b-2", "playcount": "2",
			"lastplayed": "20250101T000000"}},
		{"long.zip", strings.Repeat("Long ", 100), map[string]string{"developer": strings.Repeat("D", 150),
			"genre": strings.Repeat("G", 150)}},
		{"sep.zip", "Line\u2028Separated\u0085Name", nil},
	} {
		if _, err := lib.AddGame("hostile", g.file, g.name, g.meta); err != nil {
			t.Fatal(err)
		}
	}
	return lib
}
