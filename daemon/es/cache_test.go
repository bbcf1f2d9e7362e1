package es

import (
	"context"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

func TestGamesCache(t *testing.T) {
	f := newFake(t, nil, Config{})
	c, cx := f.c, ctx(t)
	lib := f.srv.Library()
	playcount := func() int {
		t.Helper()
		games, err := c.Games(cx, "nes")
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range games {
			if g.ID == plainID {
				return g.PlayCount
			}
		}
		t.Fatal("Plain Game missing")
		return 0
	}
	if n := playcount(); n != 3 {
		t.Fatalf("playcount %d, want 3", n)
	}
	lib.RecordPlay("nes", plainID, 0, time.Unix(0, 0), time.Unix(60, 0))
	if n := playcount(); n != 3 {
		t.Errorf("cached playcount %d, want 3 until invalidated", n)
	}
	c.InvalidateSystem("snes")
	if n := playcount(); n != 3 {
		t.Errorf("after invalidating another system: %d, want 3", n)
	}
	c.InvalidateSystem("nes")
	if n := playcount(); n != 4 {
		t.Errorf("after InvalidateSystem: %d, want 4", n)
	}
	lib.RecordPlay("nes", plainID, 0, time.Unix(0, 0), time.Unix(60, 0))
	c.Invalidate()
	if n := playcount(); n != 5 {
		t.Errorf("after Invalidate: %d, want 5", n)
	}
	lib.RecordPlay("nes", plainID, 0, time.Unix(0, 0), time.Unix(60, 0))
	if err := c.ReloadGames(cx); err != nil {
		t.Fatal(err)
	}
	if n := playcount(); n != 6 {
		t.Errorf("after ReloadGames: %d, want 6", n)
	}
	lists := 0
	for _, call := range f.srv.Calls() {
		if call.Route == fakees.RouteReloadGames {
			lists++
		}
	}
	if lists != 1 {
		t.Errorf("%d reloads recorded, want 1", lists)
	}
}

func TestGamesReturnsACopy(t *testing.T) {
	f := newFake(t, nil, Config{})
	cx := ctx(t)
	a, _ := f.c.Games(cx, "nes")
	a[0].Name = "changed"
	b, _ := f.c.Games(cx, "nes")
	if b[0].Name == "changed" {
		t.Error("Games handed out the cached slice")
	}
}

func TestLookupRefetchesOnMiss(t *testing.T) {
	f := newFake(t, nil, Config{})
	cx := ctx(t)
	if _, err := f.c.Games(cx, "nes"); err != nil {
		t.Fatal(err)
	}
	added, err := f.srv.Library().AddGame("nes", "New Game.nes", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.c.LookupGame(cx, "nes", added.ID)
	if err != nil || g.Path != added.Path {
		t.Errorf("LookupGame of a game added after caching: %+v, %v", g, err)
	}
}

func TestStaleFetchNotCached(t *testing.T) {
	var c cache
	l, gen := c.get("nes")
	if l != nil {
		t.Fatal("empty cache returned a list")
	}
	c.invalidate()
	c.put("nes", &gameList{}, gen)
	if l, _ := c.get("nes"); l != nil {
		t.Error("a list fetched before an invalidation was cached")
	}
}

// BenchmarkGames50k fetches and decodes ES's "all" list of 50,000 games.
func BenchmarkGames50k(b *testing.B) {
	srv := fakees.New(fakees.Config{Library: library.Generate(50000, 60, 1), Collections: []string{"all"}})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	c, err := New(Config{URL: ln.URL(), Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	cx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Invalidate()
		start := time.Now()
		games, err := c.Games(cx, "all")
		if err != nil || len(games) != 50000 {
			b.Fatalf("%d games, %v", len(games), err)
		}
		if i == 0 {
			b.Logf("50,000 games fetched and decoded in %v", time.Since(start))
		}
	}
}

// BenchmarkDecodeGames50k decodes a 50,000-game list already in memory.
func BenchmarkDecodeGames50k(b *testing.B) {
	srv := fakees.New(fakees.Config{Library: library.Generate(50000, 60, 1), Collections: []string{"all"}})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	c, err := New(Config{URL: ln.URL(), Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	_, data, err := c.get(context.Background(), "/systems/all/games", DefaultMaxListBytes, 200)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if games, err := decodeGames(data, time.UTC); err != nil || len(games) != 50000 {
			b.Fatalf("%d games, %v", len(games), err)
		}
	}
}
