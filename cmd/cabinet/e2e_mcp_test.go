package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// runMCPCheck runs mcpcheck with opts before target (its options must come
// before `--stdio --`, which takes the rest of the line) and parses the one
// JSON document it prints; stderr is its diagnostics and the server's.
func runMCPCheck(t *testing.T, check *cabinettest.MCPCheck, env, opts []string, target ...string) (rep cabinettest.MCPReport, code int, stderrText string) {
	t.Helper()
	args := append(append([]string{"--strict", "--timeout", "30000"}, opts...), target...)
	return check.Report(t, 2*time.Minute, env, args...)
}

// callTool is one mcpcheck invocation that calls tool and must succeed.
func callTool(t *testing.T, check *cabinettest.MCPCheck, env, target []string, tool string, args map[string]any) cabinettest.MCPReport {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	a, _ := json.Marshal(args)
	rep, code, stderr := runMCPCheck(t, check, env, []string{"--fail-on-tool-error", "--call", tool, "--args", string(a)}, target...)
	if code != 0 || !rep.OK || rep.Call == nil || rep.Call.IsError {
		t.Fatalf("%s %s: exit %d, report %+v\nstderr: %s", tool, a, code, rep, stderr)
	}
	return rep
}

// wantTools is every tool `cabinet mcp` registers outside read-only mode.
var wantTools = []string{"batocera_adjust_volume", "batocera_change_save_slot", "batocera_find_games",
	"batocera_get_game", "batocera_get_health", "batocera_get_status", "batocera_launch_game",
	"batocera_list_systems", "batocera_load_state", "batocera_pause_game", "batocera_play_history",
	"batocera_quit_game", "batocera_reload_games", "batocera_reset_game", "batocera_save_state",
	"batocera_show_message", "batocera_take_screenshot"}

// wantDaemonTools adds what only the daemon has: the play-time rules' tools and library_saves (the
// save tools that change files come with cabinet.romm.sync_saves).
var wantDaemonTools = func() []string {
	ts := append(slices.Clone(wantTools), "batocera_get_limits", "batocera_grant_time", "batocera_pause_play", "batocera_set_limits", "batocera_set_player", "batocera_set_ui_mode",
		"library_saves")
	slices.Sort(ts)
	return ts
}()

func checkListing(t *testing.T, rep cabinettest.MCPReport, wantTools []string) {
	t.Helper()
	if !rep.OK || rep.ProtocolVersion != "2025-11-25" || len(rep.Warnings) != 0 {
		t.Fatalf("list: ok %v, protocol %q, warnings %v, error %+v", rep.OK, rep.ProtocolVersion, rep.Warnings, rep.Error)
	}
	var got []string
	for _, tl := range rep.Tools {
		got = append(got, tl.Name)
		hints := 0
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := tl.Annotations[h].(bool); ok {
				hints++
			}
		}
		if tl.Title == "" || !tl.HasOutputSchema || hints != 4 {
			t.Errorf("tool %s: title %q, output schema %v, annotations %v", tl.Name, tl.Title, tl.HasOutputSchema, tl.Annotations)
		}
	}
	if strings.Join(got, " ") != strings.Join(wantTools, " ") {
		t.Errorf("tools: got %v, want %v", got, wantTools)
	}
}

