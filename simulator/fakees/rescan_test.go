package fakees

import (
	"encoding/json"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// memDisk is the cabinet's disk in memory: file paths relative to the
// ROMs root ("nes/Plain.nes"); a key ending in "/" is an empty folder.
type memDisk struct {
	mu    sync.Mutex
	files fstest.MapFS
}

func newMemDisk(paths ...string) *memDisk {
	d := &memDisk{files: fstest.MapFS{}}
	d.add(paths...)
	return d
}

func (d *memDisk) add(paths ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			d.files[strings.TrimSuffix(p, "/")] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
			continue
		}
		d.files[p] = &fstest.MapFile{Data: []byte("ROM")}
	}
}

func (d *memDisk) remove(p string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.files, p)
}

// roms is Config.ROMs: a copy of the system's folder, so that a test may
// change the disk while the UI thread reads it.
func (d *memDisk) roms(system string) fs.FS {
	d.mu.Lock()
	defer d.mu.Unlock()
	snap := fstest.MapFS{}
	for k, v := range d.files {
		snap[k] = v
	}
	sub, err := fs.Sub(snap, system)
	if err != nil {
		panic(err)
	}
	return sub
}

var capturedFiles = []string{"nes/Mario_(USA).nes", "nes/Plain.nes", "nes/Tom's $Game.nes", "nes/Super Mario Bros. (World).nes"}

func diskEnv(t *testing.T, disk *memDisk) *env {
	return newEnv(t, Config{Library: library.Captured(""), Collections: []string{"all", "favorites"}, ROMs: disk.roms})
}

type apiGame struct {
	ID, Path, Name, Image, Playcount string
}

func (e *env) games(system string) []apiGame {
	e.t.Helper()
	got := e.get("/systems/" + system + "/games")
	var out []apiGame
	if got.status != 200 || json.Unmarshal(got.body, &out) != nil {
		e.t.Fatalf("GET /systems/%s/games: %d %s", system, got.status, got.body)
	}
	return out
}

func paths(games []apiGame) string {
	var out []string
	for _, g := range games {
		out = append(out, strings.TrimPrefix(g.Path, "/userdata/roms/nes/"))
	}
	return strings.Join(out, "|")
}

func TestReloadUntouchedDisk(t *testing.T) {
	e := diskEnv(t, newMemDisk(capturedFiles...))
	before := e.get("/systems/nes/games").body
	if got := e.get("/reloadgames"); got.status != 200 || len(got.body) != 0 {
		t.Fatalf("reloadgames: %d %q", got.status, got.body)
	}
	if after := e.get("/systems/nes/games").body; string(after) != string(before) {
		t.Errorf("a reload over the library's own files changed the list:\n%s\nwant\n%s", after, before)
	}
	if got := e.events.Take(); !equalStrings(got, []string{"system-selected|nes", "system-selected|nes"}) {
		t.Errorf("events %q, want system-selected twice", got)
	}
}

