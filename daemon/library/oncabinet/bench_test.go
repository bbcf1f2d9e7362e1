package oncabinet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"
)

// benchLibrary is 50,000 ES games over 60 systems with synthetic names. Only the games of the
// page's name+size hits exist on disk; every other stat misses, as for a cabinet whose ES lists
// games RomM calls otherwise.
type benchLibrary struct {
	games []Game
	root  string
	page  []Item
}

const (
	benchGames   = 50000
	benchSystems = 60
)

func newBenchLibrary(b *testing.B) *benchLibrary {
	l := &benchLibrary{root: b.TempDir()}
	for i := 0; i < benchGames; i++ {
		sys := fmt.Sprintf("sys%02d", i%benchSystems)
		sub := ""
		if i%7 == 0 {
			sub = "/Hacks"
		}
		l.games = append(l.games, Game{System: sys, ID: fmt.Sprintf("%032x", i),
			Path: fmt.Sprintf("/userdata/roms/%s%s/Game %05d (USA) (Rev %d).bin", sys, sub, i, i%3)})
	}
	// A page as library_search sends it: 8 on the cabinet by name and size, 8 whose names ES does
	// not have, 4 with a name ES has but another size, all with RomM hashes.
	for k := 0; k < 20; k++ {
		g := l.games[k*2477%benchGames]
		name := filepath.Base(g.Path)
		size := int64(1024 + k)
		switch {
		case k < 8:
			p := l.resolve(g.Path)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
				b.Fatal(err)
			}
		case k < 16:
			name = fmt.Sprintf("Not Here %d.bin", k)
		}
		f := CandidateFile{Name: name, SizeBytes: size, CRC: "0badf00d", SHA1: fmt.Sprintf("%040x", k)}
		l.page = append(l.page, Item{ROMID: k, Candidate: Candidate{Folder: g.System, FSName: name, SizeBytes: size, Files: []CandidateFile{f}}})
	}
	return l
}

func (l *benchLibrary) resolve(p string) string { return filepath.Join(l.root, p) }

// BenchmarkIndex prints Build's cost and the index's retained heap, Mark's page latency (p50 and
// p95 over b.N pages), and, in the same run, two baselines for a page: 20 map lookups, and 20 map
// lookups each followed by the os.Stat a name+size match needs at least.
func BenchmarkIndex(b *testing.B) {
	l := newBenchLibrary(b)
	o := Options{Resolve: l.resolve, Hasher: NewHasher(0)}

	b.Run("Build", func(b *testing.B) {
		b.ReportAllocs()
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		ix := Build(l.games, o)
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		runtime.KeepAlive(ix)
		heap := float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc)) / (1 << 20)
		b.ResetTimer() // it drops reported metrics: heap-MB is reported after the loop
		for i := 0; i < b.N; i++ {
			ix = Build(l.games, o)
		}
		runtime.KeepAlive(ix)
		b.ReportMetric(heap, "heap-MB")
	})

	b.Run("MarkPage", func(b *testing.B) {
		ix := Build(l.games, o)
		ctx := context.Background()
		ix.Mark(ctx, l.page) // first page: the lazy per-system stat of the hash step
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			ms := ix.Mark(ctx, l.page)
			lat = append(lat, time.Since(t0))
			if ms[0] == nil || ms[8] != nil {
				b.Fatalf("page marked wrong: %+v %+v", ms[0], ms[8])
			}
		}
		reportPercentiles(b, lat)
	})

	b.Run("BaselineMapPage", func(b *testing.B) {
		m := make(map[string]string, len(l.games))
		for _, g := range l.games {
			m[filepath.Base(g.Path)] = g.Path
		}
		lat := make([]time.Duration, 0, b.N)
		hits := 0
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			for _, it := range l.page {
				if _, ok := m[it.FSName]; ok {
					hits++
				}
			}
			lat = append(lat, time.Since(t0))
		}
		reportPercentiles(b, lat)
		if hits == 0 {
			b.Fatal("no hits")
		}
	})

	b.Run("BaselineMapStatPage", func(b *testing.B) {
		m := make(map[string]string, len(l.games))
		for _, g := range l.games {
			m[filepath.Base(g.Path)] = g.Path
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			for _, it := range l.page {
				if p, ok := m[it.FSName]; ok {
					os.Stat(l.resolve(p))
				}
			}
			lat = append(lat, time.Since(t0))
		}
		reportPercentiles(b, lat)
	})
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
}
