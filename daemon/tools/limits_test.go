package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
)

func TestRateLimitLaunchAndQuitShareTokens(t *testing.T) {
	r := newRig(t, rigConfig{})
	for range 5 { // nothing to quit: unchanged calls spend nothing
		if a := r.action("batocera_quit_game", nil); a.Outcome != "unchanged" {
			t.Fatalf("got %+v", a)
		}
	}
	r.launch("nes", "Tetris")
	r.action("batocera_quit_game", nil)
	r.launch("snes", "Chrono Trigger")
	msg := r.refused("batocera_quit_game", nil)
	want := "Rate limit: refusing to quit Chrono Trigger (snes) (try again in 5s). This guards against runaway loops; " +
		"if it's deliberate, wait and retry."
	if msg != want {
		t.Errorf("fourth action:\n got  %q\n want %q", msg, want)
	}
	r.clock.Advance(4 * time.Second)
	if msg := r.refused("batocera_quit_game", nil); !strings.Contains(msg, "(try again in 1s)") {
		t.Errorf("after 4s: got %q", msg)
	}
	r.clock.Advance(time.Second)
	if a := r.action("batocera_quit_game", nil); a.Outcome != "done" {
		t.Errorf("after 5s: got %+v", a)
	}
	if n := r.es.CallCount(fakees.RouteEmuKill); n != 2 {
		t.Errorf("emukill calls: got %d, want 2 (refused quits must not reach ES)", n)
	}
	tetris := r.game("nes", "Tetris")
	if msg := r.refused("batocera_launch_game", map[string]any{"system": "nes", "game_id": tetris.ID}); !strings.Contains(msg, "Rate limit: refusing to launch Tetris (nes)") {
		t.Errorf("launch after the quit spent the refill: got %q", msg)
	}
}

func TestRateLimitsOfTheOtherTools(t *testing.T) {
	r := newRig(t, rigConfig{})
	for i := range 2 {
		r.action("batocera_reload_games", nil)
		_ = i
	}
	if msg := r.refused("batocera_reload_games", nil); !strings.Contains(msg, "refusing to reload the game lists (try again in 20s)") {
		t.Errorf("third reload: got %q", msg)
	}
	r.launch("nes", "Tetris")
	for _, tc := range []struct {
		tool string
		args map[string]any
		n    int
		want string
	}{
		{"batocera_save_state", nil, 3, "refusing to save a state (try again in 10s)"},
		{"batocera_load_state", nil, 3, "refusing to load the saved state (try again in 10s)"},
		{"batocera_reset_game", nil, 3, "refusing to reset the game (try again in 10s)"},
		{"batocera_show_message", map[string]any{"text": "hi"}, 5, "refusing to show a message (try again in 2s)"},
		{"batocera_adjust_volume", map[string]any{"action": "mute"}, 10, "refusing to toggle mute (try again in 1s)"},
	} {
		for i := range tc.n {
			if res := r.call(tc.tool, tc.args); res.IsError {
				t.Fatalf("%s call %d of %d: %s", tc.tool, i+1, tc.n, text(res))
			}
		}
		if msg := r.refused(tc.tool, tc.args); !strings.Contains(msg, tc.want) {
			t.Errorf("%s after %d calls: got %q, want %q", tc.tool, tc.n, msg, tc.want)
		}
	}
	s := r.ra.Snapshot()
	if s.StatesSaved != 3 || s.StatesLoaded+s.StateLoadFailures != 3 || s.Resets != 3 || len(s.Messages) != 5 {
		t.Errorf("RetroArch got more than the limits allow: %+v", s)
	}
}

// TestDryRun calls every action tool on a dry-run server while a RetroArch
// game runs: each reports exactly what it would send, and nothing is sent.
func TestDryRun(t *testing.T) {
	r := newRig(t, rigConfig{opts: Options{DryRun: true}})
	tetris := r.game("nes", "Tetris")
	a := r.action("batocera_launch_game", map[string]any{"system": "nes", "game_id": tetris.ID})
	if a.Outcome != "dry_run" || strings.Join(a.Sent, "|") != "POST /launch /userdata/roms/nes/Tetris (USA).nes" ||
		a.Detail != "Would launch Tetris (nes)." {
		t.Errorf("launch: got %+v", a)
	}
	if a := r.action("batocera_quit_game", nil); a.Outcome != "unchanged" {
		t.Errorf("quit with nothing running: got %+v", a)
	}
	r.launchDirect("nes", "Tetris")
	r.waitRA(func(s fakeretroarch.Snapshot) bool { return s.Listening })
	before := r.ra.Snapshot()
	for _, tc := range []struct {
		tool string
		args map[string]any
		sent string
	}{
		{"batocera_quit_game", nil, "GET /emukill"},
		{"batocera_show_message", map[string]any{"text": "hi"}, "UDP SHOW_MSG hi"},
		{"batocera_show_message", map[string]any{"text": "hi", "target": "notification"}, "POST /notify hi"},
		{"batocera_show_message", map[string]any{"text": "hi", "target": "popup"}, "POST /messagebox hi"},
		{"batocera_reload_games", nil, "GET /reloadgames"},
		{"batocera_pause_game", nil, "UDP PAUSE_TOGGLE"},
		{"batocera_save_state", nil, "UDP SAVE_STATE"},
		{"batocera_load_state", nil, "UDP LOAD_STATE"},
		{"batocera_change_save_slot", map[string]any{"direction": "next"}, "UDP STATE_SLOT_PLUS"},
		{"batocera_take_screenshot", nil, "UDP SCREENSHOT"},
		{"batocera_reset_game", nil, "UDP RESET"},
		{"batocera_adjust_volume", map[string]any{"action": "down"}, "UDP VOLUME_DOWN"},
	} {
		for range 4 { // more than any budget: dry runs spend no tokens
			res := r.ok(tc.tool, tc.args, &a)
			if a.Outcome != "dry_run" || strings.Join(a.Sent, "|") != tc.sent || !strings.HasPrefix(a.Detail, "Would ") ||
				!strings.Contains(text(res), "Would send: "+tc.sent) {
				t.Errorf("%s %v: got %+v, want dry_run sending %q", tc.tool, tc.args, a, tc.sent)
			}
		}
	}
	if calls := r.es.Calls(); len(calls) != 0 {
		t.Errorf("a dry run reached ES: %+v", calls)
	}
	after := r.ra.Snapshot()
	for _, c := range after.Commands[len(before.Commands):] {
		if c != "GET_STATUS" {
			t.Errorf("a dry run sent %q to RetroArch", c)
		}
	}
	if after.Paused || len(after.Messages) != 0 || after.StatesSaved != 0 || len(after.Screenshots) != 0 {
		t.Errorf("a dry run changed RetroArch: %+v", after)
	}
	var p pauseResult
	if r.ok("batocera_pause_game", nil, &p); p.State != "playing" {
		t.Errorf("dry-run pause reports state %q, want the current one (playing)", p.State)
	}
}
