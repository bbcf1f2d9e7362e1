package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestArtwork: the placeholder while idle; a game with a box art shows it
// (a JPEG of at most 512 px, base64 on the image topic); one whose picture
// is not an image (an SVG) shows the placeholder; the game's end brings the
// placeholder back.
func TestArtwork(t *testing.T) {
	// ES's media paths (/userdata/…) are read under cabinet.paths.root.
	r := newRig(t, nil, func(r *rig) { r.cfg.Tools.Root = r.cab.Root })
	topic := r.settings.StateTopic(haentities.Artwork)
	placeholder := base64.StdEncoding.EncodeToString(artwork.Placeholder())
	r.retained(topic, func(v string) bool { return v == placeholder })

	games := r.cab.Library.Games("nes")
	cover, svg := games[0], games[2] // neither names a picture in the fixture
	img := image.NewRGBA(image.Rect(0, 0, 1000, 1400))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.Set(0, 0, color.White)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := es.New(es.Config{URL: r.cab.ESURL()})
	if err != nil {
		t.Fatal(err)
	}
	w := es.NewMetadataWriter(c)
	if err := w.UploadMedia(ctx, "nes", cover.ID, "thumbnail", "image/png", b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := w.UploadMedia(ctx, "nes", svg.ID, "thumbnail", "image/png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)); err != nil {
		t.Fatal(err)
	}

	// ES's game-start and game-end hooks, as the wrappers hand them over.
	hook := func(kind tracker.Kind, path, name string) {
		t.Helper()
		ev := r.stamped(kind)
		ev.Path, ev.Name, ev.System = path, name, "nes"
		r.deliver(ev)
	}
	play := func(id string) {
		t.Helper()
		// ES's UI takes a moment to come back after a game (ReturnDelay).
		cabinettest.Await(t, "ES to take the launch of "+id, nil, func() (bool, string) {
			if err := r.cab.ES.Launch("nes", id); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		waitRA(t, r.cab.RetroArch, "game loaded", func(s fakeretroarch.Snapshot) bool { return s.Loaded })
		g, _ := r.cab.ES.Running()
		hook(tracker.KindGameStart, g.Path, g.Name)
	}
	end := func() {
		t.Helper()
		if err := simulator.EndGame(ctx, r.cab); err != nil {
			t.Fatal(err)
		}
		r.clock.Advance(time.Second)
		hook(tracker.KindGameEnd, "", "")
	}
	play(cover.ID)
	got := r.retained(topic, func(v string) bool { return v != placeholder })
	pic, err := base64.StdEncoding.DecodeString(got)
	if err != nil {
		t.Fatalf("the artwork is not base64: %v", err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(pic))
	if err != nil || cfg.Width != 365 || cfg.Height != 512 || len(pic) > artwork.MaxBytes {
		t.Errorf("artwork %d×%d, %d bytes (%v); want a 365×512 JPEG within %d bytes", cfg.Width, cfg.Height, len(pic), err, artwork.MaxBytes)
	}
	end()
	r.retained(topic, func(v string) bool { return v == placeholder })

	play(svg.ID)
	r.logged("no artwork for the game: the placeholder is shown", map[string]string{"reason": "not a picture"})
	end()

	// The fixture's hostile pictures, on disk where ES names them (its
	// localpaths answer): each refused for its own reason.
	for _, c := range []struct{ system, game, reason string }{
		{"nes", "Contra", "too large"},            // a PNG claiming 100,000² pixels, then a text file
		{"nes", "Duck Hunt", "too large"},         // 20 MB
		{"nes", "Tetris", "damaged jpeg"},         // a truncated JPEG
		{"nes", "Balloon Fight", "not a picture"}, // an SVG
		{"snes", "Chrono Trigger", "no such file"},
	} {
		var g library.Game
		for _, x := range r.cab.Library.Games(c.system) {
			if strings.HasPrefix(x.Name, c.game) {
				g = x
			}
		}
		start := time.Now()
		_, err := r.d.pictures().GamePicture(ctx, c.system, g.Path)
		if err == nil || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: picture error %v, want one saying %q", c.game, err, c.reason)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: refused after %v", c.game, el)
		}
	}
	validate(t, r.capture())
}

// TestLastScreenshot: the placeholder before the first screenshot; a new
// PNG in the folder shows once it has settled; a newer file that is no
// picture is skipped and the last good one stays.
func TestLastScreenshot(t *testing.T) {
	r := newRig(t, nil, nil)
	topic := r.settings.StateTopic(haentities.LastScreenshot)
	placeholder := base64.StdEncoding.EncodeToString(artwork.Placeholder())
	r.retained(topic, func(v string) bool { return v == placeholder })
	dir := r.cfg.Tools.Paths.ScreenshotDir
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 640, 480))); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte, age time.Duration) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	write("Mario-260101-200000.png", b.Bytes(), time.Minute)
	var shot string
	// The folder's watch arms the settle timer on the fake clock: move it
	// on until the picture is out.
	cabinettest.Await(t, "the screenshot shown", nil, func() (bool, string) {
		r.clock.Advance(sensors.ScreenshotSettle)
		v, _ := r.broker.Retained(topic)
		shot = string(v)
		return shot != placeholder && shot != "", "still the placeholder"
	})

	pic, _ := base64.StdEncoding.DecodeString(shot)
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(pic)); err != nil || cfg.Width != 512 || cfg.Height != 384 {
		t.Errorf("screenshot %d×%d (%v), want 512×384", cfg.Width, cfg.Height, err)
	}
	write("broken-260101-200100.png", []byte("\x89PNG\r\n\x1a\nnot really"), 0)
	cabinettest.Await(t, "the broken screenshot skipped", nil, func() (bool, string) {
		r.clock.Advance(sensors.ScreenshotSettle)
		return len(r.logs.entries("screenshot not shown")) > 0, "not yet"
	})

	if v, _ := r.broker.Retained(topic); string(v) != shot {
		t.Error("a broken screenshot replaced the last good one")
	}
}
