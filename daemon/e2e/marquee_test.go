package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"net/http"
	"testing"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/chromium"
)

// TestMarqueePageFollowsES (issue 29): the daemon's marquee page in real headless Chromium on a
// marquee-shaped screen follows ES's cursor end to end — ES fires game-selected through the
// installed wrapper under dash, the daemon settles it, asks ES for the game's media and streams
// it to the page — shows the game's marquee once it settles, the name of a game without a picture,
// and, after the daemon restarts, connects again by itself and shows the next selection. The
// screenshot is the README's.
func TestMarqueePageFollowsES(t *testing.T) {
	cabinettest.Long(t, "the marquee page in Chromium over a daemon restart, about 10 s")
	chromium.Require(t)
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	d := r.startOnline()
	d.waitLog("game names refreshed", 20*time.Second)
	pool := plainGames(r.cab.Library)
	// Donkey Kong has no picture; Super Mario World gets a marquee (512 × 128 once encoded).
	marqueed, bare := findGame(t, pool, "Super Mario World"), findGame(t, pool, "Donkey Kong")
	uploadMedia(t, r, marqueed, "marquee", banner("SUPER MARIO WORLD"))
	base, tok := r.mcpURL(), r.token()

	b := chromium.Launch(t, chromium.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := b.SetViewport(ctx, chromium.Viewport{Width: 1280, Height: 360}); err != nil {
		t.Fatal(err)
	}
	resp, err := b.Navigate(ctx, base+events.MarqueePath+"#token="+tok)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("the marquee page: %v %+v", err, resp)
	}
	wait := func(what, cond string) {
		t.Helper()
		if err := b.WaitFor(ctx, cond); err != nil {
			raw, _ := b.Eval(context.Background(), `JSON.stringify({state: document.body.dataset.state, game: document.body.dataset.game, `+
				`src: document.getElementById('pic').dataset.src, width: document.getElementById('pic').naturalWidth, `+
				`name: document.getElementById('name').textContent})`)
			var page string
			json.Unmarshal(raw, &page)
			t.Fatalf("waiting for %s: %v; the page: %s; console: %q", what, err, page, b.Console())
		}
	}
	wait("the page connected", `document.body.dataset.state === "live"`)

	pictureOf := func(system, id string, width int) string {
		return fmt.Sprintf(`document.body.classList.contains("pic") && document.getElementById("pic").dataset.src === %q && `+
			`document.getElementById("pic").naturalWidth === %d`, events.ImageURL(system+"/"+id), width)
	}
	nameOf := func(name string) string {
		return fmt.Sprintf(`document.body.classList.contains("text") && document.getElementById("name").textContent === %q`, name)
	}
	// A scroll that stops on the game with a wheel (each pick handed over before the next, so
	// they reach the daemon in this order).
	for _, g := range append(pool[2:8:8], marqueed) {
		if err := r.cab.ES.SelectGame(g.System, g.ID); err != nil {
			t.Fatal(err)
		}
		r.waitScripts()
	}
	wait("the marquee of the game selected", pictureOf(marqueed.System, marqueed.ID, 512))
	if err := b.Screenshot(ctx, chromium.Artifact(t, "marquee-page-es.png")); err != nil {
		t.Fatal(err)
	}
	if err := r.cab.ES.SelectGame(bare.System, bare.ID); err != nil {
		t.Fatal(err)
	}
	r.waitScripts()
	wait("the name of a game without a picture", nameOf(bare.Name))

	// The daemon restarts on the same address; the page comes back by itself.
	if code := d.term(); code != 0 {
		t.Fatalf("daemon exit code %d after SIGTERM", code)
	}
	wait("the page to notice the daemon went", `document.body.dataset.state === "reconnecting"`)
	r.startOnline()
	if err := r.cab.ES.SelectGame(marqueed.System, marqueed.ID); err != nil {
		t.Fatal(err)
	}
	r.waitScripts()
	wait("the marquee again after the restart", pictureOf(marqueed.System, marqueed.ID, 512)+
		` && document.body.dataset.state === "live"`)
	for _, line := range b.Console() {
		t.Logf("console: %s", line)
	}
}

// banner is a marquee drawn for the test (the README shows its screenshot): title in a pixel
// font, 4× over a dusk gradient, 1024 × 256.
func banner(title string) image.Image {
	const w, h, scale = 256, 64, 4
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			small.Set(x, y, color.RGBA{uint8(20 + 60*x/w), uint8(10 + 20*y/h), uint8(90 + 80*y/h), 255})
		}
	}
	face := basicfont.Face7x13
	text := font.MeasureString(face, title).Round()
	dot := fixed.P((w-text)/2, h/2+4)
	for _, c := range []struct {
		dx, dy int
		col    color.RGBA
	}{{1, 1, color.RGBA{0, 0, 0, 255}}, {0, 0, color.RGBA{255, 210, 40, 255}}} {
		dr := &font.Drawer{Dst: small, Src: image.NewUniform(c.col), Face: face, Dot: dot.Add(fixed.P(c.dx, c.dy))}
		dr.DrawString(title)
	}
	big := image.NewRGBA(image.Rect(0, 0, w*scale, h*scale))
	for y := 0; y < h*scale; y++ {
		for x := 0; x < w*scale; x++ {
			big.Set(x, y, small.At(x/scale, y/scale))
		}
	}
	return big
}
