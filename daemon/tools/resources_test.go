package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestResources: every resource is listed and reads as its tool's structured result; the game
// template reads one game and refuses an unknown one.
func TestResources(t *testing.T) {
	r := newRig(t, rigConfig{})
	ctx := cabinettest.Context(t)
	list, err := r.client.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, res := range list.Resources {
		uris = append(uris, res.URI)
	}
	if strings.Join(uris, " ") == "" || !strings.Contains(strings.Join(uris, " "), "cabinet://status") ||
		!strings.Contains(strings.Join(uris, " "), "cabinet://systems") {
		t.Fatalf("resources %q", uris)
	}
	for _, uri := range uris {
		got, err := r.client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil || len(got.Contents) != 1 {
			t.Fatalf("%s: %v %+v", uri, err, got)
		}
		text, ok := got.Contents[0].(mcp.TextResourceContents)
		if !ok || text.MIMEType != resourceMIME || !json.Valid([]byte(text.Text)) || text.URI != uri {
			t.Errorf("%s: %+v", uri, got.Contents[0])
		}
	}
	tpl, err := r.client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tpl.ResourceTemplates) != 1 {
		t.Fatalf("templates: %v %+v", err, tpl)
	}
	g := r.game("nes", "Tetris")
	uri := "cabinet://games/nes/" + g.ID
	got, err := r.client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Contents[0].(mcp.TextResourceContents).Text; !strings.Contains(text, `"Tetris"`) {
		t.Errorf("%s: %s", uri, text)
	}
	if _, err := r.client.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "cabinet://games/nes/0000"}}); err == nil {
		t.Error("an unknown game read")
	}
}
