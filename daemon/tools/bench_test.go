package tools

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// BenchmarkFindGames50k prints what issue 5 asks for, over the simulator's
// 50,000-game library served by the fake ES on loopback: the first
// batocera_find_games call (fetching 60 game lists and indexing them), the
// heap the index keeps, and warm calls through the whole MCP path
// (in-process client, JSON, schema validation), p50 and p95.
func BenchmarkFindGames50k(b *testing.B) {
	lib := library.Generate(50000, 60, 1)
	srv := fakees.New(fakees.Config{Library: lib})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	esc, err := es.New(es.Config{URL: ln.URL()})
	if err != nil {
		b.Fatal(err)
	}
	tools, err := New(Deps{ES: esc, RetroArch: retroarch.New("127.0.0.1:9"), Seed: func() uint64 { return 1 }}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.NewInProcessClient(tools.MCP())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	find := func(args map[string]any) time.Duration {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "batocera_find_games", args
		t0 := time.Now()
		res, err := c.CallTool(ctx, req)
		d := time.Since(t0)
		if err != nil || res.IsError {
			b.Fatalf("find %v: %v %v", args, err, res)
		}
		return d
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	first := find(map[string]any{"query": "super dragon"})
	runtime.GC()
	runtime.ReadMemStats(&after)

	queries := []map[string]any{{"query": "super dragon"}, {"query": "dragon"}, {"query": "crystal quest 42"},
		{"query": "mega", "limit": 100}, {"query": "shadow", "genre": "rpg", "players": 2}, {"mode": "favorites"},
		{"mode": "most_played"}, {"mode": "recent", "system": "snes"}, {"mode": "random", "limit": 10},
		{"query": "lgend"}, {"query": "st", "offset": 40}, {}}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, find(queries[i%len(queries)]))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(first.Milliseconds()), "first-call-ms")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "index-heap-MiB")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
	runtime.KeepAlive(tools)
}
