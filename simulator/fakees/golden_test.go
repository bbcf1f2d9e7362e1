package fakees

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the fake's output")

// captureDir holds copies of /work/shared/reference/es-captures (real ES
// responses), so that the test runs on a clean clone.
const captureDir = "testdata/es-captures"

func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(captureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// captureHeaders parses a *.headers file: status code and header fields.
func captureHeaders(t *testing.T, name string) (int, http.Header) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(string(readCapture(t, name)), "\r\n"), "\r\n")
	fields := strings.Fields(lines[0])
	code, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatalf("%s: status line %q", name, lines[0])
	}
	h := http.Header{}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ": ")
		h.Add(k, v)
	}
	return code, h
}

// checkHeaders compares status, header names and Content-Type/Location with
// a capture. Content-Length must match our own body (the captures' lengths
// are those of bodies before their paths were rewritten).
func checkHeaders(t *testing.T, capture string, got response) {
	t.Helper()
	code, want := captureHeaders(t, capture+".headers")
	if got.status != code {
		t.Errorf("%s: status %d, want %d", capture, got.status, code)
	}
	for _, k := range []string{"Content-Type", "Location"} {
		if g, w := got.header.Values(k), want.Values(k); !equalStrings(g, w) {
			t.Errorf("%s: %s = %q, want %q", capture, k, g, w)
		}
	}
	for k := range got.header {
		if k != "Connection" && want.Get(k) == "" {
			t.Errorf("%s: extra header %s: %q", capture, k, got.header.Get(k))
		}
	}
	if cl := got.header.Get("Content-Length"); cl != strconv.Itoa(len(got.body)) {
		t.Errorf("%s: Content-Length %s for a %d-byte body", capture, cl, len(got.body))
	}
}

// exactCases are requests whose response body must equal the capture byte
// for byte, on the captured library in its captured state.
var exactCases = []struct {
	capture, body         string // capture base name, expected body file
	method, path, reqBody string
	header                []string
}{
	{"caps", "caps.body", "GET", "/caps", "", nil},
	{"systems", "systems.json", "GET", "/systems", "", nil},
	{"systems_nes", "systems_nes.body", "GET", "/systems/nes", "", nil},
	{"systems_nes_localpaths", "systems_nes_localpaths.body", "GET", "/systems/nes?localpaths=true", "", nil},
	{"systems_nes_games", "systems_nes_games.body", "GET", "/systems/nes/games", "", nil},
	{"systems_favorites_games", "systems_favorites_games.body", "GET", "/systems/favorites/games", "", nil},
	{"game_plain", "game_plain.body", "GET", "/systems/nes/games/c4bd586365d2edccc03d52f2441bb64c", "", nil},
	{"game_plain_localpaths", "game_plain_localpaths.body", "GET", "/systems/nes/games/c4bd586365d2edccc03d52f2441bb64c?localpaths=true", "", nil},
	{"game_unknown", "game_unknown.body", "GET", "/systems/nes/games/00000000000000000000000000000000", "", nil},
	{"systems_bogus", "systems_bogus.body", "GET", "/systems/bogus", "", nil},
	{"systems_empty", "systems_empty.body", "GET", "/systems/", "", nil},
	{"logo", "logo.body", "GET", "/systems/nes/logo", "", nil},
	{"media_image", "media_image.body", "GET", "/systems/nes/games/c4bd586365d2edccc03d52f2441bb64c/media/image", "", nil},
	{"media_missing", "media_missing.body", "GET", "/systems/nes/games/c4bd586365d2edccc03d52f2441bb64c/media/video", "", nil},
	{"runningGame_idle", "runningGame_idle.body", "GET", "/runningGame", "", nil},
	{"isIdle", "isIdle.body", "GET", "/isIdle", "", nil},
	{"launch_unknown", "launch_unknown.body", "POST", "/launch", "/userdata/roms/nes/Nope.nes", nil},
	{"emukill", "emukill.body", "GET", "/emukill", "", nil},
	{"notify", "notify.body", "POST", "/notify", "hello", []string{"Content-Type", "text/plain"}},
	{"messagebox", "messagebox.body", "POST", "/messagebox", "hello", nil},
	{"put", "put.body", "PUT", "/systems", "x", nil},
	{"quit", "quit.body", "GET", "/quit", "", nil},
	{"reloadgames", "reloadgames.body", "GET", "/reloadgames", "", nil},
	{"root", "root.body", "GET", "/", "", nil},
	{"meta_nochange", "meta_nochange.body", "POST", "/systems/nes/games/c4bd586365d2edccc03d52f2441bb64c", `{"genre":"Platform","playcount":"3"}`, nil},
}

