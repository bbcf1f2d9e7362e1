package library

import (
	"testing"
	"time"
)

func TestGenerate(t *testing.T) {
	a := Generate(50000, 60, 7)
	if got := a.Len(); got != 50000 {
		t.Fatalf("Len = %d, want 50000", got)
	}
	if got := len(a.Systems()); got != 60 {
		t.Fatalf("%d systems, want 60", got)
	}
	if got := len(a.Games("nes")); got != 834 {
		t.Errorf("nes has %d games, want 834 (even spread)", got)
	}
	for _, g := range a.AllGames()[:100] {
		if got, ok := a.Game(g.System, g.ID); !ok || got.Path != g.Path {
			t.Fatalf("lookup of %s by id failed", g.Path)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a, b := Generate(5000, 60, 7), Generate(5000, 60, 7)
	ga, gb := a.AllGames(), b.AllGames()
	for i := range ga {
		if ga[i].Path != gb[i].Path || ga[i].Value("playcount") != gb[i].Value("playcount") {
			t.Fatalf("game %d differs between two runs with the same seed: %+v vs %+v", i, ga[i], gb[i])
		}
	}
	c := Generate(5000, 60, 8)
	same := 0
	for i, g := range c.AllGames() {
		if g.Path == ga[i].Path && g.Value("playcount") == ga[i].Value("playcount") && g.Value("rating") == ga[i].Value("rating") {
			same++
		}
	}
	if same == len(ga) {
		t.Error("a different seed produced the same library")
	}
}

func BenchmarkGenerate50k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		start := time.Now()
		Generate(50000, 60, int64(i))
		if i == 0 {
			b.Logf("50,000 games over 60 systems in %v", time.Since(start))
		}
	}
}
