package tools

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestPrompts: the prompts whose tools the server has are listed, each names its tools, the
// arguments are cleaned and quoted as data, and a missing required argument is an invalid request.
func TestPrompts(t *testing.T) {
	r := newRig(t, rigConfig{})
	ctx := cabinettest.Context(t)
	list, err := r.client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	// This rig has no history, household or library: their prompts are left out.
	if got := strings.Join(names, " "); got != "explore-library find-and-launch whats-playing" {
		t.Errorf("prompts %q", got)
	}
	for _, def := range promptDefs() {
		if !strings.Contains(strings.Join(names, " "), def.name) {
			continue
		}
		args := map[string]string{}
		for _, a := range def.args {
			args[a.name] = "Zelda\x1b[31m\u202e \"quoted\""
		}
		got, err := r.client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: def.name, Arguments: args}})
		if err != nil || len(got.Messages) != 1 {
			t.Fatalf("%s: %v %+v", def.name, err, got)
		}
		text := got.Messages[0].Content.(mcp.TextContent).Text
		for _, tool := range def.tools {
			if !strings.Contains(text, tool) {
				t.Errorf("%s does not name %s: %s", def.name, tool, text)
			}
		}
		if strings.ContainsAny(text, "\x1b\u202e") {
			t.Errorf("%s keeps controls: %q", def.name, text)
		}
	}
	_, err = r.client.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "find-and-launch"}})
	if err == nil || !strings.Contains(err.Error(), "needs the argument query") {
		t.Errorf("without its query: %v", err)
	}
}
