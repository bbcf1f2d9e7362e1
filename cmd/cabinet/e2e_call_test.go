package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestCallEveryTool runs `cabinet call` from the command line against the
// simulator, once for every tool (a game session from launch to quit), and
// checks the JSON printed, the exit code and the effect on the simulator.
func TestCallEveryTool(t *testing.T) {
	t.Parallel()
	cab, conf := simCabinet(t, simulator.Options{})
	env := configEnv(conf)
	ra := func() fakeretroarch.Snapshot { return cab.RetroArch.Snapshot() }
	called := map[string]bool{}
	call := func(wantCode int, args ...string) map[string]any {
		t.Helper()
		code, stdout, stderr := runBinary(t, env, append([]string{"call"}, args...)...)
		if code != wantCode {
			t.Fatalf("cabinet call %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout, stderr)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("cabinet call %s: output is not a JSON object (%v): %s", strings.Join(args, " "), err, stdout)
		}
		for _, a := range args {
			if strings.HasPrefix(a, "batocera_") {
				called[a] = true
			}
		}
		return out
	}
	// action checks the action result shape and returns it.
	action := func(outcome string, args ...string) map[string]any {
		t.Helper()
		out := call(0, args...)
		sent, isList := out["sent"].([]any)
		_, hasWarnings := out["warnings"].([]any)
		if out["cabinet"] != "Simulated Cabinet" || out["outcome"] != outcome || !isList || !hasWarnings || out["detail"] == "" {
			t.Errorf("cabinet call %s: got %v, want an action result with outcome %s", strings.Join(args, " "), out, outcome)
		}
		if outcome == "done" && len(sent) == 0 {
			t.Errorf("cabinet call %s: done but sent nothing: %v", strings.Join(args, " "), out)
		}
		return out
	}
	sentOf := func(out map[string]any) string {
		var s []string
		for _, x := range out["sent"].([]any) {
			s = append(s, x.(string))
		}
		return strings.Join(s, " | ")
	}

	if systems, _ := call(0, "batocera_list_systems")["systems"].([]any); len(systems) != 5 {
		t.Errorf("list_systems: %d systems, want the fixture's 5", len(systems))
	}
	found := call(0, "batocera_find_games", "query=sonic hedgehog", "limit=1")
	games, _ := found["games"].([]any)
	if len(games) != 1 || found["total"] == nil {
		t.Fatalf("find_games: got %v", found)
	}
	id, _ := games[0].(map[string]any)["game_id"].(string)
	if g, _ := call(0, "batocera_get_game", "system=megadrive", "game_id="+id)["game"].(map[string]any); g["name"] != "Sonic The Hedgehog" || g["developer"] != "Sonic Team" {
		t.Errorf("get_game: got %v", g)
	}
	if st := call(0, "batocera_get_status"); st["running_game"] != nil || st["es"].(map[string]any)["reachable"] != true {
		t.Errorf("get_status before launch: got %v", st)
	}
	if h := call(0, "batocera_get_health"); h["cpu_temp_c"] != 47.0 || h["versions"].(map[string]any)["batocera"] != "42" {
		t.Errorf("get_health: got %v, want the fake tree's 47 °C and Batocera 42", h)
	}
	if ph := call(0, "batocera_play_history"); ph["sessions"] == nil || ph["totals"] == nil {
		t.Errorf("play_history: got %v", ph)
	}

	dry := action("dry_run", "--dry-run", "batocera_launch_game", "system=megadrive", "game_id="+id)
	if s := sentOf(dry); !strings.HasPrefix(s, "POST /launch /userdata/roms/megadrive/") {
		t.Errorf("dry-run launch: sent %q, want the POST /launch of ES's path", s)
	}
	if _, running := cab.ES.Running(); running || cab.ES.Launching() {
		t.Fatal("a dry-run launch started a game")
	}
	action("done", "batocera_launch_game", "system=megadrive", "game_id="+id)
	waitRetroArch(t, cab, "RetroArch to answer", func(s fakeretroarch.Snapshot) bool { return s.Listening })
	if again := call(1, "batocera_launch_game", "system=megadrive", "game_id="+id); again["is_error"] != true || !strings.Contains(again["text"].(string), "quit it first") {
		t.Errorf("second launch: got %v, want a tool error saying to quit first", again)
	}

	action("done", "batocera_show_message", "text=Hello from the tests")
	if m := ra().Messages; !slices.Contains(m, "Hello from the tests") {
		t.Errorf("show_message: RetroArch shows %q", m)
	}
	if p := action("done", "batocera_pause_game", "paused=true"); p["state"] != "paused" || !ra().Paused {
		t.Errorf("pause: %v, RetroArch paused %v", p, ra().Paused)
	}
	action("done", "batocera_change_save_slot", "direction=next")
	action("done", "batocera_save_state")
	action("done", "batocera_load_state")
	action("done", "batocera_adjust_volume", "action=down")
	action("done", "batocera_reset_game")
	if s := ra(); s.Slot != 1 || s.StatesSaved != 1 || s.StatesLoaded != 1 || s.VolumeDB >= 0 || s.Resets != 1 {
		t.Errorf("RetroArch after slot, save, load, volume, reset: slot %d, saved %d, loaded %d, volume %v dB, resets %d",
			s.Slot, s.StatesSaved, s.StatesLoaded, s.VolumeDB, s.Resets)
	}
	shot := action("done", "batocera_take_screenshot")
	if img, _ := shot["image"].(map[string]any); img["mime_type"] != "image/png" || img["base64_bytes"].(float64) <= 0 {
		t.Errorf("screenshot: no image in %v", shot)
	}
	if s := sentOf(action("done", "batocera_reload_games")); s != "GET /reloadgames" {
		t.Errorf("reload_games: sent %q", s)
	}

	if s := sentOf(action("dry_run", "--dry-run", "batocera_quit_game")); s != "GET /emukill" {
		t.Errorf("dry-run quit: sent %q, want GET /emukill", s)
	}
	if _, running := cab.ES.Running(); !running {
		t.Fatal("a dry-run quit ended the game")
	}
	action("done", "batocera_quit_game")
	waitMenu(t, cab)
	if nothing := call(1, "batocera_pause_game"); nothing["is_error"] != true {
		t.Errorf("pause with no game: got %v, want a tool error", nothing)
	}

	code, list, _ := runBinary(t, env, "call", "--list")
	for _, name := range wantTools {
		if !strings.Contains(list, name+" ") {
			t.Errorf("cabinet call --list does not list %s:\n%s", name, list)
		}
		if !called[name] {
			t.Errorf("%s was not called by this test", name)
		}
	}
	if code != 0 || strings.Count(list, "\n") != len(wantTools) {
		t.Errorf("cabinet call --list: exit %d, %d lines, want %d", code, strings.Count(list, "\n"), len(wantTools))
	}
}

// TestCallBadArguments: a key=value the tool does not take exits 2 with a
// message naming the key, before anything is called.
func TestCallBadArguments(t *testing.T) {
	t.Parallel()
	_, conf := simCabinet(t, simulator.Options{})
	env := configEnv(conf)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"batocera_pause_game", "paused=maybe"}, "argument paused must be true or false"},
		{[]string{"batocera_pause_game", "frobnicate=1"}, `unknown argument "frobnicate"`},
		{[]string{"batocera_find_games", "limit=1000"}, "argument limit must be a whole number from 1 to 100"},
		{[]string{"batocera_adjust_volume", "action"}, `argument "action" is not key=value`},
		{[]string{"batocera_get_game", "system=nes"}, "missing argument game_id"},
		{[]string{"batocera_no_such_tool"}, `no tool "batocera_no_such_tool"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runBinary(t, env, append([]string{"call"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) || stdout != "" {
			t.Errorf("cabinet call %s: exit %d, stderr %q, stdout %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stderr, stdout, tt.want)
		}
	}
}

// TestCallDaemonOnlyTools: the tools only the daemon offers (the
// household's play-time rules, which it keeps) are called through its
// socket, their arguments checked against the daemon's schema first; with
// --standalone they do not exist.
func TestCallDaemonOnlyTools(t *testing.T) {
	t.Parallel()
	cab, _ := simCabinet(t, simulator.Options{})
	conf, err := cab.WriteConfig(t.TempDir(), "cabinet.household.enabled=1", "cabinet.household.minutes.daily=30")
	if err != nil {
		t.Fatal(err)
	}
	env := configEnv(conf)
	_, _, _, stop := startServe(t, env)
	defer stop()
	call := func(args ...string) map[string]any {
		t.Helper()
		code, stdout, stderr := runBinary(t, env, append([]string{"call"}, args...)...)
		var out map[string]any
		if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil {
			t.Fatalf("cabinet call %s: exit %d, %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, err, stdout, stderr)
		}
		return out
	}
	if got := call("batocera_get_limits"); got["enabled"] != true || got["limit_minutes"] != 30.0 {
		t.Errorf("batocera_get_limits: got %v, want the rules on with 30 minutes", got)
	}
	got := call("batocera_pause_play", "paused=true")
	if limits, _ := got["limits"].(map[string]any); got["outcome"] != "done" || limits["paused"] != true {
		t.Errorf("batocera_pause_play paused=true: got %v", got)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"batocera_pause_play", "paused=maybe"}, "argument paused must be true or false"},
		{[]string{"--standalone", "batocera_get_limits"}, `no tool "batocera_get_limits"`},
	} {
		code, stdout, stderr := runBinary(t, env, append([]string{"call"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) || stdout != "" {
			t.Errorf("cabinet call %s: exit %d, stderr %q, stdout %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stderr, stdout, tt.want)
		}
	}
}

// TestDoctorEndToEnd: against the simulator every check passes (exit 0);
// against nothing (closed ports, an empty tree) doctor exits 1 and says
// what to do.
func TestDoctorEndToEnd(t *testing.T) {
	t.Parallel()
	_, conf := simCabinet(t, simulator.Options{})
	code, stdout, stderr := runBinary(t, configEnv(conf), "doctor")
	if code != 0 || !strings.Contains(stdout, "All checks passed.") || strings.Contains(stdout, "FAIL") {
		t.Errorf("doctor against the simulator: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runBinary(t, configEnv(conf), "doctor", "--json")
	var rep struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil || !rep.OK {
		t.Errorf("doctor --json against the simulator: exit %d, %v, %s", code, err, stdout)
	}

	dir := t.TempDir()
	nothing := filepath.Join(dir, "nothing.conf")
	text := "cabinet.paths.root=" + filepath.Join(dir, "root") + "\n" +
		"cabinet.es.url=http://" + cabinettest.ClosedAddr(t, "tcp") + "\n" +
		"cabinet.retroarch.addr=" + cabinettest.ClosedAddr(t, "udp") + "\n"
	if err := os.WriteFile(nothing, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runBinary(t, configEnv(nothing), "doctor")
	if code != 1 || !lineWith(stdout, "FAIL", "es") || !strings.Contains(stdout, "->") || !strings.Contains(stdout, "cabinet.es.url") {
		t.Errorf("doctor against nothing: exit %d, want 1 with a FAIL for ES and -> hints:\n%s", code, stdout)
	}
}