func capturedEnv(t *testing.T) *env {
	return newEnv(t, Config{Library: library.Captured(""), Collections: []string{"all", "favorites"},
		PlayTime: 12 * time.Second})
}

func TestGoldenCaptures(t *testing.T) {
	e := capturedEnv(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range exactCases {
		t.Run(tc.capture, func(t *testing.T) {
			var got response
			if tc.path == "/" {
				resp, err := noRedirect.Get(e.ln.URL() + "/")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got = response{resp.StatusCode, resp.Header, b}
			} else {
				got = e.do(tc.method, tc.path, tc.reqBody, tc.header...)
			}
			want := readCapture(t, tc.body)
			if !bytes.Equal(got.body, want) {
				t.Errorf("body differs from %s:\n got: %q\nwant: %q", tc.body, got.body, want)
			}
			checkHeaders(t, tc.capture, got)
		})
	}
}

// TestGoldenNotifyEmpty: the capture was a POST without Content-Length,
// which cpp-httplib rejects with an empty 400; with "Content-Length: 0" ES's
// handler answers "400 bad request - body is missing".
func TestGoldenNotifyEmpty(t *testing.T) {
	e := capturedEnv(t)
	got := e.raw("POST /notify HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if want := readCapture(t, "notify_empty.body"); !bytes.Equal(got.body, want) {
		t.Errorf("body %q, want %q", got.body, want)
	}
	checkHeaders(t, "notify_empty", got)

	got = e.do("POST", "/notify", "")
	if got.status != 400 || string(got.body) != "400 bad request - body is missing" || got.header.Get("Content-Type") != "text/html" {
		t.Errorf("Content-Length 0: got %d %q %q, want 400 text/html %q", got.status, got.header.Get("Content-Type"),
			got.body, "400 bad request - body is missing")
	}
}

// TestGoldenSession replays the captured metadata change and plays.
func TestGoldenSession(t *testing.T) {
	e := capturedEnv(t)
	const plain = "/systems/nes/games/c4bd586365d2edccc03d52f2441bb64c"

	got := e.do("POST", plain, `{"favorite":"false","playcount":"7","scraperId":"1234"}`)
	if len(got.body) != 0 {
		t.Errorf("meta change body %q, want empty", got.body)
	}
	checkHeaders(t, "meta_change", got)
	if got := e.get(plain); !bytes.Equal(got.body, readCapture(t, "game_after_meta.json")) {
		t.Errorf("after meta change:\n got: %s\nwant: %s", got.body, readCapture(t, "game_after_meta.json"))
	}

	// Super Mario Bros. played 12 s from 03:06:36 (launch at 03:06:35).
	e.do("POST", "/launch", "/userdata/roms/nes/Super Mario Bros. (World).nes")
	e.clock.Advance(time.Second)
	busy := e.get("/isIdle")
	if want := readCapture(t, "isIdle_busy.body"); !bytes.Equal(busy.body, want) {
		t.Errorf("isIdle while running %q, want %q", busy.body, want)
	}
	checkHeaders(t, "isIdle_busy", busy)
	e.clock.Advance(12 * time.Second)
	smb := e.get("/systems/nes/games/dfc0a340a06b614e45b445627708cb05")
	if want := readCapture(t, "game_after_play.json"); !bytes.Equal(smb.body, want) {
		t.Errorf("after play:\n got: %s\nwant: %s", smb.body, want)
	}

	// The running-game capture was taken on a later play of Plain Game:
	// same keys and types, same identity.
	e.clock.Advance(time.Second)
	e.do("POST", "/launch", "/userdata/roms/nes/Plain.nes")
	e.clock.Advance(time.Second)
	running := e.get("/runningGame")
	want := readCapture(t, "runningGame_running.json")
	if g, w := jsonShape(t, running.body), jsonShape(t, want); g != w {
		t.Errorf("runningGame shape:\n got: %s\nwant: %s", g, w)
	}
	var gotGame, wantGame map[string]string
	json.Unmarshal(running.body, &gotGame)
	json.Unmarshal(want, &wantGame)
	for _, k := range []string{"id", "path", "name", "systemName", "image", "scraperId", "favorite"} {
		if gotGame[k] != wantGame[k] {
			t.Errorf("runningGame %s = %q, want %q", k, gotGame[k], wantGame[k])
		}
	}
	if running.status != 200 || running.header.Get("Content-Type") != "application/json" {
		t.Errorf("runningGame: %d %q, want 200 application/json", running.status, running.header.Get("Content-Type"))
	}
}

// TestFixtureGolden holds the fake's JSON for the whole fixture library to
// files in testdata/golden (go test -update rewrites them), and checks that
// every response has the captured shape rules.
func TestFixtureGolden(t *testing.T) {
	e := newEnv(t, Config{})
	paths := []string{"/systems", "/systems/all/games", "/systems/favorites/games", "/systems/recent/games"}
	for _, s := range e.srv.Library().Systems() {
		paths = append(paths, "/systems/"+s.Name, "/systems/"+s.Name+"/games")
	}
	for _, p := range paths {
		got := e.get(p)
		if got.status != 200 || got.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q", p, got.status, got.header.Get("Content-Type"))
		}
		if !json.Valid(got.body) {
			t.Errorf("%s: invalid JSON", p)
		}
		file := filepath.Join("testdata", "golden", strings.ReplaceAll(strings.TrimPrefix(p, "/"), "/", "_")+".json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, got.body, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got.body, want) {
			t.Errorf("%s differs from %s (go test -update rewrites it after review)", p, file)
		}
	}
}

