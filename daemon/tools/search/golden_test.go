package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestGolden is the search quality contract over library.Fixture: queries
// with the typos people make (punctuation, case, accents, word order,
// partial words, numerals, a misspelling) and the results they must get,
// best first. want lists the first results as "name/system"; total, when
// not -1, is the number of matches.
func TestGolden(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		q     Query
		want  []string
		total int
	}{
		// exact name, punctuation of the file name ignored
		{Query{Text: "super mario bros world"}, []string{"Super Mario Bros. (World)/nes"}, 1},
		{Query{Text: "Super Mario Bros."}, []string{"Super Mario Bros. (World)/nes"}, 1},
		// case and punctuation; the shorter name first
		{Query{Text: "SUPER-MARIO"}, []string{"Super Mario World/snes", "Super Mario Bros. (World)/nes"}, 2},
		// a name that starts with the query before names containing it
		{Query{Text: "mario"}, []string{"Mario_(USA)/nes", "Mario Kart: Double Dash!!/gamecube",
			"Super Mario World/snes", "Super Mario Bros. (World)/nes"}, 4},
		// accents folded both ways
		{Query{Text: "pokemon"}, []string{"Pokémon Colosseum/gamecube"}, 1},
		{Query{Text: "POKÉMON colosseum"}, []string{"Pokémon Colosseum/gamecube"}, 1},
		{Query{Text: "shogi no hoshi"}, []string{"Shōgi no Hoshi/megadrive"}, 1},
		{Query{Text: "asterix"}, []string{"Astérix/snes"}, 1},
		{Query{Text: "Astérix"}, []string{"Astérix/snes"}, 1},
		// numerals: 2 finds II (and the same title on two systems, by system)
		{Query{Text: "street fighter 2"}, []string{"Street Fighter II/mame", "Street Fighter II/snes"}, 2},
		{Query{Text: "street fighter ii"}, []string{"Street Fighter II/mame", "Street Fighter II/snes"}, 2},
		{Query{Text: "sonic 2"}, []string{"Sonic The Hedgehog 2/megadrive"}, 1},
		// word order and missing words
		{Query{Text: "zelda legend"}, []string{"The Legend of Zelda/nes", "The Legend of Zelda: The Wind Waker/gamecube"}, 2},
		{Query{Text: "wind waker zelda"}, []string{"The Legend of Zelda: The Wind Waker/gamecube"}, 1},
		{Query{Text: "legend of zelda"}, []string{"The Legend of Zelda/nes"}, 2},
		{Query{Text: "hedgehog sonic"}, []string{"Sonic The Hedgehog/megadrive", "Sonic The Hedgehog 2/megadrive"}, 2},
		// partial words
		{Query{Text: "chro trig"}, []string{"Chrono Trigger/snes"}, 1},
		{Query{Text: "smash"}, []string{"Super Smash Bros. Melee/gamecube"}, 1},
		{Query{Text: "don"}, []string{"Donkey Kong/mame", "Donkey Kong Country/snes"}, 2},
		// spaces and hyphens inside names
		{Query{Text: "pacman"}, []string{"Pac-Man/mame", `Pac-Man Plus "Special" \ Edition/mame`}, 2},
		{Query{Text: "pac man"}, []string{"Pac-Man/mame", `Pac-Man Plus "Special" \ Edition/mame`}, 2},
		{Query{Text: "fzero"}, []string{"F-Zero GX/gamecube"}, 1},
		{Query{Text: "f zero gx"}, []string{"F-Zero GX/gamecube"}, 1},
		// apostrophes and ampersands
		{Query{Text: "kirbys dream course"}, []string{"Kirby's Dream Course 🌟/snes"}, 1},
		{Query{Text: "kirby dream"}, []string{"Kirby's Dream Course 🌟/snes"}, 1},
		{Query{Text: "toejam and earl"}, []string{"ToeJam & Earl/megadrive"}, 1},
		{Query{Text: "toejam & earl"}, []string{"ToeJam & Earl/megadrive"}, 1},
		{Query{Text: "tom's $game"}, []string{"Tom's $Game/nes"}, 1},
		// hostile names are found by their visible words
		{Query{Text: "balloon fight"}, []string{"Balloon Fight exe.gnp iso/nes"}, 1},
		{Query{Text: "contra"}, []string{"Contra[31m RED Tab/nes"}, 1},
		// one typo in a longer word, only when nothing matches exactly
		{Query{Text: "mraio kart"}, []string{"Mario Kart: Double Dash!!/gamecube"}, 1},
		{Query{Text: "strets of rage"}, []string{"Streets of Rage 2/megadrive"}, 1},
		// nothing
		{Query{Text: "zzzz qqqq"}, nil, 0},
		{Query{Text: "mario", System: "gamecube"}, []string{"Mario Kart: Double Dash!!/gamecube"}, 1},
		{Query{Text: "mario", System: "psx"}, nil, 0},
		// filters without a query: by name
		{Query{Genre: "shoot"}, []string{"1942/mame", "Contra[31m RED Tab/nes", "Galaga/mame", "Gunstar Heroes/megadrive"}, 4},
		{Query{Genre: "fighting", Players: 4}, []string{"Super Smash Bros. Melee/gamecube"}, 1},
		{Query{System: "megadrive", Players: 1, Genre: "platform"}, []string{"Sonic The Hedgehog/megadrive", "Sonic The Hedgehog 2/megadrive"}, 2},
		// modes
		{Query{Mode: ModeFavorites}, []string{"Pac-Man/mame", "Plain Game/nes", "Sonic The Hedgehog/megadrive",
			"Super Mario World/snes", "Super Smash Bros. Melee/gamecube", "The Legend of Zelda/nes"}, 6},
		{Query{Mode: ModeFavorites, Text: "super"}, []string{"Super Mario World/snes", "Super Smash Bros. Melee/gamecube"}, 2},
		{Query{Mode: ModeMostPlayed, Limit: 3}, []string{"Pac-Man/mame", "Super Mario World/snes", "The Legend of Zelda/nes"}, 12},
		{Query{Mode: ModeMostTime, Limit: 3}, []string{"Super Mario World/snes", "The Legend of Zelda/nes", "Super Smash Bros. Melee/gamecube"}, 12},
		{Query{Mode: ModeRecent, Limit: 2}, []string{"Pac-Man/mame", "Super Smash Bros. Melee/gamecube"}, 12},
		{Query{Mode: ModeRecent, System: "snes"}, []string{"Super Mario World/snes", "Street Fighter II/snes", "Chrono Trigger/snes"}, 3},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%+v", tt.q)
		t.Run(name, func(t *testing.T) {
			res := ix.Find(tt.q)
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Name+"/"+h.System)
			}
			if len(got) < len(tt.want) || strings.Join(got[:len(tt.want)], "|") != strings.Join(tt.want, "|") {
				t.Errorf("top results:\n got  %q\n want %q", got, tt.want)
			}
			if tt.total >= 0 && res.Total != tt.total {
				t.Errorf("total: got %d, want %d (%q)", res.Total, tt.total, got)
			}
		})
	}
}

