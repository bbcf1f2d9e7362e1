package events

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/chromium"
)

// marqueeServer is the daemon's HTTP side for the page: a hub and its
// pictures behind the guard, on a loopback address it can be restarted on.
type marqueeServer struct {
	addr string
	hub  *Hub
	srv  *http.Server
	done chan struct{}
}

func startMarquee(t *testing.T, addr, tokenPath string, pics Pictures) *marqueeServer {
	t.Helper()
	var ln net.Listener
	var err error
	// The old server's port may take a moment to be free again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	m := &marqueeServer{addr: ln.Addr().String(), hub: New(Options{}), done: make(chan struct{})}
	guard := httpauth.New(httpauth.Options{TokenPath: tokenPath, Routes: Routes(m.hub, pics, zerolog.Nop())})
	m.srv = &http.Server{Handler: guard.Wrap(http.NotFoundHandler()), ReadHeaderTimeout: 10 * time.Second}
	m.srv.RegisterOnShutdown(m.hub.DisconnectAll)
	go func() {
		defer close(m.done)
		m.srv.Serve(ln)
	}()
	t.Cleanup(m.stop)
	return m
}

// stop ends the server and every connection, as a daemon that stops.
func (m *marqueeServer) stop() {
	m.srv.Close()
	<-m.done
}

// TestMarqueeInBrowser: the marquee page in real headless Chromium on a
// marquee-shaped screen: without a token it says what to do; with one it
// shows the selected game's picture, the running game's while one runs,
// and, after the daemon restarts, the new selection once it has connected
// again by itself.
func TestMarqueeInBrowser(t *testing.T) {
	chromium.Require(t)
	tokenPath := filepath.Join(t.TempDir(), "token")
	token, err := httpauth.NewToken(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	pics := &fakePictures{}
	pics.set("nes/alpha", testPicture(t, 600, 200, color.RGBA{230, 50, 40, 255}))
	pics.set("snes/beta", testPicture(t, 400, 300, color.RGBA{40, 200, 80, 255}))
	pics.set("nes/gamma", testPicture(t, 300, 100, color.RGBA{60, 90, 240, 255}))
	m := startMarquee(t, "127.0.0.1:0", tokenPath, pics)
	page := "http://" + m.addr + MarqueePath

	b := chromium.Launch(t, chromium.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := b.SetViewport(ctx, chromium.Viewport{Width: 1280, Height: 360}); err != nil {
		t.Fatal(err)
	}

	// No token: the page says how to get one, and asks nothing.
	resp, err := b.Navigate(ctx, page)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("page: %v %+v", err, resp)
	}
	waitPage(t, ctx, b, "the page to ask for a token", `document.body.dataset.state === "no-token" && `+
		`document.getElementById("status").textContent.includes("cabinet token new --name marquee --scope read")`)

	// With the token in the fragment: the selected game's picture.
	m.hub.Publish(KindSelection, Selection{Game: "Alpha Quest", System: "nes", Image: ImageURL("nes/alpha")})
	// (Another query: a new fragment alone would not load the page again.)
	resp, err = b.Navigate(ctx, page+"?screen=lcd#token="+token)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("page with a token: %v %+v", err, resp)
	}
	shows := func(key string, width int) string {
		return fmt.Sprintf(`document.body.classList.contains("pic") && document.getElementById("pic").dataset.src === %q && `+
			`document.getElementById("pic").naturalWidth === %d`, ImageURL(key), width)
	}
	waitPage(t, ctx, b, "the selected game's picture", shows("nes/alpha", 600)+` && document.body.dataset.state === "live"`)
	if err := b.Screenshot(ctx, chromium.Artifact(t, "marquee-page.png")); err != nil {
		t.Fatal(err)
	}
	// Contained: the whole picture, as large as the screen allows.
	raw, err := b.Eval(ctx, `(() => { const p = document.getElementById("pic"), r = p.getBoundingClientRect(); `+
		`return [r.width, r.height, getComputedStyle(p).objectFit, getComputedStyle(document.body).backgroundColor]; })()`)
	if err != nil || string(raw) != `[1280,360,"contain","rgb(0, 0, 0)"]` {
		t.Errorf("the picture's box, fit and background %s %v, want the whole black screen, contained", raw, err)
	}

	// A game runs: its picture; it ends: the selection's again.
	m.hub.Publish(KindNowPlaying, NowPlaying{Playing: true, Game: "Beta Racer", System: "snes", Image: ImageURL("snes/beta")})
	waitPage(t, ctx, b, "the running game's picture", shows("snes/beta", 400))
	m.hub.Publish(KindNowPlaying, NowPlaying{Playing: false})
	waitPage(t, ctx, b, "the selection's picture after the game", shows("nes/alpha", 600))

	// A game without a picture: its name, large.
	m.hub.Publish(KindSelection, Selection{Game: "Delta Force", System: "nes", Image: ImageURL("nes/none")})
	waitPage(t, ctx, b, "the name of a game without a picture", `document.body.classList.contains("text") && `+
		`document.getElementById("name").textContent === "Delta Force" && !document.getElementById("pic").getAttribute("src")`)

	// The daemon restarts on the same address: the page notices, connects
	// again by itself and shows what the new daemon publishes.
	m.stop()
	waitPage(t, ctx, b, "the page to notice the daemon went", `document.body.dataset.state === "reconnecting"`)
	m = startMarquee(t, m.addr, tokenPath, pics)
	m.hub.Publish(KindSelection, Selection{Game: "Gamma Ray", System: "nes", Image: ImageURL("nes/gamma")})
	waitPage(t, ctx, b, "the new selection after the restart", shows("nes/gamma", 300)+` && document.body.dataset.state === "live"`)

	for _, line := range b.Console() {
		if strings.Contains(line, "Content Security Policy") || strings.Contains(line, "exception") {
			t.Errorf("console: %s", line)
		}
	}
}

// waitPage waits until the page's JavaScript condition cond holds, looking
// again every 50 ms inside the page; it fails t with what the page shows
// when the context ends first.
func waitPage(t *testing.T, ctx context.Context, b *chromium.Browser, what, cond string) {
	t.Helper()
	if err := b.WaitFor(ctx, cond); err != nil {
		raw, _ := b.Eval(context.Background(), `JSON.stringify({state: document.body.dataset.state, game: document.body.dataset.game, `+
			`src: document.getElementById('pic').dataset.src, width: document.getElementById('pic').naturalWidth, status: document.getElementById('status').textContent})`)
		var page string
		json.Unmarshal(raw, &page)
		t.Fatalf("waiting for %s: %v; the page: %s; console: %q", what, err, page, b.Console())
	}
}
