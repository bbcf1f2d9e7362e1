package tools

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// promptExamples are the arguments each prompt is rendered with in its snapshot.
func promptExamples() map[string]map[string]string {
	return map[string]map[string]string{
		"find-and-launch":      {"query": "sonic 2", "system": "megadrive"},
		"explore-library":      {"mood": "hidden gem"},
		"install-from-library": {"query": "chrono trigger"},
	}
}

// TestResourceAndPromptSnapshots compares the resources, the template and every prompt (its
// definition, and its message for example arguments) with testdata/mcpsnaps (go test -update
// rewrites them), as TestToolSnapshots does the tools: a changed one is a changed contract.
func TestResourceAndPromptSnapshots(t *testing.T) {
	r := newRig(t, rigConfig{deps: func(d *Deps) { d.History = stubHistory{}; d.Playing = &fakePlaying{} }})
	ctx := cabinettest.Context(t)
	res, err := r.client.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := r.client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	snapshot(t, "resources.json", map[string]any{"resources": res.Resources, "resourceTemplates": tpl.ResourceTemplates})

	// Every prompt, whatever tools a server has.
	s := server.NewMCPServer("snap", "0", server.WithPromptCapabilities(false))
	for _, p := range promptDefs() {
		addPrompt(s, p)
	}
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, p := range list.Prompts {
		msg, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: p.Name, Arguments: promptExamples()[p.Name]}})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		got[p.Name] = map[string]any{"definition": p, "example": map[string]any{"arguments": promptExamples()[p.Name], "result": msg}}
	}
	snapshot(t, "prompts.json", got)
}

// snapshot compares v, as indented JSON, with testdata/mcpsnaps/name (-update writes it).
func snapshot(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	matchSnapshot(t, filepath.Join("testdata", "mcpsnaps", name), append(b, '\n'))
}

// matchSnapshot compares got with the file (-update writes it instead).
func matchSnapshot(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("%v (run go test -update to create it)", err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (if intended, run go test -update):\n%s", file, got)
	}
}
