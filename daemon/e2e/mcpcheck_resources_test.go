package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// step is one mcpcheck step.
type step = map[string]any

// TestMCPCheckResources: the official TypeScript SDK (2025-11-25, --strict), over Streamable HTTP
// and over stdio through `cabinet mcp`, against the daemon: every resource listed and read, the
// game template, every prompt got with its arguments, completions of a system and a game prefix,
// and subscriptions — told when a game starts and ends through the hooks, and not told any more
// after unsubscribing.
func TestMCPCheckResources(t *testing.T) {
	cabinettest.Long(t, "the official MCP SDK in Node against the daemon, twice")
	check := cabinettest.NewMCPCheck(t)
	// With RomM and installs, so every prompt is offered.
	r := newRigWith(t, nil, simulator.Options{RomM: true}, "cabinet.library.allow_install=1")
	r.start().waitLog("MCP over HTTP listening", 20*time.Second)
	game := r.cab.Library.Games("nes")[0]
	targets := map[string][]string{
		"http":  {"--url", r.mcpURL() + "/mcp", "--token", r.token()},
		"stdio": {"--quiet-stderr", "--stdio", "--", cabinetBin, "mcp"},
	}
	const np, status = "cabinet://now-playing", "cabinet://status"
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			var steps []step
			for _, uri := range []string{status, "cabinet://systems", "cabinet://play-history/today", "cabinet://play-history/week", np} {
				steps = append(steps, step{"op": "read", "uri": uri})
			}
			steps = append(steps,
				step{"op": "read", "uri": "cabinet://now-playing/artwork", "expectError": true}, // nothing plays
				step{"op": "read", "uri": "cabinet://games/nes/" + game.ID},
				step{"op": "read", "uri": "cabinet://games/nes/nosuchgame", "expectError": true},
				step{"op": "listResourceTemplates"},
				step{"op": "getPrompt", "name": "whats-playing"},
				step{"op": "getPrompt", "name": "find-and-launch", "arguments": map[string]string{"query": "mario", "system": "nes"}},
				step{"op": "getPrompt", "name": "explore-library", "arguments": map[string]string{"mood": "hidden gem"}},
				step{"op": "getPrompt", "name": "weekly-report"},
				step{"op": "getPrompt", "name": "set-up-household"},
				step{"op": "getPrompt", "name": "install-from-library", "arguments": map[string]string{"query": "chrono trigger"}},
				step{"op": "listPrompts"},
				step{"op": "getPrompt", "name": "find-and-launch", "expectError": true}, // query is required
				step{"op": "complete", "ref": map[string]string{"type": "ref/prompt", "name": "find-and-launch"},
					"argument": map[string]string{"name": "system", "value": "ne"}},
				step{"op": "complete", "ref": map[string]string{"type": "ref/prompt", "name": "find-and-launch"},
					"argument": map[string]string{"name": "query", "value": strings.ToLower(game.Name[:4])},
					"context":  map[string]any{"arguments": map[string]string{"system": "nes"}}},
				step{"op": "complete", "ref": map[string]string{"type": "ref/resource", "uri": "cabinet://games/{system}/{game_id}"},
					"argument": map[string]string{"name": "system", "value": "sn"}},
				step{"op": "subscribe", "uri": np},
				step{"op": "subscribe", "uri": status},
				step{"op": "mark", "name": "subscribed"},
				step{"op": "waitUpdate", "uri": np},
				step{"op": "waitUpdate", "uri": status},
				step{"op": "read", "uri": np},
				step{"op": "mark", "name": "playing"},
				step{"op": "waitUpdate", "uri": np},
				step{"op": "waitUpdate", "uri": status},
				step{"op": "unsubscribe", "uri": np},
				step{"op": "mark", "name": "unsubscribed"},
				// The next game's now-playing update would come before its status one.
				step{"op": "waitUpdate", "uri": status},
				step{"op": "noUpdate", "uri": np},
			)
			args := append([]string{"--strict", "--resources", "--prompts", "--timeout", "60000", "--steps", cabinettest.Steps(steps...)}, target...)
			run := check.Start(t, 3*time.Minute, r.env(), args...)
			for _, mark := range []struct{ name, hook string }{{"subscribed", "game-start"}, {"playing", "game-end"}, {"unsubscribed", "game-start"}} {
				if err := run.WaitMark(mark.name, 2*time.Minute); err != nil {
					t.Fatalf("%v\n%s", err, run.Stderr())
				}
				if mark.hook == "game-start" {
					r.hook("game-start", game.Path, game.Name, game.Name)
				} else {
					r.hook("game-end")
				}
			}
			rep, code, stderr := run.Wait(t)
			if code != 0 || !rep.OK || len(rep.Warnings) != 0 {
				t.Fatalf("mcpcheck exit %d, warnings %q, failed step %+v\n%s", code, rep.Warnings, rep.FailedStep(), stderr)
			}
			t.Cleanup(func() { r.hook("game-end") })
			var playing []struct {
				Text string `json:"text"`
			}
			var readNP cabinettest.MCPStep // the read after the start
			for i, s := range rep.Steps {
				if s.Op == "read" && i > 0 && rep.Steps[i-1].Op == "waitUpdate" {
					readNP = s
				}
			}
			if readNP.Op != "read" || json.Unmarshal(readNP.Result, &playing) != nil || len(playing) != 1 ||
				!strings.Contains(playing[0].Text, `"playing":true`) || !strings.Contains(playing[0].Text, game.Name) {
				t.Errorf("now-playing while %s runs: %s", game.Name, readNP.Result)
			}
			for _, s := range rep.Steps {
				if s.Op == "listPrompts" {
					var ps []struct {
						Name string `json:"name"`
					}
					if json.Unmarshal(s.Result, &ps) != nil || len(ps) != 6 {
						t.Errorf("prompts: %s", s.Result)
					}
				}
				if s.Op != "complete" {
					continue
				}
				var c struct {
					Values []string `json:"values"`
				}
				if json.Unmarshal(s.Result, &c) != nil || len(c.Values) == 0 {
					t.Errorf("a completion gave nothing: %s", s.Result)
				}
			}
		})
	}
}

