package tools

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
)

func TestLaunchGame(t *testing.T) {
	r := newRig(t, rigConfig{})
	g := r.game("mame", "Galaga")
	a := r.action("batocera_launch_game", map[string]any{"system": "mame", "game_id": g.ID})
	want := ActionResult{Cabinet: "Game Room", Outcome: "done",
		Detail: "Launched Galaga (mame); EmulationStation reports it running.",
		Sent:   []string{"POST /launch /userdata/roms/mame/galaga.zip"}, Warnings: []string{}}
	if mustJSON(t, a) != mustJSON(t, want) {
		t.Errorf("got %+v\nwant %+v", a, want)
	}
	if cur, ok := r.es.Running(); !ok || cur.ID != g.ID {
		t.Errorf("ES runs %+v, want Galaga", cur)
	}
	calls := r.es.Calls()
	if len(calls) != 1 || calls[0].Route != fakees.RouteLaunch || calls[0].Body != g.Path {
		t.Errorf("ES calls: got %+v, want one POST /launch with the path from ES's list", calls)
	}
	// One game at a time.
	pac := r.game("mame", "Pac-Man")
	msg := r.refused("batocera_launch_game", map[string]any{"system": "mame", "game_id": pac.ID})
	if !strings.Contains(msg, "Galaga is already running on mame; quit it first with batocera_quit_game") {
		t.Errorf("while running: got %q", msg)
	}
	if n := r.es.CallCount(fakees.RouteLaunch); n != 1 {
		t.Errorf("a refused launch reached ES: %d launches", n)
	}
}

func TestLaunchAllowList(t *testing.T) {
	r := newRig(t, rigConfig{})
	zelda := r.game("nes", "The Legend of Zelda")
	for _, args := range []map[string]any{
		{"system": "snes", "game_id": zelda.ID},               // a real id, in the wrong system
		{"system": "nes", "game_id": strings.Repeat("f", 32)}, // no such id
		{"system": "favorites", "game_id": strings.Repeat("f", 32)},
	} {
		if msg := r.refused("batocera_launch_game", args); !strings.Contains(msg, "batocera_find_games") {
			t.Errorf("%v: got %q", args, msg)
		}
	}
	for _, args := range []map[string]any{
		{"system": "nes", "game_id": "/userdata/roms/nes/x.nes"},   // a path is not an id
		{"system": "../quit", "game_id": zelda.ID},                 // nor a route
		{"system": "nes", "game_id": zelda.ID, "path": zelda.Path}, // no path argument exists
		{"system": "nes"},
	} {
		if msg := r.refused("batocera_launch_game", args); !strings.Contains(msg, "input schema") {
			t.Errorf("%v: got %q, want the input schema to refuse it", args, msg)
		}
	}
	if n := r.es.CallCount(fakees.RouteLaunch); n != 0 {
		t.Errorf("refused launches reached ES: %d", n)
	}
}

func TestLaunchInFlightIsRefused(t *testing.T) {
	r := newRig(t, rigConfig{})
	ids := []string{r.game("nes", "Tetris").ID, r.game("snes", "Chrono Trigger").ID}
	systems := []string{"nes", "snes"}
	var wg sync.WaitGroup
	errs := make([]bool, 2)
	msgs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.callErr("batocera_launch_game", map[string]any{"system": systems[i], "game_id": ids[i]})
			if err != nil {
				t.Error(err)
				return
			}
			errs[i], msgs[i] = res.IsError, text(res)
		}()
	}
	wg.Wait()
	if errs[0] == errs[1] {
		t.Fatalf("two launches at once: want one done and one refused, got %v %q", errs, msgs)
	}
	refusal := msgs[slices.Index(errs, true)]
	if !strings.Contains(refusal, "Another launch is still in progress") && !strings.Contains(refusal, "already running") {
		t.Errorf("refusal: got %q", refusal)
	}
	if n := r.es.CallCount(fakees.RouteLaunch); n != 1 {
		t.Errorf("ES got %d launches, want 1", n)
	}
}

