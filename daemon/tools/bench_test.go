package tools

import (
	"context"
	"fmt"
	"os"
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
	c, tools := client50k(b)
	ctx := context.Background()
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

// client50k is an in-process MCP client of a server over the fake ES with the simulator's
// 50,000-game library in 60 systems.
func client50k(b *testing.B) (*client.Client, *Server) {
	lib := library.Generate(50000, 60, 1)
	srv := fakees.New(fakees.Config{Library: lib})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
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
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	return c, tools
}

// BenchmarkComplete50k prints completion/complete's latency over the 50,000-game library through
// the whole MCP path (in-process client, JSON): game names for prefixes of one to eight letters,
// on a system or not, the games template's ids, systems; beside each, a batocera_find_games call
// on the same index. Target (printed, not asserted): p95 <= 10 ms.
//
//	go test -run '^$' -bench Complete50k -benchtime 2000x ./daemon/tools/
func BenchmarkComplete50k(b *testing.B) {
	c, _ := client50k(b)
	ctx := context.Background()
	prompt := mcp.PromptReference{Type: "ref/prompt", Name: "find-and-launch"}
	tpl := mcp.ResourceReference{Type: "ref/resource", URI: gamesTemplate}
	reqs := []mcp.CompleteRequest{}
	for _, v := range []string{"s", "su", "sup", "supe", "super", "super d", "dragon q", "crystal"} {
		reqs = append(reqs, completeReq(prompt, "query", v, nil), completeReq(prompt, "query", v, map[string]string{"system": "snes"}))
	}
	reqs = append(reqs, completeReq(prompt, "system", "s", nil), completeReq(tpl, "game_id", "", map[string]string{"system": "nes"}),
		completeReq(tpl, "system", "meg", nil))
	find := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_find_games", Arguments: map[string]any{"query": "super d", "limit": 10}}}
	if _, err := c.Complete(ctx, reqs[0]); err != nil { // the index built
		b.Fatal(err)
	}
	var lat, found []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		_, err := c.Complete(ctx, reqs[i%len(reqs)])
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatalf("%+v: %v", reqs[i%len(reqs)].Params, err)
		}
		t0 = time.Now()
		if res, err := c.CallTool(ctx, find); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		found = append(found, time.Since(t0))
	}
	b.StopTimer()
	if os.Getenv("CABINET_BENCH_DETAIL") != "" {
		for k, r := range reqs {
			var worst time.Duration
			for i := k; i < len(lat); i += len(reqs) {
				worst = max(worst, lat[i])
			}
			fmt.Printf("  %-40v worst %v\n", r.Params.Argument, worst)
		}
	}
	slices.Sort(lat)
	slices.Sort(found)
	p95 := lat[len(lat)*95/100]
	verdict := "met"
	if p95 > 10*time.Millisecond {
		verdict = "MISSED"
	}
	fmt.Printf("\ncompletion/complete over 50,000 games (%d calls): p50 %v  p95 %v  max %v  %s (p95 <= 10ms)\n", len(lat),
		lat[len(lat)/2], p95, lat[len(lat)-1], verdict)
	fmt.Printf("  (beside each, batocera_find_games \"super d\" limit 10 on the same index: p50 %v  p95 %v)\n", found[len(found)/2], found[len(found)*95/100])
	b.ReportMetric(float64(p95.Microseconds()), "p95-µs")
}

func completeReq(ref any, arg, value string, context map[string]string) mcp.CompleteRequest {
	return mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: arg, Value: value},
		Context: mcp.CompleteContext{Arguments: context}}}
}