// TestGameShapeRules checks every fixture game against the captured rules:
// fixed keys first, every value a string, defaults present, metadata in
// MetaDataList order, media as API URLs.
func TestGameShapeRules(t *testing.T) {
	e := newEnv(t, Config{})
	var order []string
	for _, d := range library.MetaDecls() {
		order = append(order, d.Key)
	}
	for _, s := range e.srv.Library().Systems() {
		body := e.get("/systems/" + s.Name + "/games").body
		dec := json.NewDecoder(bytes.NewReader(body))
		var games []orderedObject
		if err := dec.Decode(&games); err != nil {
			t.Fatal(err)
		}
		for _, g := range games {
			keys := g.keys
			if len(keys) < 4 || strings.Join(keys[:4], ",") != "id,path,name,systemName" {
				t.Fatalf("%s: first keys %v", s.Name, keys)
			}
			last := -1
			for _, k := range keys[4:] {
				i := indexOf(order, k)
				if i <= last {
					t.Errorf("%s %s: key %s out of MetaDataList order in %v", s.Name, g.values["path"], k, keys)
				}
				last = i
			}
			for _, k := range []string{"rating", "releasedate", "favorite", "hidden", "kidgame", "playcount", "lastplayed", "gametime"} {
				if g.values[k] == "" {
					t.Errorf("%s: default %s missing", g.values["path"], k)
				}
			}
			if img := g.values["image"]; img != "" && img != fmt.Sprintf("/systems/%s/games/%s/media/image", s.Name, g.values["id"]) {
				t.Errorf("image %q is not an API URL", img)
			}
			if g.values["id"] != library.GameID(g.values["path"]) {
				t.Errorf("id %s is not md5(%q)", g.values["id"], g.values["path"])
			}
		}
	}
}