func TestQuitGame(t *testing.T) {
	r := newRig(t, rigConfig{})
	if a := r.action("batocera_quit_game", nil); a.Outcome != "unchanged" || len(a.Sent) != 0 || a.Detail != "No game is running." {
		t.Errorf("nothing running: got %+v", a)
	}
	r.launch("snes", "Super Mario World")
	a := r.action("batocera_quit_game", nil)
	if a.Outcome != "done" || strings.Join(a.Sent, "|") != "GET /emukill" || a.Detail != "Quit Super Mario World (snes)." ||
		len(a.Warnings) != 0 {
		t.Errorf("quit: got %+v", a)
	}
	if _, ok := r.es.Running(); ok {
		t.Error("the game still runs in ES")
	}
	if r.ra.Snapshot().Listening {
		t.Error("RetroArch still answers after the quit")
	}
	if n := r.es.CallCount(fakees.RouteEmuKill); n != 1 {
		t.Errorf("emukill calls: got %d, want 1", n)
	}
}

func TestShowMessage(t *testing.T) {
	r := newRig(t, rigConfig{})
	a := r.action("batocera_show_message", map[string]any{"text": "Dinner is ready"})
	if a.Outcome != "done" || strings.Join(a.Sent, "|") != "POST /notify Dinner is ready" {
		t.Errorf("auto without a game: got %+v, want an ES notification", a)
	}
	a = r.action("batocera_show_message", map[string]any{"text": "Bedtime", "target": "popup"})
	if strings.Join(a.Sent, "|") != "POST /messagebox Bedtime" {
		t.Errorf("popup: got %+v", a)
	}
	if msg := r.refused("batocera_show_message", map[string]any{"text": "x", "target": "game"}); !strings.Contains(msg, "no game is running") {
		t.Errorf("game target without a game: got %q", msg)
	}
	r.launch("nes", "Tetris")
	a = r.action("batocera_show_message", map[string]any{"text": "Hi ✓"})
	if strings.Join(a.Sent, "|") != "UDP SHOW_MSG Hi ✓" {
		t.Errorf("auto with a RetroArch game: got %+v", a)
	}
	r.waitRA(func(s fakeretroarch.Snapshot) bool { return slices.Contains(s.Messages, "Hi ✓") })
	a = r.action("batocera_show_message", map[string]any{"text": "Later", "target": "popup"})
	if len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "only after Tetris ends") {
		t.Errorf("popup during a game: got %+v", a)
	}
	// Hidden characters are removed before anything is sent, and said so.
	a = r.action("batocera_show_message", map[string]any{"text": "Play\u202e  now\u200b", "target": "notification"})
	if strings.Join(a.Sent, "|") != "POST /notify Play now" || len(a.Warnings) != 1 {
		t.Errorf("hidden characters: got %+v", a)
	}
	for _, bad := range []string{"two\nlines", "bell\a", " ", strings.Repeat("x", 201), "\u200b\u202e"} {
		msg := r.refused("batocera_show_message", map[string]any{"text": bad})
		if !strings.Contains(msg, "Cannot show this text") && !strings.Contains(msg, "input schema") {
			t.Errorf("%q: got %q", bad, msg)
		}
	}
	if got := r.es.Calls(); len(got) != 5 { // notify, messagebox, launch, messagebox, notify: the refused ones sent nothing
		t.Errorf("ES calls: got %d, want 5: %+v", len(got), got)
	}
}

func TestReloadGames(t *testing.T) {
	r := newRig(t, rigConfig{})
	a := r.action("batocera_reload_games", nil)
	if a.Outcome != "done" || strings.Join(a.Sent, "|") != "GET /reloadgames" || len(a.Warnings) != 0 {
		t.Errorf("got %+v", a)
	}
	r.launch("nes", "Tetris")
	if a := r.action("batocera_reload_games", nil); len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "after Tetris ends") {
		t.Errorf("during a game: got %+v", a)
	}
	if n := r.es.CallCount(fakees.RouteReloadGames); n != 2 {
		t.Errorf("reloads: got %d, want 2", n)
	}
}

