package es

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeCapturedSystems(t *testing.T) {
	systems, err := decodeSystems(readTestdata(t, "systems.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(systems) != 3 {
		t.Fatalf("%d systems, want 3", len(systems))
	}
	nes := systems[0]
	want := System{Name: "nes", FullName: "Nintendo Entertainment System", Theme: "nes",
		Extensions: []string{".nes", ".zip"}, Visible: true, GameSystem: true, TotalGames: 4, VisibleGames: 4,
		FavoriteGames: 1, PlayedGames: 1, MostPlayed: "Plain Game"}
	if got := nes; got.Name != want.Name || got.FullName != want.FullName || got.Theme != want.Theme ||
		strings.Join(got.Extensions, ",") != ".nes,.zip" || !got.Visible || got.Collection || !got.GameSystem ||
		got.TotalGames != 4 || got.VisibleGames != 4 || got.FavoriteGames != 1 || got.PlayedGames != 1 ||
		got.MostPlayed != "Plain Game" {
		t.Errorf("nes = %+v\nwant %+v", got, want)
	}
	if !systems[1].Collection || systems[1].Name != "all" || systems[1].HardwareType != "auto collection" {
		t.Errorf("all = %+v", systems[1])
	}
	if got := GameSystems(systems); len(got) != 1 || got[0].Name != "nes" {
		t.Errorf("GameSystems = %+v, want only nes", got)
	}
}

func TestDuplicateThemeKeyLastWins(t *testing.T) {
	s, err := decodeSystem([]byte(`{"name":"x","theme":"first","theme":"second","releaseYear":1985}`))
	if err != nil || s.Theme != "second" || s.ReleaseYear != 1985 {
		t.Errorf("got %+v, %v; want theme second, releaseYear 1985", s, err)
	}
}

func TestDecodeCapturedGames(t *testing.T) {
	games, err := decodeGames(readTestdata(t, "systems_nes_games.json"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(games) != 4 {
		t.Fatalf("%d games, want 4", len(games))
	}
	mario := games[0]
	if mario.ID != "0c598aff052e6240ed442843b7d22ba9" || mario.Name != "Mario_(USA)" || mario.Rating != 0 ||
		!mario.ReleaseDate.IsZero() || !mario.LastPlayed.IsZero() || mario.PlayCount != 0 || mario.Favorite {
		t.Errorf("defaults decoded as %+v", mario)
	}
	plain := games[1]
	want := Game{ID: "c4bd586365d2edccc03d52f2441bb64c", Path: "/userdata/roms/nes/Plain.nes", Name: "Plain Game",
		System: "nes", Desc: "A test entry.", Genre: "Platform", Genres: "7", Players: "1-2", Rating: 0.8,
		ReleaseDate: time.Date(1985, 9, 13, 0, 0, 0, 0, time.UTC), Favorite: true, PlayCount: 3, GameTime: 125,
		LastPlayed: time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC),
		Image:      "/systems/nes/games/c4bd586365d2edccc03d52f2441bb64c/media/image"}
	if plain != want {
		t.Errorf("Plain.nes\n got %+v\nwant %+v", plain, want)
	}
}

// TestDecodeGameMedia: every media key ES emits (MetaData.cpp's MD_PATH keys) is decoded, as
// game-selected's marquee page and image.batocera_selected_marquee read them with localpaths.
func TestDecodeGameMedia(t *testing.T) {
	g, err := decodeGame([]byte(`{"id":"a","image":"/i.png","video":"/v.mp4","marquee":"/m.png","thumbnail":"/t.png",
		"fanart":"/f.png","titleshot":"/ts.png","manual":"/man.pdf","magazine":"/mag.cbz","map":"/map.png","bezel":"/b.png",
		"cartridge":"/c.png","boxart":"/ba.png","boxback":"/bb.png","wheel":"/w.png","mix":"/mix.png"}`), time.UTC)
	want := Game{ID: "a", Image: "/i.png", Video: "/v.mp4", Marquee: "/m.png", Thumbnail: "/t.png", FanArt: "/f.png",
		Manual: "/man.pdf", TitleShot: "/ts.png", Magazine: "/mag.cbz", Map: "/map.png", Bezel: "/b.png", Cartridge: "/c.png",
		BoxArt: "/ba.png", BoxBack: "/bb.png", Wheel: "/w.png", Mix: "/mix.png"}
	if err != nil || g != want {
		t.Errorf("decoded\n %+v, %v\nwant\n %+v", g, err, want)
	}
}

func TestDecodeGameTolerance(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		check      func(Game) bool
	}{
		{"playcount abc", `{"id":"a","playcount":"abc","gametime":"-5","rating":"NaN"}`,
			func(g Game) bool { return g.PlayCount == 0 && g.GameTime == 0 && g.Rating == 0 }},
		{"numbers instead of strings", `{"id":"a","playcount":7,"gametime":12,"favorite":true,"rating":0.5}`,
			func(g Game) bool { return g.PlayCount == 7 && g.GameTime == 12 && g.Favorite && g.Rating == 0.5 }},
		{"objects and arrays where strings belong", `{"id":"a","name":{"x":1},"desc":[1,2],"playcount":null}`,
			func(g Game) bool { return g.ID == "a" && g.Name == "" && g.Desc == "" && g.PlayCount == 0 }},
		{"rating above 1", `{"rating":"7"}`, func(g Game) bool { return g.Rating == 1 }},
		{"bad dates", `{"releasedate":"19851313T000000","lastplayed":"yesterday"}`,
			func(g Game) bool { return g.ReleaseDate.IsZero() && g.LastPlayed.IsZero() }},
		{"date only", `{"releasedate":"19850913"}`,
			func(g Game) bool { return g.ReleaseDate.Equal(time.Date(1985, 9, 13, 0, 0, 0, 0, time.UTC)) }},
		{"unknown keys", `{"id":"a","future":"x","scraperId":"1234"}`, func(g Game) bool { return g.ScraperID == "1234" }},
		{"escapes", `{"name":"Contra\u001B[31m \"Q\" \\ x"}`, func(g Game) bool { return g.Name == "Contra\x1b[31m \"Q\" \\ x" }},
	} {
		g, err := decodeGame([]byte(tc.json), time.UTC)
		if err != nil || !tc.check(g) {
			t.Errorf("%s: got %+v, %v", tc.name, g, err)
		}
	}
}

func TestDecodeListSkipsOddElements(t *testing.T) {
	games, err := decodeGames([]byte(`[1, "x", null, {"id":"a"}, [], {"id":"b","playcount":"abc"}]`), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(games) != 2 || games[0].ID != "a" || games[1].ID != "b" {
		t.Errorf("got %+v, want games a and b", games)
	}
	systems, err := decodeSystems([]byte(`[true, {"name":"nes","totalGames":"12"}]`))
	if err != nil || len(systems) != 1 || systems[0].TotalGames != 12 {
		t.Errorf("systems %+v, %v", systems, err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func([]byte) error
		in   string
	}{
		{"games syntax", func(b []byte) error { _, err := decodeGames(b, time.UTC); return err }, `[{"id":"a"`},
		{"games object", func(b []byte) error { _, err := decodeGames(b, time.UTC); return err }, `{"id":"a"}`},
		{"games null", func(b []byte) error { _, err := decodeGames(b, time.UTC); return err }, `null`},
		{"games empty", func(b []byte) error { _, err := decodeGames(b, time.UTC); return err }, ``},
		{"systems html", func(b []byte) error { _, err := decodeSystems(b); return err }, `<html>`},
		{"game array", func(b []byte) error { _, err := decodeGame(b, time.UTC); return err }, `[]`},
		{"game truncated", func(b []byte) error { _, err := decodeGame(b, time.UTC); return err }, `{"id": "c4bd`},
		{"caps string", func(b []byte) error { _, err := decodeCaps(b); return err }, `"42"`},
		{"running 200 without id", func(b []byte) error { _, err := decodeRunningGame(200, b, time.UTC); return err }, `{"msg":"NO GAME RUNNING"}`},
	} {
		if err := tc.fn([]byte(tc.in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", tc.name, err)
		}
	}
}

func TestDecodeRunningGame(t *testing.T) {
	g, err := decodeRunningGame(201, readTestdata(t, "runningGame_idle.json"), time.UTC)
	if g != nil || err != nil {
		t.Errorf("201: %+v, %v; want nil, nil", g, err)
	}
	g, err = decodeRunningGame(200, readTestdata(t, "runningGame_running.json"), time.UTC)
	if err != nil || g == nil || g.Name != "Plain Game" || g.PlayCount != 8 || g.ScraperID != "1234" {
		t.Errorf("200: %+v, %v", g, err)
	}
}

func TestDecodeCaps(t *testing.T) {
	c, err := decodeCaps(readTestdata(t, "caps.json"))
	if err != nil || c.Version != "42" || c.SortName {
		t.Errorf("caps %+v, %v", c, err)
	}
}

func TestLocalTime(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	g, _ := decodeGame([]byte(`{"lastplayed":"20240101T120000"}`), paris)
	if want := time.Date(2024, 1, 1, 11, 0, 0, 0, time.UTC); !g.LastPlayed.Equal(want) {
		t.Errorf("lastplayed %v, want %v (ES writes local time)", g.LastPlayed, want)
	}
}
