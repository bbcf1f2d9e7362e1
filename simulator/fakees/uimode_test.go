package fakees

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// TestKidMode holds the fake to what the real ES showed in Kid mode
// (daemon/e2e TestRealESUIMode, ES 71dd88b9): /systems counts only the
// games marked kidgame, a system with none is "visible": "false", favorites
// stays visible; the mode is read from es_settings.cfg when ES starts, so a
// change in the file shows only after a Start.
func TestKidMode(t *testing.T) {
	settings := filepath.Join(t.TempDir(), "es_settings.cfg")
	write := func(mode string) {
		t.Helper()
		body := "<?xml version=\"1.0\"?>\n<config>\n\t<string name=\"UIMode\" value=\"" + mode + "\" />\n</config>\n"
		if err := os.WriteFile(settings, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Kid")
	e := newEnv(t, Config{Library: library.Fixture(""), Settings: settings})
	type sys struct {
		Name       string `json:"name"`
		Visible    string `json:"visible"`
		TotalGames int    `json:"totalGames"`
	}
	systems := func() map[string]sys {
		t.Helper()
		var list []sys
		if err := json.Unmarshal(e.get("/systems").body, &list); err != nil {
			t.Fatal(err)
		}
		out := map[string]sys{}
		for _, s := range list {
			out[s.Name] = s
		}
		return out
	}
	kids := 0
	for _, g := range e.srv.Library().Games("nes") {
		if g.Meta("kidgame") == "true" {
			kids++
		}
	}
	got := systems()
	if got["nes"].TotalGames != kids || got["nes"].Visible != "true" || got["snes"].Visible != "false" || got["snes"].TotalGames != 0 ||
		got["favorites"].Visible != "true" {
		t.Errorf("Kid: %+v, want nes's %d kid games, snes hidden, favorites shown", got, kids)
	}
	write("Full")
	if got := systems(); got["snes"].Visible != "false" {
		t.Errorf("the file read before ES restarts: %+v", got["snes"])
	}
	e.srv.Start()
	if got := systems(); got["snes"].Visible != "true" || got["nes"].TotalGames == kids {
		t.Errorf("Full after a start: %+v", got)
	}
}