func TestReloadFindsNewFiles(t *testing.T) {
	disk := newMemDisk(capturedFiles...)
	e := diskEnv(t, disk)
	disk.add(
		"nes/New Game (USA).nes",
		"nes/sub/Deep (Europe).NES",     // subfolder, extension in capitals
		"nes/sub/deeper/Deepest.zip",    // two levels down
		"nes/Folder Game.zip/track.bin", // a folder with a system extension is a game
		"nes/.cabinet-install/Hidden.nes",
		"nes/.Dot.nes",
		"nes/Partial.nes.cabinet-part",
		"nes/readme.txt",
		"nes/images/Cover.nes", // media folders are never looked into
		"nes/downloaded_images/x.nes",
		"nes/empty/",
		"snes/Not NES.nes", // no snes system in this library
	)
	if got := paths(e.games("nes")); strings.Contains(got, "New Game") {
		t.Fatalf("new file listed before any reload: %s", got)
	}
	e.get("/reloadgames")
	want := "Mario_(USA).nes|Plain.nes|Tom's $Game.nes|Super Mario Bros. (World).nes|" +
		"Folder Game.zip|New Game (USA).nes|sub/Deep (Europe).NES|sub/deeper/Deepest.zip"
	games := e.games("nes")
	if got := paths(games); got != want {
		t.Errorf("after the reload:\n got %s\nwant %s", got, want)
	}
	for _, g := range games {
		if g.ID != library.GameID(g.Path) {
			t.Errorf("%s: id %s, want md5 of the path %s", g.Path, g.ID, library.GameID(g.Path))
		}
		if g.Path == "/userdata/roms/nes/sub/Deep (Europe).NES" && g.Name != "Deep (Europe)" {
			t.Errorf("new game name %q, want the file stem", g.Name)
		}
		if g.Path == plainPath && (g.Name != "Plain Game" || g.Playcount != "3") {
			t.Errorf("Plain.nes lost its gamelist data: %+v", g)
		}
	}
	deep := library.GameID("/userdata/roms/nes/sub/Deep (Europe).NES")
	if got := e.get("/systems/nes/games/" + deep); got.status != 200 {
		t.Errorf("GET of the new game by id: %d", got.status)
	}
	if got := e.get("/systems/all/games"); !strings.Contains(string(got.body), "Deepest.zip") {
		t.Error("the all collection lacks the new game")
	}
}

func TestReloadDropsRemovedFiles(t *testing.T) {
	disk := newMemDisk(capturedFiles...)
	e := diskEnv(t, disk)
	disk.remove("nes/Plain.nes")
	e.get("/reloadgames")
	if got, want := paths(e.games("nes")), "Mario_(USA).nes|Tom's $Game.nes|Super Mario Bros. (World).nes"; got != want {
		t.Errorf("after the reload: %s, want %s", got, want)
	}
	if got := e.get("/systems/nes/games/" + plainID); got.status != 404 {
		t.Errorf("GET of the removed game: %d, want 404", got.status)
	}
	if got := e.get("/systems/favorites/games"); strings.Contains(string(got.body), "Plain") {
		t.Error("the removed game is still a favorite")
	}
	// The file back: a new game, without the gamelist data it had.
	disk.add("nes/Plain.nes")
	e.get("/reloadgames")
	g, ok := e.srv.Library().Game("nes", plainID)
	if !ok || g.Name != "Plain" || g.PlayCount() != 0 {
		t.Errorf("Plain.nes back: %+v, %v; want a fresh game named after its stem", g, ok)
	}
}

func TestReloadWhilePlayingWaitsForTheGame(t *testing.T) {
	disk := newMemDisk(capturedFiles...)
	e := diskEnv(t, disk)
	e.do("POST", "/launch", smbPath)
	e.clock.Advance(time.Second)
	if g, ok := e.srv.Running(); !ok || g.ID != smbID {
		t.Fatal("Super Mario Bros. is not running")
	}
	disk.add("nes/Installed.nes")
	disk.remove("nes/Tom's $Game.nes")
	if got := e.get("/reloadgames"); got.status != 200 {
		t.Fatalf("reloadgames: %d", got.status)
	}
	if q := e.srv.Queued(); q != 1 {
		t.Errorf("queued %d, want the reload", q)
	}
	if got := paths(e.games("nes")); strings.Contains(got, "Installed") || !strings.Contains(got, "Tom's") {
		t.Errorf("the reload ran during the game: %s", got)
	}
	e.events.Take()
	if !e.srv.EndGame(0) {
		t.Fatal("EndGame: nothing running")
	}
	if got := paths(e.games("nes")); strings.Contains(got, "Installed") {
		t.Errorf("the reload ran before the UI came back: %s", got)
	}
	e.clock.Advance(DefaultReturnDelay)
	if got, want := paths(e.games("nes")), "Mario_(USA).nes|Plain.nes|Super Mario Bros. (World).nes|Installed.nes"; got != want {
		t.Errorf("after the game: %s, want %s", got, want)
	}
	if got := e.events.Take(); !equalStrings(got, []string{"game-end", "system-selected|nes", "system-selected|nes"}) {
		t.Errorf("events %q", got)
	}
	// The finished game's statistics survive the reload.
	if g, _ := e.srv.Library().Game("nes", smbID); g.PlayCount() != 1 {
		t.Errorf("playcount %d after the game and the reload, want 1", g.PlayCount())
	}
}

