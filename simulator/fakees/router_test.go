package fakees

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

func TestRoutes(t *testing.T) {
	e := capturedEnv(t)
	plain := "/systems/nes/games/" + plainID
	for _, tc := range []struct {
		method, path, body, ctype string
		status                    int
		wantType, wantBody        string // wantBody "" = empty; "*" = any
	}{
		{"GET", "/systems/nes/games/xyz/logo", "", "", 404, "text/html", "404 not found"},
		{"GET", "/systems/nope/games", "", "", 404, "text/html", "404 system not found"},
		{"GET", "/systems/nes/games/", "", "", 404, "text/html", "404 game not found"},
		{"GET", "/systems/nes/games/a/games/" + plainID, "", "", 404, "text/html", "404 game not found"},
		{"GET", "/systems/favorites/games/" + plainID, "", "", 200, "application/json", "*"},
		{"GET", "/systems/all", "", "", 200, "application/json", "*"},
		{"GET", "/systems/recent", "", "", 404, "text/html", "404 not found"}, // not enabled here
		{"GET", "/resources/x.png", "", "", 404, "text/html", "404 not found"},
		{"GET", "/whatever", "", "", 404, "text/html", "404 not found"},
		{"GET", "/favicon.png", "", "", 200, "", ""},
		{"GET", "/index.html", "", "", 200, "text/html", "*"},
		{"GET", "/restart", "", "", 200, "", ""},
		{"GET", "/shutdown", "", "", 200, "", ""},
		{"GET", "/quit?confirm=menu", "", "", 200, "", ""},
		{"POST", "/caps", "x", "", 404, "", ""},
		{"DELETE", "/systems", "", "", 404, "", ""},
		{"POST", "/launch", "", "", 400, "text/html", "400 bad request - body is missing"},
		{"POST", "/messagebox", "", "", 400, "text/html", "400 bad request - body is missing"},
		{"POST", plain, "not json", "", 404, "text/html", "404 game not found"},
		{"POST", plain, `["genre"]`, "", 404, "text/html", "404 game not found"},
		{"POST", plain, `{"genre":7}`, "", 404, "text/html", "404 game not found"},
		{"POST", "/systems/nes/games/nope", `{"genre":"x"}`, "", 404, "text/html", "404 game not found"},
		{"POST", plain + "/media/image", "png", "", 400, "text/html", "400 missing content-type"},
		{"POST", plain + "/media/image", "png", "image/png", 200, "", ""},
		{"POST", plain + "/media/image", "png", "text/plain", 404, "text/html", "404 media not found"},
		{"POST", plain + "/media/image", "mp4", "video/mp4", 404, "text/html", "404 media not found"},
		{"POST", plain + "/media/video", "mp4", "video/mp4", 200, "", ""},
		{"POST", plain + "/media/desc", "x", "image/png", 404, "text/html", "404 media not found"},
		{"POST", "/addgames/nes", "<gameList/>", "", 204, "", ""},
		{"POST", "/addgames/psx", "<gameList/>", "", 404, "text/html", "404 System not found"},
		{"POST", "/removegames/nes", "<gameList><game><path>./Plain.nes</path></game></gameList>", "", 204, "", ""},
		{"POST", "/removegames/psx", "<gameList/>", "", 404, "text/html", "404 not found"},
		{"POST", "/storage/event", "add sda1", "", 200, "text/plain", "OK"},
		{"POST", "/storage/event", "", "", 400, "text/plain", "400 bad request - body is missing"},
	} {
		var hdr []string
		if tc.ctype != "" {
			hdr = []string{"Content-Type", tc.ctype}
		}
		got := e.do(tc.method, tc.path, tc.body, hdr...)
		if got.status != tc.status || got.header.Get("Content-Type") != tc.wantType ||
			(tc.wantBody != "*" && string(got.body) != tc.wantBody) {
			t.Errorf("%s %s %q: got %d %q %q, want %d %q %q", tc.method, tc.path, tc.body,
				got.status, got.header.Get("Content-Type"), got.body, tc.status, tc.wantType, tc.wantBody)
		}
	}
	if n := e.srv.Library().Len(); n != 4 {
		t.Errorf("library has %d games after /removegames, want 4", n)
	}
	for route, want := range map[string]int{RouteQuit: 1, RouteRestart: 1, RouteShutdown: 1, RouteAddGames: 2,
		RouteRemoveGames: 2, RouteMediaUpload: 5, RouteMetadata: 4, RouteLaunch: 0, RouteStorageEvent: 1} {
		if got := e.srv.CallCount(route); got != want {
			t.Errorf("CallCount(%s) = %d, want %d", route, got, want)
		}
	}
	// ES's own events for /restart and /shutdown; /quit?confirm=menu only
	// opens the menu. Nothing quits (TestQuitRoutes).
	if got, want := e.events.Take(), []string{"quit|reboot", "reboot", "quit|shutdown", "shutdown"}; !equalStrings(got, want) {
		t.Errorf("the quit routes fired %q, want %q", got, want)
	}
	calls := e.srv.Calls()
	if c := calls[0]; c.Route != RouteRestart || c.Method != "GET" || c.Path != "/restart" {
		t.Errorf("first call %+v, want GET /restart", c)
	}
}

func TestFavoritesEntryCarriesSourceSystem(t *testing.T) {
	e := capturedEnv(t)
	got := e.get("/systems/favorites/games/" + plainID)
	for _, want := range []string{`"systemName": "nes"`, `"image": "/systems/nes/games/` + plainID + `/media/image"`} {
		if !strings.Contains(string(got.body), want) {
			t.Errorf("favorites entry lacks %s:\n%s", want, got.body)
		}
	}
}

func TestHead(t *testing.T) {
	e := capturedEnv(t)
	got := e.do("HEAD", "/caps", "")
	if got.status != 200 || got.header.Get("Content-Length") != "46" || len(got.body) != 0 {
		t.Errorf("HEAD /caps: %d CL %s body %q, want 200, 46, none", got.status, got.header.Get("Content-Length"), got.body)
	}
}

// fromAddr sends a GET from a given local loopback address.
func fromAddr(t *testing.T, url, local string) *http.Response {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestOnlyLocalhost(t *testing.T) {
	for _, tc := range []struct {
		public bool
		from   string
		want   int
	}{
		{false, "127.0.0.1", 200},
		{false, "127.0.0.2", 403},
		{true, "127.0.0.2", 200},
	} {
		e := newEnv(t, Config{Library: library.Captured(""), PublicWebAccess: tc.public})
		resp := fromAddr(t, e.ln.URL()+"/caps", tc.from)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("public=%v from %s: %d, want %d", tc.public, tc.from, resp.StatusCode, tc.want)
		}
		if tc.want == 403 && (string(b) != "403 - Forbidden" || resp.Header.Get("Content-Type") != "text/html") {
			t.Errorf("403 body %q type %q", b, resp.Header.Get("Content-Type"))
		}
	}
}

// The built-in emulator must stop on cancel; a nil Emulator uses it.
func TestWaitEmulator(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code, err := (waitEmulator{}).Run(ctx, library.Game{}); code != 0 || err != nil {
		t.Errorf("Run = %d, %v; want 0, nil", code, err)
	}
}
