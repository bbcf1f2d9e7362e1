package simulator

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func httpDo(t *testing.T, method, url, ctype, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if method == http.MethodPost {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func esGames(t *testing.T, c *Cabinet, system string) map[string]string {
	t.Helper()
	status, body := httpDo(t, http.MethodGet, c.ESURL()+"/systems/"+system+"/games", "", "")
	var games []struct{ ID, Path string }
	if status != 200 || json.Unmarshal(body, &games) != nil {
		t.Fatalf("GET /systems/%s/games: %d %s", system, status, body)
	}
	out := map[string]string{}
	for _, g := range games {
		out[g.Path] = g.ID
	}
	return out
}

func writeTreeFile(t *testing.T, c *Cabinet, path string) {
	t.Helper()
	p := c.Path(path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("ROM"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReloadRescansTree: /reloadgames on the fake ES reads the fake tree,
// as ES reads the ROM folders: a ROM installed on disk becomes a game, one
// deleted goes, partial downloads and hidden folders are never games, and
// a reload of the untouched tree changes nothing.
func TestReloadRescansTree(t *testing.T) {
	c, err := Start(Options{RomM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := map[string]map[string]string{}
	for _, s := range c.Library.Systems() {
		before[s.Name] = esGames(t, c, s.Name)
	}
	if status, _ := httpDo(t, http.MethodGet, c.ESURL()+"/reloadgames", "", ""); status != 200 {
		t.Fatalf("reloadgames: %d", status)
	}
	for _, s := range c.Library.Systems() {
		if got := esGames(t, c, s.Name); len(got) != len(before[s.Name]) {
			t.Errorf("%s: %d games after a reload of the untouched tree, want %d", s.Name, len(got), len(before[s.Name]))
		}
	}
	if c.RomMGamePath() == "" || esGames(t, c, "nes")[c.RomMGamePath()] == "" {
		t.Errorf("the RomM game %q is gone after the reload", c.RomMGamePath())
	}

	const installed = "/userdata/roms/nes/Installed Quest (USA).nes"
	writeTreeFile(t, c, installed)
	writeTreeFile(t, c, "/userdata/roms/nes/Next Quest (USA).nes.cabinet-part")
	writeTreeFile(t, c, "/userdata/roms/nes/.cabinet-tmp/Hidden Quest (USA).nes")
	if err := os.Remove(c.Path("/userdata/roms/nes/Tetris (USA).nes")); err != nil {
		t.Fatal(err)
	}
	httpDo(t, http.MethodGet, c.ESURL()+"/reloadgames", "", "")
	var games map[string]string
	cabinettest.Await(t, "the installed game listed", nil, func() bool {
		games = esGames(t, c, "nes")
		return games[installed] != ""
	})
	if id := games[installed]; id != library.GameID(installed) {
		t.Errorf("installed game id %s, want md5 of its path %s", id, library.GameID(installed))
	}
	for p := range games {
		if strings.Contains(p, "Next Quest") || strings.Contains(p, "Hidden Quest") || strings.Contains(p, "Tetris (USA)") {
			t.Errorf("listed after the reload: %s", p)
		}
	}
	if want := len(before["nes"]); len(games) != want {
		t.Errorf("nes has %d games, want %d (one installed, one deleted)", len(games), want)
	}
}

// TestMediaUploadWritesTree: a cover uploaded through the fake ES lands
// where ES's scraper saves it, in the tree, is served back, and is no game
// on the next reload.
func TestMediaUploadWritesTree(t *testing.T) {
	c, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const rom = "/userdata/roms/nes/Tetris (USA).nes"
	game := c.ESURL() + "/systems/nes/games/" + library.GameID(rom)
	cover := "\x89PNG\r\n\x1a\nfake cover"
	if status, body := httpDo(t, http.MethodPost, game+"/media/image", "image/png", cover); status != 200 {
		t.Fatalf("upload: %d %s", status, body)
	}
	const saved = "/userdata/roms/nes/images/Tetris (USA)-image.png"
	if b, err := os.ReadFile(c.Path(saved)); err != nil || string(b) != cover {
		t.Errorf("tree file %s: %q, %v; want the uploaded bytes", saved, b, err)
	}
	_, body := httpDo(t, http.MethodGet, game+"?localpaths=true", "", "")
	var meta map[string]string
	if json.Unmarshal(body, &meta) != nil || meta["image"] != saved {
		t.Errorf("localpaths image = %q, want %s", meta["image"], saved)
	}
	if status, body := httpDo(t, http.MethodGet, game+"/media/image", "", ""); status != 200 || string(body) != cover {
		t.Errorf("GET media/image: %d %q, want the uploaded bytes", status, body)
	}
	// A fixture image without a file is still served.
	plain := c.ESURL() + "/systems/nes/games/" + library.GameID("/userdata/roms/nes/Plain.nes")
	if status, body := httpDo(t, http.MethodGet, plain+"/media/image", "", ""); status != 200 || !strings.HasPrefix(string(body), "\x89PNG") {
		t.Errorf("GET of a fixture image: %d %q, want a PNG", status, body)
	}
	n := len(esGames(t, c, "nes"))
	httpDo(t, http.MethodGet, c.ESURL()+"/reloadgames", "", "")
	if got := len(esGames(t, c, "nes")); got != n {
		t.Errorf("%d nes games after the reload, want %d: images/ is no ROM folder", got, n)
	}
}

func TestTreePathStaysInTree(t *testing.T) {
	c := &Cabinet{Root: "/tmp/sim/root"}
	for p, ok := range map[string]bool{
		"/userdata/roms/nes/images/x.png": true,
		"/userdata/../../etc/passwd":      false,
		"relative/x.png":                  false,
	} {
		if _, err := c.treePath(p); (err == nil) != ok {
			t.Errorf("treePath(%q): err %v, want ok %v", p, err, ok)
		}
	}
}

// TestReloadKeepsGeneratedGames: a generated library has no ROM files in
// the tree (its games are pinned); a reload keeps them and still finds a
// ROM installed beside them.
func TestReloadKeepsGeneratedGames(t *testing.T) {
	c, err := Start(Options{Games: 3000, Systems: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const installed = "/userdata/roms/atari2600/Installed (USA).rom"
	writeTreeFile(t, c, installed)
	httpDo(t, http.MethodGet, c.ESURL()+"/reloadgames", "", "")
	if n := c.Library.Len(); n != 3001 {
		t.Errorf("%d games after the reload, want the 3000 generated and the installed one", n)
	}
	if esGames(t, c, "atari2600")[installed] == "" {
		t.Error("the installed ROM is not listed")
	}
}
