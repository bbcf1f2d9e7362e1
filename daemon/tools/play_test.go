package tools

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestPlayByName resolves requests as people say or type them against the fixture's library
// (ES's JSON over a real socket): case, accents, word order, a typo, numerals, systems by folder,
// full name or alias, "on <system>" or a trailing system; a tie launches nothing and lists the
// games; nothing matching says so.
func TestPlayByName(t *testing.T) {
	tests := []struct {
		request, outcome, game, system string
		candidates                     []string // "Game|System", in order
	}{
		{request: "the legend of zelda on nes", outcome: haentities.PlayLaunched, game: "The Legend of Zelda", system: "nes"},
		{request: "ZELDA legend nintendo", outcome: haentities.PlayLaunched, game: "The Legend of Zelda", system: "nes"},
		{request: "sonic 2 on megadrive", outcome: haentities.PlayLaunched, game: "Sonic The Hedgehog 2", system: "megadrive"},
		{request: "sonic the hedgehog", outcome: haentities.PlayLaunched, game: "Sonic The Hedgehog", system: "megadrive"},
		{request: "Street Fighter 2 super nintendo", outcome: haentities.PlayLaunched, game: "Street Fighter II", system: "snes"},
		{request: "street fighter ii on arcade", outcome: haentities.PlayLaunched, game: "Street Fighter II", system: "mame"},
		{request: "tetris genesis", outcome: haentities.PlayLaunched, game: "Tetris", system: "megadrive"},
		{request: "play tetris on Nintendo Entertainment System", outcome: haentities.PlayLaunched, game: "Tetris", system: "nes"},
		{request: "asterix", outcome: haentities.PlayLaunched, game: "Astérix", system: "snes"},
		{request: "chrono trigher", outcome: haentities.PlayLaunched, game: "Chrono Trigger", system: "snes"},
		{request: "tetris", outcome: haentities.PlayAmbiguous, candidates: []string{"Tetris|nes", "Tetris|megadrive"}},
		{request: "street fighter", outcome: haentities.PlayAmbiguous, candidates: []string{"Street Fighter II|snes", "Street Fighter II|mame"}},
		{request: "zzyzx quux", outcome: haentities.PlayNotFound},
		{request: "tetris on dreamcast", outcome: haentities.PlayNotFound},
		{request: "   ", outcome: haentities.PlayNotFound},
		// JSON is words like any other ("game" is in two names): no launch, no controls echoed.
		{request: `{"game":"` + strings.Repeat("\u202e\x1b", 20) + `"}`, outcome: haentities.PlayAmbiguous,
			candidates: []string{"Plain Game|nes", "Tom's $Game|nes"}},
		{request: strings.Repeat("a", 1<<20), outcome: haentities.PlayRefused},
	}
	r := newRig(t, rigConfig{opts: Options{Limits: Limits{LaunchQuit: Bucket{Burst: 100, Every: time.Second}}}})
	full := func(system string) string {
		systems, _ := r.esc.Systems(cabinettest.Context(t))
		return fullNames(systems)(system)
	}
	for _, tt := range tests {
		name := tt.request
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			res := r.srv.Play(cabinettest.Context(t), tt.request, ViaHA)
			if res.Outcome != tt.outcome {
				t.Fatalf("%q: %+v, want %s", tt.request, res, tt.outcome)
			}
			switch tt.outcome {
			case haentities.PlayLaunched:
				running, ok := r.es.Running()
				if !ok || running.Name != tt.game || running.System != tt.system || res.Game != tt.game || res.System != full(tt.system) {
					t.Errorf("%q: %+v; ES runs %+v, want %s on %s", tt.request, res, running, tt.game, tt.system)
				}
				if _, err := r.srv.QuitForRules(cabinettest.Context(t)); err != nil {
					t.Fatal(err)
				}
			case haentities.PlayAmbiguous:
				var got []string
				for _, c := range res.Candidates {
					got = append(got, c.Game+"|"+c.System)
				}
				var want []string
				for _, c := range tt.candidates {
					g, s, _ := strings.Cut(c, "|")
					want = append(want, g+"|"+full(s))
				}
				slices.Sort(got) // within a tier, by name then system: either order is right
				slices.Sort(want)
				if strings.Join(got, ",") != strings.Join(want, ",") || res.Reason == "" || strings.ContainsAny(res.Reason, "\x1b\u202e") {
					t.Errorf("%q: candidates %q (%s), want %q", tt.request, got, res.Reason, want)
				}
			default:
				if res.Reason == "" || strings.ContainsAny(res.Reason, "\x1b\u202e") {
					t.Errorf("%q: reason %q", tt.request, res.Reason)
				}
			}
			if tt.outcome != haentities.PlayLaunched {
				if _, ok := r.es.Running(); ok {
					t.Errorf("%q launched a game", tt.request)
				}
			}
		})
	}
}

