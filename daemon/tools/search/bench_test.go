package search

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// benchQueries is a mix of what a model asks: broad and narrow words, a
// numeral, filters, every mode, a typo and a miss (both of which run the
// slower typo pass over every game).
func benchQueries() []Query {
	return []Query{
		{Text: "super dragon"}, {Text: "dragon"}, {Text: "crystal quest 42"}, {Text: "mega"},
		{Text: "kingdom hunter", System: "snes"}, {Text: "shadow", Genre: "rpg", Players: 2},
		{Mode: ModeFavorites}, {Mode: ModeMostPlayed}, {Mode: ModeMostTime}, {Mode: ModeRecent},
		{Mode: ModeRandom, Rand: rand.New(rand.NewPCG(1, 1))}, {Text: "lgend"}, {Text: "zzzzzz"},
		{Text: "st"}, {}, {Text: "golden odyssey 7", Offset: 20},
	}
}

// BenchmarkFind50k prints the per-query latency over 50,000 games.
func BenchmarkFind50k(b *testing.B) {
	ix := indexOf(library.Generate(50000, 60, 1))
	qs := benchQueries()
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := qs[i%len(qs)]
		t0 := time.Now()
		ix.Find(q)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	p50, p95, worst := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p95.Microseconds()), "p95-µs")
	b.ReportMetric(float64(worst.Microseconds()), "max-µs")
}

// BenchmarkBuild50k prints the time and heap of indexing 50,000 games.
func BenchmarkBuild50k(b *testing.B) {
	lib := library.Generate(50000, 60, 1)
	var docs []Doc
	for _, g := range lib.AllGames() {
		docs = append(docs, docOf(g))
	}
	lib = nil
	b.ResetTimer()
	var ix *Index
	for i := 0; i < b.N; i++ {
		bl := NewBuilder(len(docs))
		for _, d := range docs {
			bl.Add(d)
		}
		ix = bl.Index()
	}
	b.StopTimer()
	docs = nil
	runtime.GC()
	var with, without runtime.MemStats
	runtime.ReadMemStats(&with)
	runtime.KeepAlive(ix)
	ix = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	b.ReportMetric(float64(with.HeapAlloc-without.HeapAlloc)/(1<<20), "index-MiB")
}

func percentiles(d []time.Duration) (p50, p95, worst time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*95/100], d[len(d)-1]
}