func TestRetroArchTools(t *testing.T) {
	r := newRig(t, rigConfig{})
	// Without a game RetroArch has no socket: every tool says so.
	for _, name := range []string{"batocera_pause_game", "batocera_save_state", "batocera_load_state",
		"batocera_reset_game", "batocera_take_screenshot"} {
		if msg := r.refused(name, nil); !strings.Contains(msg, "no game is running") {
			t.Errorf("%s without a game: got %q", name, msg)
		}
	}
	r.launch("megadrive", "Sonic The Hedgehog")
	game := "Sonic The Hedgehog (USA, Europe) (mega_drive)"

	var p pauseResult
	r.ok("batocera_pause_game", nil, &p)
	if p.Outcome != "done" || p.State != "paused" || strings.Join(p.Sent, "|") != "UDP PAUSE_TOGGLE" || p.Detail != "Paused "+game+"." {
		t.Errorf("toggle: got %+v", p)
	}
	r.ok("batocera_pause_game", map[string]any{"paused": true}, &p)
	if p.Outcome != "unchanged" || p.State != "paused" || len(p.Sent) != 0 {
		t.Errorf("pause while paused: got %+v", p)
	}
	r.ok("batocera_pause_game", map[string]any{"paused": false}, &p)
	if p.Outcome != "done" || p.State != "playing" || p.Detail != "Resumed "+game+"." {
		t.Errorf("resume: got %+v", p)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		sent string
	}{
		{"batocera_save_state", nil, "UDP SAVE_STATE"},
		{"batocera_change_save_slot", map[string]any{"direction": "next"}, "UDP STATE_SLOT_PLUS"},
		{"batocera_change_save_slot", map[string]any{"direction": "previous"}, "UDP STATE_SLOT_MINUS"},
		{"batocera_load_state", nil, "UDP LOAD_STATE"},
		{"batocera_reset_game", nil, "UDP RESET"},
		{"batocera_adjust_volume", map[string]any{"action": "up"}, "UDP VOLUME_UP"},
		{"batocera_adjust_volume", map[string]any{"action": "down"}, "UDP VOLUME_DOWN"},
		{"batocera_adjust_volume", map[string]any{"action": "mute"}, "UDP MUTE"},
	} {
		if a := r.action(tc.tool, tc.args); a.Outcome != "done" || strings.Join(a.Sent, "|") != tc.sent {
			t.Errorf("%s %v: got %+v, want sent %q", tc.tool, tc.args, a, tc.sent)
		}
	}
	s := r.waitRA(func(s fakeretroarch.Snapshot) bool { return s.Muted })
	if s.StatesSaved != 1 || s.StatesLoaded != 1 || s.Resets != 1 || s.Slot != 0 || s.VolumeDB != 0 || s.Paused {
		t.Errorf("RetroArch after the tools: %+v", s)
	}
	want := []string{"GET_STATUS", "PAUSE_TOGGLE", "SAVE_STATE", "STATE_SLOT_PLUS", "STATE_SLOT_MINUS", "LOAD_STATE",
		"RESET", "VOLUME_UP", "VOLUME_DOWN", "MUTE"}
	for _, c := range s.Commands {
		if !slices.Contains(want, c) {
			t.Errorf("RetroArch received %q, which no tool may send", c)
		}
	}
	if len(s.Unrecognized) != 0 {
		t.Errorf("RetroArch did not recognise %v", s.Unrecognized)
	}
	// Hotkeys RetroArch ignores while paused are pressed with the game
	// resumed around them; volume and screenshots work while paused.
	r.ok("batocera_pause_game", map[string]any{"paused": true}, &p)
	a := r.action("batocera_reset_game", nil)
	if strings.Join(a.Sent, "|") != "UDP PAUSE_TOGGLE|UDP RESET|UDP PAUSE_TOGGLE" || len(a.Warnings) != 1 {
		t.Errorf("reset while paused: got %+v", a)
	}
	if a := r.action("batocera_adjust_volume", map[string]any{"action": "up"}); strings.Join(a.Sent, "|") != "UDP VOLUME_UP" {
		t.Errorf("volume while paused: got %+v", a)
	}
	if s := r.ra.Snapshot(); !s.Paused || s.Resets != 2 {
		t.Errorf("after reset while paused: paused %v, resets %d; want paused, 2", s.Paused, s.Resets)
	}
}

func TestRetroArchToolsExplainAStandaloneEmulator(t *testing.T) {
	r := newRig(t, rigConfig{opts: Options{RetroArchTimeout: 50_000_000}})
	r.launchDirect("gamecube", "F-Zero GX")
	msg := r.refused("batocera_save_state", nil)
	if !strings.Contains(msg, "while F-Zero GX (gamecube) runs") || !strings.Contains(msg, "network_cmd_enable=true") {
		t.Errorf("got %q", msg)
	}
	a := r.action("batocera_show_message", map[string]any{"text": "hello"})
	if strings.Join(a.Sent, "|") != "POST /notify hello" || len(a.Warnings) != 1 {
		t.Errorf("auto message during a standalone game: got %+v", a)
	}
}
