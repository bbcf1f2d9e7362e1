package e2e

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/reales"
)

// TestRealESInstalledGameKeepsItsMetadata holds the library installer's ES side to Batocera's
// real EmulationStation: a game file moved into a system folder is listed after GET
// /reloadgames under id md5(path); its metadata set through POST /systems/{sys}/games/{id} and
// its cover through POST …/media/image (es.MetadataWriter, the routes the installer uses) are
// what ES then serves — and still are after ES quits (writing its game lists) and starts again.
func TestRealESInstalledGameKeepsItsMetadata(t *testing.T) {
	cabinettest.Long(t, "a real EmulationStation started twice")
	reales.Require(t)
	real := reales.New(t, reales.Options{Dir: cabinettest.TempDir(t, "reales")})
	real.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := es.New(es.Config{URL: reales.URL})
	if err != nil {
		t.Fatal(err)
	}
	rom := real.ROM(reales.SystemSNES, "Cosmic Crusade (USA).sfc")
	if err := os.WriteFile(rom, bytes.Repeat([]byte("cosmic"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.ReloadGames(ctx); err != nil {
		t.Fatal(err)
	}
	id := es.GameID(rom)
	waitGame := func() es.Game {
		t.Helper()
		var g es.Game
		cabinettest.Await(t, "ES to list the new game", nil, func() (bool, string) {
			var err error
			g, err = c.GameLocal(ctx, reales.SystemSNES, id)
			if errors.Is(err, es.ErrNotFound) {
				return false, "not listed"
			}
			if err != nil {
				return false, err.Error()
			}
			return true, ""
		})

		return g
	}
	if g := waitGame(); g.Name != "Cosmic Crusade (USA)" {
		t.Errorf("before the metadata ES names it %q (the file's stem, as ES does)", g.Name)
	}
	w := es.NewMetadataWriter(c)
	meta := map[string]string{"name": "Cosmic Crusade", "desc": "Save the galaxy.\nTwice.", "genre": "Shooter",
		"players": "1-2", "developer": "Northwind Games", "releasedate": "19930101T000000"}
	if err := w.SetMetadata(ctx, reales.SystemSNES, id, meta); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var cover bytes.Buffer
	png.Encode(&cover, img)
	if err := w.UploadMedia(ctx, reales.SystemSNES, id, "image", "image/png", cover.Bytes()); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		g := waitGame()
		if g.Name != meta["name"] || g.Desc != meta["desc"] || g.Genre != meta["genre"] || g.Players != meta["players"] ||
			g.Developer != meta["developer"] || g.ReleaseDate.Year() != 1993 {
			t.Errorf("%s ES has name %q desc %q genre %q players %q developer %q released %v", when, g.Name, g.Desc, g.Genre, g.Players,
				g.Developer, g.ReleaseDate)
		}
		if got, err := os.ReadFile(g.Image); err != nil || !bytes.Equal(got, cover.Bytes()) {
			t.Errorf("%s the cover ES points at (%q): %v", when, g.Image, err)
		}
	}
	check("right after:")
	real.Restart()
	check("after ES restarted:")
	t.Logf("ES keeps the cover at the scraper's path; metadata in gamelist.xml")
}
