package tools

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/es"

	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestGetStatus(t *testing.T) {
	r := newRig(t, rigConfig{})
	var idle statusResult
	r.ok("batocera_get_status", nil, &idle)
	if !idle.ES.Reachable || deref(idle.ES.Version) != "42" || idle.RunningGame != nil || idle.Busy == nil || *idle.Busy ||
		idle.RetroArch.State != "off" || idle.Cabinet != "Game Room" || idle.Mode != (modeState{}) {
		t.Errorf("idle status: got %+v", idle)
	}
	g := r.launch("nes", "The Legend of Zelda")
	var st statusResult
	res := r.ok("batocera_get_status", nil, &st)
	want := runningGame{System: "nes", GameID: g.ID, Name: "The Legend of Zelda", Path: g.Path}
	if st.RunningGame == nil || *st.RunningGame != want || st.Busy == nil || !*st.Busy {
		t.Errorf("running: got %+v, busy %v; want %+v, busy", st.RunningGame, st.Busy, want)
	}
	if st.RetroArch.State != "playing" || deref(st.RetroArch.System) != "nes" ||
		deref(st.RetroArch.Game) != "The Legend of Zelda (USA)" || len(deref(st.RetroArch.CRC32)) != 8 {
		t.Errorf("retroarch: got %+v", st.RetroArch)
	}
	if !strings.Contains(text(res), "running The Legend of Zelda (nes, game_id "+g.ID+")") {
		t.Errorf("text: got %q", text(res))
	}
}

func TestGetStatusExplainsLimitations(t *testing.T) {
	r := newRig(t, rigConfig{opts: Options{DryRun: true}})
	r.launchDirect("gamecube", "Metroid Prime") // a standalone emulator: no RetroArch
	var st statusResult
	r.ok("batocera_get_status", nil, &st)
	if st.RetroArch.State != "off" || !st.Mode.DryRun || len(st.Limitations) != 2 ||
		!strings.Contains(st.Limitations[0], "network_cmd_enable") || !strings.Contains(st.Limitations[1], "Dry run") {
		t.Errorf("got %+v", st)
	}
}

func TestGetStatusWithESDown(t *testing.T) {
	r := newRig(t, rigConfig{})
	r.esDown()
	var st statusResult
	r.ok("batocera_get_status", nil, &st)
	if st.ES.Reachable || st.ES.Version != nil || st.Busy != nil || len(st.Limitations) != 1 ||
		!strings.Contains(st.Limitations[0], "cabinet doctor") {
		t.Errorf("got %+v", st)
	}
}

