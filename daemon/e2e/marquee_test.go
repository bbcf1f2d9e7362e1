package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/chromium"
)

// TestMarqueePageFollowsES (issue 29): the daemon's marquee page in real headless Chromium on a
// marquee-shaped screen follows ES's cursor end to end — ES fires game-selected through the
// installed wrapper under dash, the daemon settles it, asks ES for the game's media and streams
// it to the page — shows the game's wheel once it settles, the name of a game without a picture,
// and, after the daemon restarts, connects again by itself and shows the next selection. The
// screenshot is the README's.
func TestMarqueePageFollowsES(t *testing.T) {
	cabinettest.Long(t, "the marquee page in Chromium over a daemon restart, about 10 s")
	chromium.Require(t)
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	d := r.startOnline()
	d.waitLog("game names refreshed", 20*time.Second)
	pool := plainGames(r.cab.Library)
	find := func(prefix string) library.Game {
		for _, g := range pool {
			if strings.HasPrefix(g.Name, prefix) {
				return g
			}
		}
		t.Fatalf("no %s among the plain games", prefix)
		return library.Game{}
	}
	withWheel, bare := find("Super Mario World"), find("Donkey Kong") // Donkey Kong has no picture
	uploadWheel(t, r, withWheel)                                      // 300 × 100
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
	for _, g := range append(pool[2:8:8], withWheel) {
		if err := r.cab.ES.SelectGame(g.System, g.ID); err != nil {
			t.Fatal(err)
		}
		r.waitScripts()
	}
	wait("the wheel of the game selected", pictureOf(withWheel.System, withWheel.ID, 300))
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
	if err := r.cab.ES.SelectGame(withWheel.System, withWheel.ID); err != nil {
		t.Fatal(err)
	}
	r.waitScripts()
	wait("the wheel again after the restart", pictureOf(withWheel.System, withWheel.ID, 300)+
		` && document.body.dataset.state === "live"`)
	for _, line := range b.Console() {
		t.Logf("console: %s", line)
	}
}
