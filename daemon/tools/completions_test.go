package tools

import (
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestCompletions: systems by folder or full name, games by find_games' matching (on the system
// already chosen), moods, and the games template's ids.
func TestCompletions(t *testing.T) {
	r := newRig(t, rigConfig{})
	ctx := cabinettest.Context(t)
	complete := func(ref any, name, value string, args map[string]string) []string {
		t.Helper()
		req := mcp.CompleteRequest{}
		req.Params.Ref, req.Params.Argument.Name, req.Params.Argument.Value = ref, name, value
		req.Params.Context.Arguments = args
		res, err := r.client.Complete(ctx, req)
		if err != nil {
			t.Fatalf("complete %s=%q: %v", name, value, err)
		}
		return res.Completion.Values
	}
	prompt := func(name string) any { return mcp.PromptReference{Type: "ref/prompt", Name: name} }
	if got := complete(prompt("find-and-launch"), "system", "Super", nil); !slices.Contains(got, "snes") {
		t.Errorf("systems for Super: %q", got)
	}
	if got := complete(prompt("find-and-launch"), "system", "me", nil); !slices.Contains(got, "megadrive") {
		t.Errorf("systems for me: %q", got)
	}
	if got := complete(prompt("find-and-launch"), "query", "tetr", nil); len(got) != 1 || got[0] != "Tetris" {
		t.Errorf("games for tetr: %q", got)
	}
	if got := complete(prompt("find-and-launch"), "query", "street", map[string]string{"system": "mame"}); strings.Join(got, ",") != "Street Fighter II" {
		t.Errorf("games for street on mame: %q", got)
	}
	if got := complete(prompt("explore-library"), "mood", "h", nil); strings.Join(got, ",") != "hidden gem" {
		t.Errorf("moods for h: %q", got)
	}
	tpl := mcp.ResourceReference{Type: "ref/resource", URI: gamesTemplate}
	want := r.game("snes", "Chrono Trigger").ID
	if got := complete(tpl, "game_id", "chrono", map[string]string{"system": "snes"}); len(got) != 1 || got[0] != want {
		t.Errorf("ids for chrono: %q, want %s", got, want)
	}
}