// TestMCPCheckAsks: the official TypeScript SDK declaring elicitation, over Streamable HTTP and
// stdio: quitting a game asks the person first — yes quits, no and a dismissed question quit
// nothing and say so — and a client without the capability quits unasked and keeps
// batocera_power's confirm: true.
func TestMCPCheckAsks(t *testing.T) {
	cabinettest.Long(t, "the official MCP SDK in Node against the daemon, eight times")
	check := cabinettest.NewMCPCheck(t)
	r := newRig(t, nil, "cabinet.mcp.power=1")
	r.extraEnv = []string{"CABINET_BENCH_NO_RATE_LIMITS=1"} // eight launches and quits in a few seconds
	r.start().waitLog("MCP over HTTP listening", 20*time.Second)
	game := r.cab.Library.Games("nes")[0]
	out, code, _ := runCabinet(t, r.env(), "token", "new", "--name", "asks", "--scope", "read,play,power")
	tok, _, _ := strings.Cut(strings.TrimSpace(out), "\n") // then the note, on stderr
	if code != 0 || len(tok) < 32 {
		t.Fatalf("cabinet token new: exit %d, %q", code, out)
	}
	targets := map[string][]string{
		"http":  {"--url", r.mcpURL() + "/mcp", "--token", tok},
		"stdio": {"--quiet-stderr", "--stdio", "--", cabinetBin, "mcp"},
	}
	launch := step{"op": "call", "tool": "batocera_launch_game", "args": map[string]string{"system": "nes", "game_id": game.ID}}
	quit := step{"op": "call", "tool": "batocera_quit_game"}
	for name, target := range targets {
		for _, tc := range []struct {
			elicit string // "": the client cannot ask
			quits  bool
			says   string
		}{
			{"accept", true, "Quit"},
			{"decline", false, "the person said no"},
			{"cancel", false, "dismissed without an answer"},
			{"", true, "Quit"},
		} {
			t.Run(name+"/"+tc.elicit, func(t *testing.T) {
				steps := []step{launch, quit}
				if tc.elicit == "" {
					steps = append(steps, step{"op": "call", "tool": "batocera_power", "args": map[string]string{"action": "restart_es"}})
				}
				args := []string{"--strict", "--steps", cabinettest.Steps(steps...)}
				if tc.elicit != "" {
					args = append(args, "--elicit", tc.elicit)
				}
				rep, code, stderr := check.Report(t, 2*time.Minute, r.env(), append(args, target...)...)
				if code != 0 || !rep.OK {
					t.Fatalf("mcpcheck exit %d, error %+v, failed step %+v\n%s", code, rep.Error, rep.FailedStep(), stderr)
				}
				var res struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					StructuredContent map[string]any `json:"structuredContent"`
				}
				if err := json.Unmarshal(rep.Steps[1].Result, &res); err != nil || len(res.Content) == 0 {
					t.Fatalf("quit: %v %s", err, rep.Steps[1].Result)
				}
				if res.IsError == tc.quits || !strings.Contains(res.Content[0].Text, tc.says) {
					t.Errorf("quit: isError %v, %q", res.IsError, res.Content[0].Text)
				}
				_, running := r.cab.ES.Running()
				if running == tc.quits {
					t.Errorf("ES runs a game: %v", running)
				}
				switch {
				case tc.elicit == "":
					if len(rep.Elicitations) != 0 {
						t.Errorf("a client that cannot ask was asked %+v", rep.Elicitations)
					}
					var power struct {
						StructuredContent map[string]any `json:"structuredContent"`
					}
					json.Unmarshal(rep.Steps[2].Result, &power)
					if power.StructuredContent["outcome"] != "dry_run" {
						t.Errorf("power without confirm: %s", rep.Steps[2].Result)
					}
				case len(rep.Elicitations) != 1 || !strings.HasPrefix(rep.Elicitations[0].Message, "Quit "+game.Name):
					t.Errorf("asked %+v", rep.Elicitations)
				}
				if running {
					cabinettest.Await(t, "ES to end the game", nil, func() bool {
						r.cab.ES.EndGame(0)
						_, running := r.cab.ES.Running()
						return !running
					})
				}
			})
		}
	}
}