func TestReloadWithoutDiskKeepsLibrary(t *testing.T) {
	e := newEnv(t, Config{Library: library.Captured(""), ROMs: func(string) fs.FS { return nil }})
	e.get("/reloadgames")
	if n := e.srv.Library().Len(); n != 4 {
		t.Errorf("%d games after a reload with no folder for nes, want the 4 kept", n)
	}
}

func TestPopulateFolderDepthBound(t *testing.T) {
	// Folders nested deeper than any ROM set, as a symlink loop looks: the
	// walk stops.
	loop := fstest.MapFS{}
	p := "a"
	for i := 0; i < 3*maxFolderDepth; i++ {
		loop[p+"/g.nes"] = &fstest.MapFile{}
		p += "/a"
	}
	nes, _ := library.Captured("").System("nes")
	if got := len(populateFolder(loop, nes, ".", 0)); got != maxFolderDepth {
		t.Errorf("%d games found, want %d (one per folder down to the depth bound)", got, maxFolderDepth)
	}
}

// writes is a Config.WriteFile that keeps what the fake writes.
type writes struct {
	mu    sync.Mutex
	files map[string]string
}

func (w *writes) write(path string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[path] = string(data)
	return nil
}

func (w *writes) read(path string) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, ok := w.files[path]
	return []byte(data), ok
}

func TestMediaUploadSaveAsPaths(t *testing.T) {
	w := &writes{files: map[string]string{}}
	e := newEnv(t, Config{Library: library.Captured(""), Collections: []string{"all", "favorites"},
		WriteFile: w.write, Media: w.read})
	plain := "/systems/nes/games/" + plainID
	for _, tc := range []struct{ kind, ctype, want string }{
		{"image", "image/png", "/userdata/roms/nes/images/Plain-image.png"},
		{"thumbnail", "image/jpeg", "/userdata/roms/nes/images/Plain-thumb.jpg"},
		{"marquee", "image/gif", "/userdata/roms/nes/images/Plain-marquee.gif"},
		{"boxart", "image/png", "/userdata/roms/nes/images/Plain-box.png"},
		{"wheel", "image/png", "/userdata/roms/nes/images/Plain-wheel.png"},
		{"mix", "image/png", "/userdata/roms/nes/images/Plain-image.png"}, // no case in getSaveAsPath
		{"video", "video/mp4", "/userdata/roms/nes/videos/Plain-video.mp4"},
		{"manual", "application/pdf", "/userdata/roms/nes/manuals/Plain-manual.pdf"},
		{"magazine", "application/cbz", "/userdata/roms/nes/magazines/Plain-magazine.cbz"},
		{"map", "application/pdf", "/userdata/roms/nes/images/Plain-map.pdf"},
	} {
		body := "bytes of " + tc.kind
		if got := e.do("POST", plain+"/media/"+tc.kind, body, "Content-Type", tc.ctype); got.status != 200 || len(got.body) != 0 {
			t.Errorf("upload %s: %d %q, want 200 and no body", tc.kind, got.status, got.body)
			continue
		}
		if got := w.files[tc.want]; got != body {
			t.Errorf("upload %s: %q written at %s, want %q (files %q)", tc.kind, got, tc.want, body, w.files)
		}
		var local map[string]string
		json.Unmarshal(e.get(plain+"?localpaths=true").body, &local)
		if local[tc.kind] != tc.want {
			t.Errorf("upload %s: localpaths %s = %q, want %q", tc.kind, tc.kind, local[tc.kind], tc.want)
		}
		var api map[string]string
		json.Unmarshal(e.get(plain).body, &api)
		if want := plain + "/media/" + tc.kind; api[tc.kind] != want {
			t.Errorf("upload %s: %s = %q, want %q", tc.kind, tc.kind, api[tc.kind], want)
		}
		got := e.get(plain + "/media/" + tc.kind)
		if got.status != 200 || string(got.body) != body || got.header.Get("Content-Type") != mimeType(tc.want) {
			t.Errorf("GET %s: %d %q %q, want 200 %q %s", tc.kind, got.status, got.header.Get("Content-Type"), got.body, body, mimeType(tc.want))
		}
	}
	// Through a collection: still the source system's folder.
	smb := "/systems/favorites/games/" + plainID
	if got := e.do("POST", smb+"/media/fanart", "fan", "Content-Type", "image/png"); got.status != 200 ||
		w.files["/userdata/roms/nes/images/Plain-fanart.png"] != "fan" {
		t.Errorf("upload through favorites: %d, files %q", got.status, w.files)
	}
}

