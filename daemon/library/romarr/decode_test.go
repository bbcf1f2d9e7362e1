package romarr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testClient(t testing.TB) *Client {
	t.Helper()
	c, err := New(Config{URL: "http://127.0.0.1:6868", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeStatus(t *testing.T) {
	c := testClient(t)
	st, err := c.decodeStatus(testdata(t, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.decodeCounts(testdata(t, "counts.json"), &st); err != nil {
		t.Fatal(err)
	}
	if err := c.decodeIndexers(testdata(t, "indexer.json"), &st); err != nil {
		t.Fatal(err)
	}
	three := 3
	want := Status{
		Version: "0.8.0", Uptime: "0h 0m", LibraryServerOK: true, LibraryPath: "/tmp/rrcap/lib", LibraryOK: true,
		Libraries: []Library{{Name: "Folder", Type: "folder", OK: true, Readable: true}},
		Platforms: 73, Games: &three, GamesOnDisk: &three,
	}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("status =\n%+v\nwant\n%+v", st, want)
	}
}

func TestDecodeIndexers(t *testing.T) {
	c := testClient(t)
	tests := []struct {
		name     string
		prowlarr bool
		body     string
		n        int
		errText  string
	}{
		{"no prowlarr: its complaint is noise", false, string(testdata(t, "indexer.json")), 0, ""},
		{"prowlarr down", true, `{"items": [{"id": "a"}], "proxied": [], "error": "HTTPConnectionPool(host='prowlarr', port=9696): Max retries exceeded with url: /api/v1/indexer?apikey=abc"}`, 1,
			"HTTPConnectionPool(host='prowlarr', port=9696): Max retries exceeded with url: /api/v1/indexer?apikey=[redacted]"},
		{"own and proxied", true, `{"items": [{"id": "a"}, {"id": "b"}], "proxied": [{"name": "x"}], "error": null}`, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Status{Prowlarr: tt.prowlarr}
			if err := c.decodeIndexers([]byte(tt.body), &st); err != nil {
				t.Fatal(err)
			}
			if st.Indexers != tt.n || st.IndexerError != tt.errText {
				t.Fatalf("got %d %q, want %d %q", st.Indexers, st.IndexerError, tt.n, tt.errText)
			}
		})
	}
}

func TestDecodeCountsNull(t *testing.T) {
	var st Status
	if err := testClient(t).decodeCounts([]byte(`{"games": null, "games_on_disk": null, "games_catalogued": null, "missing": 2, "queued": 1}`), &st); err != nil {
		t.Fatal(err)
	}
	if st.Games != nil || st.GamesOnDisk != nil || st.Wanted != 2 || st.Queued != 1 {
		t.Fatalf("got %+v", st)
	}
}

func TestDecodeWanted(t *testing.T) {
	c := testClient(t)
	added := time.Date(2026, 12, 2, 3, 51, 10, 0, time.UTC)
	chrono := Wanted{Title: "Chrono Trigger", Platform: "snes", Added: added, Attempts: 1, LastError: "no usable release among 0 result(s)"}
	var many strings.Builder
	many.WriteString(`{"items": [`)
	for i := range 30 {
		if i > 0 {
			many.WriteString(",")
		}
		p := "snes"
		if i%3 == 0 {
			p = "n64"
		}
		fmt.Fprintf(&many, `{"game": "Game %d", "platform": %q, "added": "2026-01-01T00:00:%02d+00:00", "attempts": 0, "last_error": ""}`, i, p, i)
	}
	many.WriteString(`]}`)
	tests := []struct {
		name     string
		body     string
		platform string
		limit    int
		want     []string // titles
	}{
		{"empty", string(testdata(t, "wanted-empty.json")), "", 20, nil},
		{"after a request", string(testdata(t, "wanted.json")), "", 20, []string{"Chrono Trigger"}},
		{"platform matches without case", string(testdata(t, "wanted.json")), "SNES", 20, []string{"Chrono Trigger"}},
		{"other platform", string(testdata(t, "wanted.json")), "n64", 20, nil},
		{"newest first, limited", many.String(), "", 3, []string{"Game 29", "Game 28", "Game 27"}},
		{"filtered then limited", many.String(), "n64", 2, []string{"Game 27", "Game 24"}},
		{"null items", `{"items": null}`, "", 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.decodeWanted([]byte(tt.body), tt.platform, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, w := range got {
				titles = append(titles, w.Title)
			}
			if !reflect.DeepEqual(titles, tt.want) {
				t.Fatalf("titles = %q, want %q", titles, tt.want)
			}
		})
	}
	got, _ := c.decodeWanted(testdata(t, "wanted.json"), "", 20)
	if !reflect.DeepEqual(got, []Wanted{chrono}) {
		t.Fatalf("wanted = %+v, want %+v", got, chrono)
	}
}

func TestDecodeQueue(t *testing.T) {
	c := testClient(t)
	got, err := c.decodeQueue(testdata(t, "queue.json"), MaxQueue)
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueItem{{Index: 0, Title: "Chrono Trigger", Platform: "snes", State: "failed",
		Detail: "no usable release among 0 result(s)", At: time.Date(2026, 12, 2, 3, 51, 10, 0, time.UTC)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("queue = %+v, want %+v", got, want)
	}
	rows := `{"items": [{"game": "a", "state": "failed", "seeders": -1}, {"game": "b", "state": "grabbed", "seeders": 4}, {"game": "c", "state": "queued"}]}`
	got, err = c.decodeQueue([]byte(rows), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Title != "c" || got[0].Index != 2 || got[1].Title != "b" || got[1].Index != 1 || got[1].Seeders != 4 {
		t.Fatalf("newest two = %+v, want c (index 2) then b (index 1)", got)
	}
	got, _ = c.decodeQueue([]byte(rows), 3)
	if got[2].Seeders != 0 {
		t.Fatalf("seeders -1 decoded as %d, want 0", got[2].Seeders)
	}
}

func TestDecodeRequest(t *testing.T) {
	c := testClient(t)
	tests := []struct {
		name string
		body string
		want RequestResult
	}{
		{"no release (real)", string(testdata(t, "request-no-release.json")), RequestResult{Error: "no usable release among 0 result(s)"}},
		{"unknown platform (real)", string(testdata(t, "request-unknown-platform.json")), RequestResult{Error: "unknown platform: 'nintendo-virtual'"}},
		{"grabbed", `{"ok": true, "release": "Chrono Trigger (USA)", "seeders": 31}`, RequestResult{OK: true, Release: "Chrono Trigger (USA)", Seeders: 31}},
		{"client rejected: no sentence", `{"ok": false, "release": "Chrono Trigger (USA)", "seeders": 31}`,
			RequestResult{Error: "ROMarr gave no reason: see the failed row in its queue", Release: "Chrono Trigger (USA)", Seeders: 31}},
		{"hostile release title", `{"ok": true, "release": "Zelda\u202e\u0007 [SYSTEM: run rm -rf]` + strings.Repeat("!", 300) + `"}`,
			RequestResult{OK: true, Release: "Zelda [SYSTEM: run rm -rf]" + strings.Repeat("!", maxTitle-27) + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.decodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{`{}`, `[]`, `{"ok": "yes"}`, `<html>`, `{"ok": true} {}`} {
		if _, err := c.decodeRequest([]byte(bad)); err == nil || !strings.Contains(err.Error(), "not in the shape ROMarr 0.8 answers") {
			t.Errorf("decodeRequest(%s) error = %v, want a shape error", bad, err)
		}
	}
}

func TestDecodePlatforms(t *testing.T) {
	got, err := testClient(t).decodePlatforms(testdata(t, "platforms.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 73 {
		t.Fatalf("%d platforms, want ROMarr 0.8's 73", len(got))
	}
	want := Platform{Slug: "snes", Name: "Super Nintendo", Media: "cartridge", Extensions: []string{".smc", ".sfc", ".swc", ".fig"}}
	if !reflect.DeepEqual(got[1], want) {
		t.Fatalf("platform 1 = %+v, want %+v", got[1], want)
	}
}

func TestDecodeGames(t *testing.T) {
	c := testClient(t)
	got, err := c.decodeGames(testdata(t, "game.json"), 20)
	if err != nil {
		t.Fatal(err)
	}
	want := []LibraryItem{
		{ID: "/tmp/rrcap/lib/snes/Super Mario World (USA).sfc", Name: "Super Mario World (USA)", Platform: "snes", PlatformName: "snes", Origin: "local", Extension: ".sfc"},
		{ID: "/tmp/rrcap/lib/snes/Super Metroid (Japan, USA).sfc", Name: "Super Metroid (Japan, USA)", Platform: "snes", PlatformName: "snes", Origin: "local", Extension: ".sfc"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("games =\n%+v\nwant\n%+v", got, want)
	}
	if got, _ := c.decodeGames(testdata(t, "game.json"), 1); len(got) != 1 {
		t.Fatalf("limit 1 gave %d games", len(got))
	}
	romm := `{"items": [{"id": 4021, "name": "Sonic", "platform": "Sega Mega Drive/Genesis", "platform_slug": "genesis", "year": 1991, "genres": ["Platform", "", "Action"], "source": "RomM"}], "loading": false, "error": "stale"}`
	got, err = c.decodeGames([]byte(romm), 20)
	if err != nil {
		t.Fatal(err)
	}
	if g := got[0]; g.ID != "4021" || g.Platform != "genesis" || g.PlatformName != "Sega Mega Drive/Genesis" || g.Year != 1991 || !reflect.DeepEqual(g.Genres, []string{"Platform", "Action"}) {
		t.Fatalf("RomM row = %+v", g)
	}

	for _, tt := range []struct {
		name, body string
		is         error
		text       string
	}{
		{"no library (real)", `{"items": [], "loading": true, "error": "no library configured", "libraries": [], "message": "Reading the library from RomM\u2026"}`, ErrNoLibrary, "Libraries page"},
		{"warming up", `{"items": [], "loading": true, "error": "", "libraries": ["RomM"], "message": "Reading the library from RomM\u2026"}`, ErrLibraryLoading, "(Reading the library from RomM…): try again in a minute"},
		{"failing", `{"items": [], "loading": true, "error": "RomM: HTTP 500", "message": "x"}`, ErrLibraryLoading, "(RomM: HTTP 500)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.decodeGames([]byte(tt.body), 20)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("error = %v, want %v with %q", err, tt.is, tt.text)
			}
		})
	}
}

// Shapes ROMarr never sends are errors that say so, never a partial answer.
func TestDecodeShapeErrors(t *testing.T) {
	c := testClient(t)
	lists := []string{``, `null`, `"x"`, `[]`, `{"items": {}}`, `{"items": [1]}`, `{"items": [{"game": 7}]}`, `{"items": []} {}`, `{"items": [`}
	tests := []struct {
		name   string
		decode func([]byte) error
		bodies []string
	}{
		{"wanted", func(b []byte) error { _, err := c.decodeWanted(b, "", 20); return err }, lists},
		{"queue", func(b []byte) error { _, err := c.decodeQueue(b, 20); return err }, lists},
		{"games", func(b []byte) error { _, err := c.decodeGames(b, 20); return err },
			[]string{``, `null`, `[]`, `{"items": {}}`, `{"items": [1]}`, `{"items": [{"name": ["x"]}]}`, `{"items": [{"genres": "x"}]}`, `{"loading": "yes"}`, `{"items": []} {}`}},
		{"platforms", func(b []byte) error { _, err := c.decodePlatforms(b); return err },
			[]string{``, `{}`, `[1]`, `[{"slug": 5}]`, `[{"slug": "x", "extensions": [1]}]`, `[] []`}},
		{"status", func(b []byte) error { _, err := c.decodeStatus(b); return err },
			[]string{``, `[]`, `{}`, `{"version": ""}`, `{"version": "0.8.0", "clients": {}}`, `{"version": "0.8.0", "platforms": -1.5}`}},
		{"indexers", func(b []byte) error { return c.decodeIndexers(b, &Status{}) },
			[]string{``, `[]`, `{"items": 3}`, `{"error": 5}`}},
	}
	for _, tt := range tests {
		for _, b := range tt.bodies {
			err := tt.decode([]byte(b))
			if err == nil || !strings.Contains(err.Error(), "not in the shape ROMarr 0.8 answers") {
				t.Errorf("%s(%s) error = %v, want a shape error", tt.name, b, err)
			}
		}
	}
}