func TestPaging(t *testing.T) {
	ix := fixtureIndex(t)
	all := ix.Find(Query{Limit: 100})
	if all.Total != ix.Len() || len(all.Hits) != ix.Len() || all.NextOffset != -1 {
		t.Fatalf("all: got total %d, %d hits, next %d; want %d, %d, -1", all.Total, len(all.Hits), all.NextOffset, ix.Len(), ix.Len())
	}
	var got []Hit
	off, pages := 0, 0
	for off >= 0 {
		p := ix.Find(Query{Offset: off, Limit: 7})
		if p.Total != all.Total {
			t.Fatalf("page at %d: total %d, want %d", off, p.Total, all.Total)
		}
		got = append(got, p.Hits...)
		off = p.NextOffset
		pages++
	}
	if len(got) != len(all.Hits) || pages != (ix.Len()+6)/7 {
		t.Fatalf("paged: got %d hits in %d pages, want %d hits in %d", len(got), pages, len(all.Hits), (ix.Len()+6)/7)
	}
	for i := range got {
		if got[i] != all.Hits[i] {
			t.Fatalf("hit %d: got %+v, want %+v", i, got[i], all.Hits[i])
		}
	}
	if past := ix.Find(Query{Offset: 1000}); len(past.Hits) != 0 || past.NextOffset != -1 || past.Total != ix.Len() {
		t.Errorf("past the end: got %+v", past)
	}
}

func TestRandomIsSeededAndDistinct(t *testing.T) {
	ix := fixtureIndex(t)
	draw := func(seed uint64) []string {
		r := ix.Find(Query{Mode: ModeRandom, Limit: 5, Rand: rand.New(rand.NewPCG(seed, seed))})
		if r.NextOffset != -1 || r.Total != ix.Len() || len(r.Hits) != 5 {
			t.Fatalf("random: got next %d, total %d, %d hits", r.NextOffset, r.Total, len(r.Hits))
		}
		var ids []string
		seen := map[string]bool{}
		for _, h := range r.Hits {
			if seen[h.ID] {
				t.Fatalf("random drew %s twice", h.ID)
			}
			seen[h.ID] = true
			ids = append(ids, h.ID)
		}
		return ids
	}
	a, b, c := draw(1), draw(1), draw(2)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("same seed, different draws: %v vs %v", a, b)
	}
	if strings.Join(a, ",") == strings.Join(c, ",") {
		t.Errorf("different seeds, same draw: %v", a)
	}
	few := ix.Find(Query{Mode: ModeRandom, System: "megadrive", Genre: "puzzle", Limit: 5, Rand: rand.New(rand.NewPCG(3, 3))})
	if len(few.Hits) != 1 || few.Hits[0].Name != "Tetris" {
		t.Errorf("random with one candidate: got %+v", few.Hits)
	}
}

func TestHitFields(t *testing.T) {
	ix := fixtureIndex(t)
	r := ix.Find(Query{Text: "the legend of zelda", System: "nes"})
	if len(r.Hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(r.Hits))
	}
	h := r.Hits[0]
	want := Hit{System: "nes", ID: h.ID, Name: "The Legend of Zelda", Genre: "Action-Adventure", Players: "1",
		Year: 1986, Favorite: true, PlayCount: 14, PlayTime: 52310, LastPlayed: h.LastPlayed}
	if h != want || len(h.ID) != 32 || h.LastPlayed.UTC().Format("20060102T150405") != "20250301T201500" {
		t.Errorf("got %+v, want %+v with last played 20250301T201500", h, want)
	}
}