func TestListSystems(t *testing.T) {
	r := newRig(t, rigConfig{})
	var res systemsResult
	r.ok("batocera_list_systems", nil, &res)
	var names []string
	for _, s := range res.Systems {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "nes,snes,megadrive,mame,gamecube" {
		t.Fatalf("systems: got %v (collections must not be listed)", names)
	}
	snes := res.Systems[1]
	want := systemInfo{Name: "snes", FullName: "Super Nintendo Entertainment System", TotalGames: 7, PlayedGames: 3,
		FavoriteGames: 1, MostPlayed: ptr("Super Mario World")}
	if snes.Name != want.Name || snes.FullName != want.FullName || snes.TotalGames != want.TotalGames ||
		snes.PlayedGames != want.PlayedGames || snes.FavoriteGames != want.FavoriteGames || deref(snes.MostPlayed) != "Super Mario World" {
		t.Errorf("snes: got %+v, want %+v", snes, want)
	}
}

func TestFindGames(t *testing.T) {
	r := newRig(t, rigConfig{})
	find := func(args map[string]any) findResult {
		t.Helper()
		var res findResult
		r.ok("batocera_find_games", args, &res)
		return res
	}
	got := find(map[string]any{"query": "street fighter 2"})
	if got.Total != 2 || len(got.Games) != 2 || got.Games[0].System != "mame" || got.Games[1].System != "snes" ||
		got.NextOffset != nil {
		t.Errorf("street fighter 2: got %+v", got)
	}
	smw := r.game("snes", "Super Mario World")
	got = find(map[string]any{"query": "SUPER-MARIO", "limit": 1})
	want := gameHit{System: "snes", GameID: smw.ID, Name: "Super Mario World", Year: 1990, Genre: "Platform",
		Players: "1-2", Favorite: true, PlayCount: 21, PlayTimeS: 80000, LastPlayed: "2025-04-12T18:30:00Z"}
	if got.Total != 2 || len(got.Games) != 1 || got.Games[0] != want || got.NextOffset == nil || *got.NextOffset != 1 {
		t.Errorf("SUPER-MARIO limit 1: got %+v, want first %+v and next_offset 1", got, want)
	}
	page2 := find(map[string]any{"query": "SUPER-MARIO", "limit": 1, "offset": 1})
	if len(page2.Games) != 1 || page2.Games[0].Name != "Super Mario Bros. (World)" || page2.NextOffset != nil {
		t.Errorf("page 2: got %+v", page2)
	}
	all := find(map[string]any{"limit": 100})
	if all.Total != 35 || len(all.Games) != 35 { // 36 fixture games, Duck Hunt is hidden
		t.Errorf("everything: got total %d, %d games; want 35 (hidden games left out)", all.Total, len(all.Games))
	}
	fav := find(map[string]any{"mode": "most_played", "system": "mame"})
	if len(fav.Games) != 2 || fav.Games[0].Name != "Pac-Man" || fav.Games[1].Name != "Street Fighter II" {
		t.Errorf("most played on mame: got %+v", fav.Games)
	}
	rnd1, rnd2 := find(map[string]any{"mode": "random", "limit": 3}), find(map[string]any{"mode": "random", "limit": 3})
	if len(rnd1.Games) != 3 || rnd1.NextOffset != nil || rnd1.Games[0] != rnd2.Games[0] {
		t.Errorf("random with a fixed seed: got %+v then %+v", rnd1.Games, rnd2.Games)
	}
	if msg := r.refused("batocera_find_games", map[string]any{"system": "favorites"}); !strings.Contains(msg, "mode favorites") ||
		!strings.Contains(msg, "nes, snes, megadrive, mame, gamecube") {
		t.Errorf("collection as system: got %q", msg)
	}
	if msg := r.refused("batocera_find_games", map[string]any{"limit": 101}); !strings.Contains(msg, "limit") {
		t.Errorf("limit 101: got %q", msg)
	}
	if msg := r.refused("batocera_find_games", map[string]any{"mode": "best"}); !strings.Contains(msg, "mode") {
		t.Errorf("bad mode: got %q", msg)
	}
}

func TestFindGamesIndexesOncePerGeneration(t *testing.T) {
	var counted *countingES
	r := newRig(t, rigConfig{deps: func(d *Deps) { counted = &countingES{ES: d.ES}; d.ES = counted }})
	r.ok("batocera_find_games", map[string]any{"query": "zelda"}, nil)
	r.ok("batocera_find_games", map[string]any{"query": "mario"}, nil)
	if n := counted.games.Load(); n != 5 {
		t.Fatalf("two searches fetched %d game lists, want 5 (one per system, once)", n)
	}
	if _, err := r.lib.AddGame("nes", "Kid Icarus (USA).nes", "Kid Icarus", map[string]string{"genre": "Platform"}); err != nil {
		t.Fatal(err)
	}
	var res findResult
	r.ok("batocera_find_games", map[string]any{"query": "icarus"}, &res)
	if res.Total != 0 {
		t.Fatalf("a game added to ES appeared before a reload: the index was not reused (%+v)", res)
	}
	r.action("batocera_reload_games", nil)
	r.ok("batocera_find_games", map[string]any{"query": "icarus"}, &res)
	if res.Total != 1 || res.Games[0].Name != "Kid Icarus" {
		t.Fatalf("after reload: got %+v, want Kid Icarus", res)
	}
	r.ok("batocera_find_games", map[string]any{"query": "icarus"}, &res)
	r.clock.Advance(DefaultIndexMaxAge)
	if _, err := r.lib.AddGame("nes", "Kid Icarus 2.nes", "Kid Icarus 2", nil); err != nil {
		t.Fatal(err)
	}
	r.ok("batocera_find_games", map[string]any{"query": "icarus"}, &res)
	if res.Total != 2 {
		t.Fatalf("an index older than IndexMaxAge was reused: got %+v", res)
	}
}

func TestGetGame(t *testing.T) {
	r := newRig(t, rigConfig{})
	z := r.game("nes", "The Legend of Zelda")
	var res getGameResult
	r.ok("batocera_get_game", map[string]any{"system": "nes", "game_id": z.ID}, &res)
	g := res.Game
	if g.Name != "The Legend of Zelda" || g.Path != z.Path || !strings.HasPrefix(g.Description, "Link sets out") ||
		g.Developer != "Nintendo R&D4" || g.Publisher != "Nintendo" || g.Year == nil || *g.Year != 1986 ||
		g.Genre != "Action-Adventure" || g.Players != "1" || g.Rating == nil || *g.Rating != 0.9 || !g.Favorite ||
		g.PlayCount != 14 || g.PlayTimeS != 52310 || deref(g.LastPlayed) != "2025-03-01T20:15:00Z" || len(res.Truncated) != 0 {
		t.Errorf("zelda: got %+v", res)
	}
	plain := r.game("nes", "Tom's $Game")
	r.ok("batocera_get_game", map[string]any{"system": "nes", "game_id": plain.ID}, &res)
	if res.Game.Year != nil || res.Game.Rating != nil || res.Game.LastPlayed != nil || res.Game.Description != "" {
		t.Errorf("a game without metadata: got %+v", res.Game)
	}
	if msg := r.refused("batocera_get_game", map[string]any{"system": "nes", "game_id": strings.Repeat("0", 32)}); !strings.Contains(msg, "batocera_find_games") {
		t.Errorf("unknown id: got %q", msg)
	}
	if msg := r.refused("batocera_get_game", map[string]any{"system": "nes", "game_id": "../../quit"}); !strings.Contains(msg, "game_id") {
		t.Errorf("bad id: got %q", msg)
	}
}

// launchDirect starts a game as a player at the cabinet would, without the
// tools (and their rate limit).
func (r *rig) launchDirect(system, name string) library.Game {
	r.t.Helper()
	g := r.game(system, name)
	if err := r.es.Launch(system, g.ID); err != nil {
		r.t.Fatal(err)
	}
	cabinettest.Await(r.t, name+" running", nil, func() bool { cur, ok := r.es.Running(); return ok && cur.ID == g.ID })
	return g
}

// countingES counts the game lists fetched.
type countingES struct {
	ES
	games atomic.Int32
}

func (c *countingES) Games(ctx context.Context, system string) ([]es.Game, error) {
	c.games.Add(1)
	return c.ES.Games(ctx, system)
}

func (c *countingES) ListGames(ctx context.Context, system string) ([]es.Game, error) {
	c.games.Add(1)
	return c.ES.ListGames(ctx, system)
}