// TestPlaySwitch: a request while a game runs is refused and names the running game; "switch
// to" quits it first; the same game asked again is already running. The tracker is told of each
// launch by who asked, the moment ES confirms it.
func TestPlaySwitch(t *testing.T) {
	var mu sync.Mutex
	var told []string
	r := newRig(t, rigConfig{opts: Options{Limits: Limits{LaunchQuit: Bucket{Burst: 100, Every: time.Second}}},
		deps: func(d *Deps) {
			d.Launched = func(via string, g es.Game) {
				mu.Lock()
				told = append(told, via+" "+g.Name+" "+g.System)
				mu.Unlock()
			}
		}})
	ctx := cabinettest.Context(t)
	r.launch("nes", "Tetris")
	res := r.srv.Play(ctx, "sonic 2", ViaHA)
	if res.Outcome != haentities.PlayRefused || !strings.Contains(res.Reason, "Tetris is running") || res.Game != "Sonic The Hedgehog 2" {
		t.Fatalf("while Tetris runs: %+v", res)
	}
	res = r.srv.Play(ctx, "Switch to sonic 2", ViaHA)
	if res.Outcome != haentities.PlayLaunched {
		t.Fatalf("switch to: %+v", res)
	}
	if g, ok := r.es.Running(); !ok || g.Name != "Sonic The Hedgehog 2" {
		t.Fatalf("ES runs %+v after the switch", g)
	}
	if res := r.srv.Play(ctx, "sonic 2", ViaHA); res.Outcome != haentities.PlayLaunched || !strings.Contains(res.Reason, "already running") {
		t.Errorf("the running game asked again: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(told, ",") != "mcp Tetris nes,ha Sonic The Hedgehog 2 megadrive" {
		t.Errorf("the tracker was told %q", told)
	}
}

// TestFavorites: the select's options are ES's favourites by name with their systems' full
// names, and each launches its game.
func TestFavorites(t *testing.T) {
	r := newRig(t, rigConfig{})
	ctx := cabinettest.Context(t)
	favs, err := r.srv.Favorites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var opts []string
	for _, f := range favs {
		opts = append(opts, f.Option)
	}
	if len(favs) == 0 || !strings.Contains(strings.Join(opts, "|"), "Super Mario World (") {
		t.Fatalf("favourites %q, want the fixture's (Super Mario World among them)", opts)
	}
	for _, f := range favs {
		if f.Option == "" || strings.HasPrefix(f.Option, haentities.FavoriteNone) {
			t.Errorf("option %q", f.Option)
		}
	}
	res := r.srv.PlayFavorite(ctx, favs[0], ViaHA)
	if g, ok := r.es.Running(); res.Outcome != haentities.PlayLaunched || !ok || g.ID != favs[0].ID {
		t.Errorf("favourite %q: %+v, ES runs %+v", favs[0].Option, res, g)
	}
}

// FuzzSplitSystem: any request splits into a query that is part of it and systems that are
// indexed, without panicking, and a request naming no system keeps its words.
func FuzzSplitSystem(f *testing.F) {
	systems := []es.System{{Name: "nes", FullName: "Nintendo Entertainment System"}, {Name: "snes", FullName: "Super Nintendo"},
		{Name: "megadrive", FullName: "Mega Drive"}, {Name: "mame", FullName: "MAME"}}
	indexed := []string{"nes", "snes", "megadrive", "mame"}
	for _, s := range []string{"sonic 2 on genesis", "mario kart snes", "on on on", " on ", "tetris game boy",
		"street fighter on arcade", "\u202e on nes", "x on ", "on", "é on Mega-Drive!!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q, only := splitSystem(text, systems, indexed)
		if !strings.Contains(text, q) && !strings.Contains(strings.Join(strings.Fields(text), " "), q) {
			t.Errorf("%q: query %q is not part of it", text, q)
		}
		for _, s := range only {
			if !slices.Contains(indexed, s) {
				t.Errorf("%q: system %q is not indexed", text, s)
			}
		}
		if len(only) == 0 && q != text {
			t.Errorf("%q: no system, yet the query is %q", text, q)
		}
	})
}

// TestPlayRefusedByTheRules: a request the household's rules would end at once is refused with
// their reason, and nothing reaches ES.
func TestPlayRefusedByTheRules(t *testing.T) {
	f := newFakeHousehold(onAt60())
	f.used = 60
	r := householdRig(t, oneLaunch, f)
	res := r.srv.Play(cabinettest.Context(t), "tetris on nes", ViaHA)
	if res.Outcome != haentities.PlayRefused || res.Game != "Tetris" || !strings.Contains(res.Reason, "Time is up for today.") {
		t.Errorf("with no time left: %+v", res)
	}
	if _, ok := r.es.Running(); ok {
		t.Error("a game runs")
	}
}