// TestMCPCheckStdio drives `cabinet mcp` (in-process tools, no daemon)
// through the official TypeScript SDK over stdio with --strict
// conformance and the SDK's output-schema validation: list, then find,
// launch, status, pause, save state, screenshot (image content) and quit,
// one mcpcheck run per call, and checks each effect on the simulator.
func TestMCPCheckStdio(t *testing.T) {
	t.Parallel()
	cabinettest.Long(t, "nine runs of the Node SDK client over stdio")
	check := cabinettest.NewMCPCheck(t) // skip before starting anything
	cab, conf := simCabinet(t, simulator.Options{})
	env := configEnv(conf)
	target := []string{"--stdio", "--", cabinetBinary(t), "mcp"}
	ra := func() fakeretroarch.Snapshot { return cab.RetroArch.Snapshot() }

	list, code, stderr := runMCPCheck(t, check, env, nil, target...)
	if code != 0 {
		t.Fatalf("list: exit %d, error %+v\nstderr: %s", code, list.Error, stderr)
	}
	checkListing(t, list, wantTools)

	found := callTool(t, check, env, target, "batocera_find_games", map[string]any{"query": "sonic hedgehog", "limit": 1})
	games, _ := found.Call.Result.StructuredContent["games"].([]any)
	if len(games) != 1 {
		t.Fatalf("find: got %v", found.Call.Result.StructuredContent)
	}
	game, _ := games[0].(map[string]any)
	id, _ := game["game_id"].(string)
	if game["name"] != "Sonic The Hedgehog" || game["system"] != "megadrive" || id == "" {
		t.Fatalf("find: top result %v, want Sonic The Hedgehog on megadrive with a game_id", game)
	}

	launch := callTool(t, check, env, target, "batocera_launch_game", map[string]any{"system": "megadrive", "game_id": id})
	if got := launch.Call.Result.StructuredContent["outcome"]; got != "done" {
		t.Fatalf("launch: outcome %v, want done (%v)", got, launch.Call.Result.StructuredContent)
	}
	if g, ok := cab.ES.Running(); !ok || g.Name != "Sonic The Hedgehog" {
		t.Fatalf("after launch ES runs %+v (running %v), want Sonic The Hedgehog", g, ok)
	}
	waitRetroArch(t, cab, "RetroArch to answer", func(s fakeretroarch.Snapshot) bool { return s.Listening })

	status := callTool(t, check, env, target, "batocera_get_status", nil).Call.Result.StructuredContent
	running, _ := status["running_game"].(map[string]any)
	retro, _ := status["retroarch"].(map[string]any)
	if running["game_id"] != id || retro["state"] != "playing" {
		t.Errorf("status: running_game %v, retroarch %v; want game %s playing", running, retro, id)
	}

	pause := callTool(t, check, env, target, "batocera_pause_game", map[string]any{"paused": true}).Call.Result.StructuredContent
	if pause["outcome"] != "done" || pause["state"] != "paused" || !ra().Paused {
		t.Errorf("pause: %v, RetroArch paused %v", pause, ra().Paused)
	}
	save := callTool(t, check, env, target, "batocera_save_state", nil).Call.Result.StructuredContent
	if save["outcome"] != "done" || ra().StatesSaved != 1 {
		t.Errorf("save state: %v, states saved %d, want 1", save, ra().StatesSaved)
	}

	shot := callTool(t, check, env, target, "batocera_take_screenshot", nil)
	var png []byte
	for _, c := range shot.Call.Result.Content {
		if c["type"] == "image" && c["mimeType"] == "image/png" {
			data, _ := c["data"].(string)
			png, _ = base64.StdEncoding.DecodeString(data)
		}
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot: no PNG image content in %v", shot.Call.Result.Content)
	}
	if n := len(ra().Screenshots); n != 1 {
		t.Errorf("screenshot: RetroArch wrote %d screenshots, want 1", n)
	}

	quit := callTool(t, check, env, target, "batocera_quit_game", nil).Call.Result.StructuredContent
	if quit["outcome"] != "done" {
		t.Errorf("quit: %v", quit)
	}
	waitMenu(t, cab)
}

