package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// libraryTools are the tools registered when cabinet.romm.url is set.
var libraryTools = []string{"library_status", "library_search", "romm_get_rom", "romm_list_platforms",
	"romm_list_collections", "romm_get_collection", "romm_api_list", "romm_api_describe", "romm_api_read"}

// TestMCPCheckLibrary drives the library tools through the official
// TypeScript SDK with --strict conformance and the SDK's output-schema
// validation, against the simulator with its fake RomM: over stdio
// (`cabinet mcp`, in-process tools) and over HTTP (`cabinet serve`), it
// lists the tools (the library ones there, with the batocera ones), finds
// Alpha Quest in RomM and on the cabinet with library_search, and reads
// RomM's platforms through romm_api_read.
func TestMCPCheckLibrary(t *testing.T) {
	t.Parallel()
	cabinettest.Long(t, "the daemon and four runs of the Node SDK client")
	check := cabinettest.NewMCPCheck(t) // skip before starting anything
	cab, conf := simCabinet(t, simulator.Options{RomM: true})
	env := configEnv(conf)
	if cab.RomMGamePath() == "" {
		t.Fatal("the simulator put no RomM ROM on the cabinet")
	}
	slugs := map[string]bool{}
	for _, p := range cab.RomM.Platforms() {
		slugs[p.Slug] = true
	}

	exercise := func(t *testing.T, target []string) {
		var expect []string
		for _, name := range libraryTools {
			expect = append(expect, "--expect-tool", name)
		}
		args, _ := json.Marshal(map[string]any{"query": "alpha"})
		rep, code, stderr := runMCPCheck(t, check, env, append(expect, "--fail-on-tool-error", "--call", "library_search", "--args", string(args)), target...)
		if code != 0 || !rep.OK || rep.Call == nil || rep.Call.IsError {
			t.Fatalf("library_search: exit %d, report %+v\nstderr: %s", code, rep, stderr)
		}
		checkLibraryListing(t, rep)
		hits, _ := rep.Call.Result.StructuredContent["hits"].([]any)
		if len(hits) == 0 {
			t.Fatalf("library_search alpha: no hits: %v", rep.Call.Result.StructuredContent)
		}
		hit, _ := hits[0].(map[string]any)
		on, _ := hit["on_cabinet"].(map[string]any)
		if hit["name"] != "Alpha Quest" || hit["source"] != "romm" || hit["batocera_system"] != "nes" {
			t.Errorf("library_search alpha: first hit %v, want Alpha Quest from RomM on nes", hit)
		}
		if on["path"] != cab.RomMGamePath() || on["system"] != "nes" || on["game_id"] == "" {
			t.Errorf("library_search alpha: on_cabinet %v, want %s on nes with a game_id", on, cab.RomMGamePath())
		}

		read := callTool(t, check, env, target, "romm_api_read",
			map[string]any{"operation_id": "get_platforms_api_platforms_get", "pointer": "/0/slug"}).Call.Result.StructuredContent
		if slug, _ := read["body"].(string); read["status"] != float64(200) || !slugs[slug] || read["truncated"] != false {
			t.Errorf("romm_api_read /api/platforms /0/slug: %v, want status 200 and one of the fake's slugs", read)
		}
	}

	t.Run("stdio", func(t *testing.T) {
		exercise(t, []string{"--stdio", "--", cabinetBinary(t), "mcp"})
	})
	t.Run("http", func(t *testing.T) {
		url, token, log, stop := startServe(t, env)
		exercise(t, []string{"--url", url, "--token", token})
		stop()
		if strings.Contains(log.String(), fakeromm.DefaultToken) {
			t.Errorf("the daemon's log shows the RomM token")
		}
	})
	if len(cab.RomM.Requests()) == 0 {
		t.Error("the fake RomM saw no request")
	}
}

// checkLibraryListing checks the listing of a server with RomM configured:
// no conformance warning, every tool titled with an output schema and all
// four hints, the batocera tools and the library ones there (read-only),
// and no romarr_* tool (ROMarr is not configured).
func checkLibraryListing(t *testing.T, rep cabinettest.MCPReport) {
	t.Helper()
	if rep.ProtocolVersion != "2025-11-25" || len(rep.Warnings) != 0 {
		t.Errorf("list: protocol %q, warnings %v", rep.ProtocolVersion, rep.Warnings)
	}
	listed := map[string]bool{}
	for _, tl := range rep.Tools {
		listed[tl.Name] = true
		hints := 0
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := tl.Annotations[h].(bool); ok {
				hints++
			}
		}
		if tl.Title == "" || !tl.HasOutputSchema || hints != 4 {
			t.Errorf("tool %s: title %q, output schema %v, annotations %v", tl.Name, tl.Title, tl.HasOutputSchema, tl.Annotations)
		}
		if strings.HasPrefix(tl.Name, "romarr_") {
			t.Errorf("tool %s listed without cabinet.romarr.url", tl.Name)
		}
		if ro, _ := tl.Annotations["readOnlyHint"].(bool); (strings.HasPrefix(tl.Name, "library_") || strings.HasPrefix(tl.Name, "romm_")) && !ro {
			t.Errorf("library tool %s is not read-only: %v", tl.Name, tl.Annotations)
		}
	}
	for _, name := range append(append([]string(nil), wantTools...), libraryTools...) {
		if !listed[name] {
			t.Errorf("tool %s not listed", name)
		}
	}
}