func TestMediaUploadRejected(t *testing.T) {
	w := &writes{files: map[string]string{}}
	e := newEnv(t, Config{Library: library.Captured(""), WriteFile: w.write, Media: w.read})
	plain := "/systems/nes/games/" + plainID
	for _, tc := range []struct{ path, ctype string }{
		{plain + "/media/image", "text/plain"},
		{plain + "/media/image", "image/png; charset=binary"},
		{plain + "/media/image", "video/mp4"},
		{plain + "/media/video", "image/png"},
		{plain + "/media/desc", "image/png"},
		{"/systems/nes/games/nope/media/image", "image/png"},
	} {
		got := e.do("POST", tc.path, "x", "Content-Type", tc.ctype)
		if got.status != 404 || string(got.body) != "404 media not found" {
			t.Errorf("POST %s %s: %d %q, want 404 media not found", tc.path, tc.ctype, got.status, got.body)
		}
	}
	if len(w.files) != 0 {
		t.Errorf("rejected uploads wrote %q", w.files)
	}
	if g, _ := e.srv.Library().Game("nes", plainID); g.Meta("image") != "/userdata/roms/nes/images/plain.png" {
		t.Errorf("image = %q after rejected uploads, want the gamelist's", g.Meta("image"))
	}
}

func TestMediaUploadInMemoryByDefault(t *testing.T) {
	e := capturedEnv(t)
	plain := "/systems/nes/games/" + plainID
	if got := e.get(plain + "/media/image"); string(got.body) != tinyPNG {
		t.Fatalf("before the upload: %q, want the built-in PNG", got.body)
	}
	e.do("POST", plain+"/media/image", "new cover", "Content-Type", "image/jpeg")
	got := e.get(plain + "/media/image")
	if got.status != 200 || string(got.body) != "new cover" || got.header.Get("Content-Type") != "image/jpg" {
		t.Errorf("after the upload: %d %q %q, want the uploaded bytes as image/jpg", got.status, got.header.Get("Content-Type"), got.body)
	}
	// A game in a subfolder keeps its media in the system folder's images/.
	lib := e.srv.Library()
	if _, _, err := lib.Sync("nes", []string{"Plain.nes", "sub/Deep.nes"}); err != nil {
		t.Fatal(err)
	}
	deep := library.GameID("/userdata/roms/nes/sub/Deep.nes")
	e.do("POST", "/systems/nes/games/"+deep+"/media/image", "deep", "Content-Type", "image/png")
	if g, _ := lib.Game("nes", deep); g.Meta("image") != "/userdata/roms/nes/images/Deep-image.png" {
		t.Errorf("subfolder game image at %q, want /userdata/roms/nes/images/Deep-image.png", g.Meta("image"))
	}
}