// TestMCPCheckHTTP runs `cabinet serve` and checks its Streamable HTTP MCP
// with the bearer token (list, one call), a request without the token
// (refused), and `cabinet mcp` going through the daemon's socket; then
// stops the daemon with SIGTERM.
func TestMCPCheckHTTP(t *testing.T) {
	t.Parallel()
	cabinettest.Long(t, "the daemon and four runs of the Node SDK client")
	check := cabinettest.NewMCPCheck(t) // skip before starting anything
	_, conf := simCabinet(t, simulator.Options{})
	env := configEnv(conf)

	url, token, daemonLog, stop := startServe(t, env)
	auth := []string{"--url", url, "--token", token}
	list, code, stderr := runMCPCheck(t, check, env, nil, auth...)
	if code != 0 {
		t.Fatalf("list over HTTP: exit %d, error %+v\nstderr: %s", code, list.Error, stderr)
	}
	checkListing(t, list, wantDaemonTools)
	found := callTool(t, check, env, auth, "batocera_find_games", map[string]any{"query": "zelda", "limit": 1})
	if games, _ := found.Call.Result.StructuredContent["games"].([]any); len(games) != 1 || games[0].(map[string]any)["name"] != "The Legend of Zelda" {
		t.Errorf("find over HTTP: got %v", found.Call.Result.StructuredContent)
	}

	refused, code, _ := runMCPCheck(t, check, env, nil, "--url", url)
	if code != 2 || refused.OK || refused.Error == nil || fmt.Sprint(refused.Error.Code) != "401" {
		t.Errorf("without the token: exit %d, report %+v; want exit 2 with error code 401", code, refused)
	}

	// While the daemon runs, `cabinet mcp` is a bridge to it: get_status
	// then carries the daemon's summary, which the in-process tools lack.
	viaSocket := callTool(t, check, env, []string{"--stdio", "--", cabinetBinary(t), "mcp"}, "batocera_get_status", nil)
	if _, ok := viaSocket.Call.Result.StructuredContent["daemon"]; !ok {
		t.Errorf("cabinet mcp with the daemon running: get_status has no daemon summary: %v", viaSocket.Call.Result.StructuredContent)
	}

	stop()
	if !strings.Contains(daemonLog.String(), "cabinet serve stopped") {
		t.Errorf("no clean stop in the log:\n%s", daemonLog)
	}
}

// startServe runs `cabinet serve` with env until stop (SIGTERM; killed
// when the test ends without it) and returns its MCP URL, bearer token and
// log.
func startServe(t testing.TB, env []string) (url, token string, daemonLog *cabinettest.LogBuffer, stop func()) {
	t.Helper()
	url, token, daemonLog, stop, _ = startServeProcess(t, env)
	return url, token, daemonLog, stop
}

// startServeProcess is startServe that also returns the daemon's process id.
func startServeProcess(t testing.TB, env []string) (url, token string, daemonLog *cabinettest.LogBuffer, stop func(), pid int) {
	t.Helper()
	return startServeBinary(t, cabinetBinary(t), env)
}

// startServeBinary is startServeProcess with the binary bin (the release build, say).
func startServeBinary(t testing.TB, bin string, env []string) (url, token string, daemonLog *cabinettest.LogBuffer, stop func(), pid int) {
	t.Helper()
	serve := exec.Command(bin, "serve", "--log-stderr")
	serve.Env = env
	daemonLog = &cabinettest.LogBuffer{}
	serve.Stderr = daemonLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stopProcess(t, serve, syscall.SIGKILL, done)
		}
	})
	var line struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(daemonLog.AwaitLine(t, "the MCP URL in the daemon's log", `"url"`)), &line); err != nil || !strings.HasSuffix(line.URL, "/mcp") {
		t.Fatalf("log line with the URL: %v, url %q", err, line.URL)
	}
	code, tok, tokErr := runBinary(t, env, "token", "show")
	token = strings.TrimSpace(tok)
	if code != 0 || len(token) < 32 {
		t.Fatalf("cabinet token show: exit %d, %d characters, stderr %s", code, len(token), tokErr)
	}
	return line.URL, token, daemonLog, func() {
		stopped = true
		if err := stopProcess(t, serve, syscall.SIGTERM, done); err != nil {
			t.Errorf("cabinet serve after SIGTERM: %v\nlog:\n%s", err, daemonLog)
		}
	}, serve.Process.Pid
}
