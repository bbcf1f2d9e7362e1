package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// fakePictures serves the pictures it was given; any other key has none.
// The zero value has none at all.
type fakePictures struct {
	mu   sync.Mutex
	pics map[string][]byte
	err  error // answered for every key when set
}

func (f *fakePictures) set(key string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pics == nil {
		f.pics = map[string][]byte{}
	}
	f.pics[key] = b
}

func (f *fakePictures) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fakePictures) Marquee(_ context.Context, key string) ([]byte, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, "", f.err
	}
	b, ok := f.pics[key]
	if !ok {
		return nil, "", ErrNoPicture
	}
	return b, "image/png", nil
}

// testPicture is a generated PNG: a dark background with a filled disc of
// color c, w×h pixels.
func testPicture(t testing.TB, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := min(w, h) * 2 / 5
	for y := range h {
		for x := range w {
			dx, dy := x-w/2, y-h/2
			if dx*dx+dy*dy <= r*r {
				img.SetRGBA(x, y, c)
			} else {
				img.SetRGBA(x, y, color.RGBA{20, 20, 40, 255})
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// guarded is the hub and pictures behind a real guard, as the daemon
// mounts them, with the default token and named ones.
type guarded struct {
	srv                 *httptest.Server
	hub                 *Hub
	pics                *fakePictures
	def, reader, player string
	logs                *cabinettest.LogBuffer
}

func newGuarded(t *testing.T, opts Options) *guarded {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	def, err := httpauth.NewToken(path)
	if err != nil {
		t.Fatal(err)
	}
	st := httpauth.NewStore(path)
	reader, _, err := st.Create("marquee", []string{httpauth.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	player, _, err := st.Create("pad", []string{httpauth.ScopePlay})
	if err != nil {
		t.Fatal(err)
	}
	g := &guarded{hub: New(opts), pics: &fakePictures{}, def: def, reader: reader, player: player, logs: &cabinettest.LogBuffer{}}
	log := zerolog.New(g.logs)
	guard := httpauth.New(httpauth.Options{TokenPath: path, Routes: Routes(g.hub, g.pics, log),
		OnDenied: func(r *http.Request, status int, reason string) {
			// What the daemon's denial logger writes.
			log.Warn().Str("remote", r.RemoteAddr).Int("status", status).Str("reason", reason).Msg("MCP request refused")
		}})
	g.srv = httptest.NewServer(guard.Wrap(http.NotFoundHandler()))
	t.Cleanup(g.srv.Close)
	t.Cleanup(guard.Flush)
	return g
}

func (g *guarded) get(t *testing.T, path, token string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", g.srv.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

var nonceRE = regexp.MustCompile(`<script nonce="([0-9a-f]{32})">`)

// TestMarqueePage: the page is served without a token, with a CSP that
// lets only its own script and style run, only its own origin be fetched
// and only object URLs be shown; its nonce is new every time.
func TestMarqueePage(t *testing.T) {
	g := newGuarded(t, Options{})
	var nonces []string
	for range 2 {
		resp, body := g.get(t, MarqueePath, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		m := nonceRE.FindSubmatch(body)
		if m == nil {
			t.Fatalf("page without a nonced script:\n%s", body)
		}
		nonce := string(m[1])
		nonces = append(nonces, nonce)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'nonce-" + nonce + "'", "style-src 'nonce-" + nonce + "'",
			"img-src blob:", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(string(body), "{{") || bytes.Count(body, []byte(nonce)) != 2 {
			t.Errorf("the page's placeholders are not all filled")
		}
		for h, want := range map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Frame-Options": "DENY"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
	}
	if nonces[0] == nonces[1] {
		t.Error("the nonce is the same on two loads")
	}
}

// TestGuardedStream: /events and /marquee/image need a token with the read
// scope; a token in the query is refused and appears neither in the answer
// nor in the log.
func TestGuardedStream(t *testing.T) {
	g := newGuarded(t, Options{})
	pic := testPicture(t, 60, 20, color.RGBA{220, 40, 40, 255})
	g.pics.set("nes/abc", pic)
	g.hub.Publish(KindSelection, Selection{Game: "Alpha Quest", System: "nes", Image: ImageURL("nes/abc")})

	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"events, no token", EventsPath, "", 401},
		{"events, play-only token", EventsPath, g.player, 403},
		{"events, token in the query", EventsPath + "?token=" + g.reader, "", 400},
		{"events, access_token in the query", EventsPath + "?access_token=" + g.def, g.def, 400},
		{"picture, no token", ImagePath + "?game=nes%2Fabc", "", 401},
		{"picture, play-only token", ImagePath + "?game=nes%2Fabc", g.player, 403},
		{"picture, token in the query", ImagePath + "?game=nes%2Fabc&token=" + g.reader, "", 400},
		{"picture, bad key", ImagePath + "?game=..%2Fetc", g.reader, 400},
		{"picture, none", ImagePath + "?game=nes%2Fother", g.reader, 404},
		{"page, token in the query", MarqueePath + "?token=" + g.reader, "", 400},
	} {
		resp, body := g.get(t, tc.path, tc.token)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, resp.StatusCode, body, tc.want)
		}
		if strings.Contains(string(body), g.reader) || strings.Contains(string(body), g.def) {
			t.Errorf("%s: the answer holds the token: %s", tc.name, body)
		}
	}
	if log := g.logs.String(); strings.Contains(log, g.reader) || strings.Contains(log, g.def) || !strings.Contains(log, "a token in the address's query is refused") {
		t.Errorf("the log holds a token, or not the refusal:\n%s", log)
	}

	resp, body := g.get(t, ImagePath+"?game=nes%2Fabc", g.reader)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, pic) {
		t.Errorf("picture: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	g.pics.fail(errors.New("ES is down"))
	if resp, _ := g.get(t, ImagePath+"?game=nes%2Fabc", g.def); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("a failing look-up: %d", resp.StatusCode)
	}

	// The stream with the read token: the replay, then what is published.
	ctx := cabinettest.Context(t)
	req, _ := http.NewRequestWithContext(ctx, "GET", g.srv.URL+EventsPath, nil)
	req.Header.Set("Authorization", "Bearer "+g.reader)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sr := newSSEReader(resp.Body)
	f, err := sr.nextEvent()
	if err != nil || f.Event != KindSelection || !strings.Contains(f.Data, `"image":"/marquee/image?game=nes%2Fabc"`) {
		t.Fatalf("replay %+v %v", f, err)
	}
	for i := range 3 {
		g.hub.Publish(KindAchievement, Achievement{ID: uint32(100 + i), Title: "First steps"})
		if f, err := sr.nextEvent(); err != nil || f.Event != KindAchievement || !strings.Contains(f.Data, fmt.Sprintf(`"id":%d,`, 100+i)) {
			t.Fatalf("achievement %d: %+v %v", i, f, err)
		}
	}
}
