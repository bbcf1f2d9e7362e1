package main

import (
	"encoding/json"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestMCPCheckInstall is the assistant's "put Cosmic Crusade on the cabinet and start it" through
// the official TypeScript SDK with --strict conformance, over HTTP to `cabinet serve`:
// library_search finds it in RomM and not on the cabinet; library_install {launch: true} installs
// it (progress notifications arrive), ES lists it and it starts; batocera_get_status shows it
// running; library_search then says where it is on the cabinet.
func TestMCPCheckInstall(t *testing.T) {
	t.Parallel()
	cabinettest.Long(t, "the daemon and four runs of the Node SDK client")
	check := cabinettest.NewMCPCheck(t)
	_, env := installCabinet(t)
	url, token, _, stop := startServe(t, env)
	defer stop()
	target := []string{"--url", url, "--token", token}

	search := func() map[string]any {
		t.Helper()
		res := callTool(t, check, env, target, "library_search", map[string]any{"query": "cosmic"}).Call.Result.StructuredContent
		hits, _ := res["hits"].([]any)
		if len(hits) != 1 {
			t.Fatalf("library_search cosmic: %v", res)
		}
		hit, _ := hits[0].(map[string]any)
		return hit
	}
	hit := search()
	if hit["name"] != "Cosmic Crusade" || hit["on_cabinet"] != nil {
		t.Fatalf("before the install: %v", hit)
	}
	args, _ := json.Marshal(map[string]any{"rom_id": hit["rom_id"], "launch": true})
	rep, code, stderr := runMCPCheck(t, check, env, []string{"--fail-on-tool-error", "--progress", "--call", "library_install", "--args", string(args)}, target...)
	if code != 0 || rep.Call == nil || rep.Call.IsError {
		t.Fatalf("library_install: exit %d, %+v\n%s", code, rep, stderr)
	}
	got := rep.Call.Result.StructuredContent
	if got["outcome"] != "done" || got["launched"] != true || got["listed"] != true || got["verified"] != true || got["system"] != "snes" {
		t.Fatalf("library_install: %v", got)
	}
	if len(rep.Call.Progress) == 0 {
		t.Errorf("no progress notification")
	}
	status := callTool(t, check, env, target, "batocera_get_status", nil).Call.Result.StructuredContent
	running, _ := status["running_game"].(map[string]any)
	if running["name"] != "Cosmic Crusade" || running["system"] != "snes" {
		t.Errorf("batocera_get_status: running %v", status["running_game"])
	}
	on, _ := search()["on_cabinet"].(map[string]any)
	if on["system"] != "snes" || on["game_id"] != got["game_id"] || on["path"] != got["path"] {
		t.Errorf("after the install, on_cabinet %v, want %v in snes", on, got["path"])
	}
}
