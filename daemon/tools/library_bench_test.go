package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// Shape of the library benchmark: the 50,000 ROMs over 60
// platforms, the same games in ES, one in onDiskEvery with its bytes on
// the cabinet's disk (the rest are ES entries without a file, so their
// marking goes all the way to the hash step).
const (
	benchLibROMs      = 50000
	benchLibPlatforms = 60
	onDiskEvery       = 10
	benchLibRounds    = 200 // interleaved rounds (CABINET_LIBRARY_BENCH_ROUNDS); every row runs once a round
)

// libraryBench is the cabinet of BenchmarkLibrarySearch50k.
type libraryBench struct {
	romm   *romm.Client
	tools  *Server
	client *client.Client
	root   string
	lib    *library.Library
	onDisk int
	// RomM's and ES's answers, replayed once switched on.
	rommReplay, esReplay *replay
}

// replay puts a memory of answers in front of a fake: while on, a GET it
// has answered before is answered again from memory, and the answer of
// any other GET is kept; while off, every request reaches the fake. At
// 50,000 games both fakes cost far more than the servers they stand for:
// the fake ES sorts its "all" collection (strings.ToLower in the
// comparison) on every GET /systems, about half a second here, and the
// fake RomM builds every row's name with fmt.Sprintf on every search.
// Replayed, the warm rounds time the cabinet's path — MCP, the clients
// over loopback HTTP, decoding, the marking — and not the fakes; the
// first calls, live, are printed too.
type replay struct {
	h    http.Handler
	on   atomic.Bool
	mu   sync.Mutex
	seen map[string]*httptest.ResponseRecorder
	miss int // GETs that reached the fake while on
}

func newReplay(h http.Handler) *replay {
	return &replay{h: h, seen: map[string]*httptest.ResponseRecorder{}}
}

func (rp *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("Authorization")
	on := rp.on.Load()
	rp.mu.Lock()
	rec, ok := rp.seen[key]
	if on && !ok {
		rp.miss++
	}
	rp.mu.Unlock()
	if !on || !ok {
		rec = httptest.NewRecorder()
		rp.h.ServeHTTP(rec, r)
		if on && r.Method == http.MethodGet {
			rp.mu.Lock()
			rp.seen[key] = rec
			rp.mu.Unlock()
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func (rp *replay) misses() int {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.miss
}

// replaying switches both replays on or off.
func (lb *libraryBench) replaying(on bool) {
	lb.rommReplay.on.Store(on)
	lb.esReplay.on.Store(on)
}

func newLibraryBench(b *testing.B) *libraryBench {
	b.Helper()
	fr, err := fakeromm.New(fakeromm.Options{Generate: fakeromm.Scale{ROMs: benchLibROMs, Platforms: benchLibPlatforms}})
	if err != nil {
		b.Fatal(err)
	}
	lb := &libraryBench{root: b.TempDir(), lib: library.New(""), rommReplay: newReplay(fr)}
	hs := httptest.NewServer(lb.rommReplay)
	b.Cleanup(hs.Close)

	// ES lists one system per synthetic platform (its fs_slug is a
	// Batocera folder) and one game per synthetic ROM, under RomM's file
	// name; every onDiskEvery-th has RomM's bytes on the disk.
	folder := map[int]string{}
	for _, p := range fr.Platforms() {
		if p.ID <= fakeromm.PlatformIOS {
			continue // the fixture's platforms: not part of the 50,000
		}
		folder[p.ID] = p.FSSlug
		if err := lb.lib.AddSystem(library.System{Name: p.FSSlug, FullName: p.Name, HardwareType: "console"}); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(lb.root, library.DefaultRomsRoot, p.FSSlug), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if len(folder) != benchLibPlatforms {
		b.Fatalf("%d synthetic platforms, want %d", len(folder), benchLibPlatforms)
	}
	for id := fakeromm.ROMAncientZeta + 1; id <= fr.ROMCount(); id++ {
		rom, _ := fr.ROM(id)
		g, err := lb.lib.AddGame(folder[rom.PlatformID], rom.FSName, rom.Name, nil)
		if err != nil {
			continue // the same name twice on one platform: ES lists the file once
		}
		if id%onDiskEvery == 0 {
			if err := os.WriteFile(filepath.Join(lb.root, g.Path), rom.Files[0].Bytes, 0o644); err != nil {
				b.Fatal(err)
			}
			lb.onDisk++
		}
	}
	lb.esReplay = newReplay(fakees.New(fakees.Config{Library: lb.lib}))
	esLn, err := fakees.Serve("", lb.esReplay)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { esLn.Close() })
	esc, err := es.New(es.Config{URL: esLn.URL()})
	if err != nil {
		b.Fatal(err)
	}
	if lb.romm, err = romm.New(romm.Config{URL: hs.URL, Token: fakeromm.DefaultToken}); err != nil {
		b.Fatal(err)
	}
	lb.tools, err = New(Deps{ES: esc, RetroArch: retroarch.New("127.0.0.1:9"), Seed: func() uint64 { return 1 },
		Library:     Library{RomM: lb.romm, Platforms: platforms.Default()},
		ResolvePath: func(p string) string { return filepath.Join(lb.root, p) }}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if lb.client, err = client.NewInProcessClient(lb.tools.MCP()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lb.client.Close() })
	ctx := context.Background()
	if err := lb.client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := lb.client.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	return lb
}

func (lb *libraryBench) call(b *testing.B, name string, args map[string]any) (time.Duration, *mcp.CallToolResult) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	t0 := time.Now()
	res, err := lb.client.CallTool(context.Background(), req)
	d := time.Since(t0)
	if err != nil || res.IsError {
		b.Fatalf("%s %v: %v %v", name, args, err, res)
	}
	return d, res
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC() // the second one sweeps what the first found
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func mib(from, to uint64) float64 { return float64(int64(to)-int64(from)) / (1 << 20) }

// catalogShares builds the catalog once and measures what it keeps, by
// dropping its parts one at a time: the on-cabinet index, then the search
// index. It leaves the catalog empty.
func (lb *libraryBench) catalogShares(b *testing.B) (build time.Duration, total, cab, search float64) {
	cat := lb.tools.catalog
	cat.invalidate()
	h0 := heapInUse()
	t0 := time.Now()
	if _, err := cat.onCabinet(context.Background()); err != nil {
		b.Fatal(err)
	}
	build = time.Since(t0)
	h1 := heapInUse()
	cat.mu.Lock()
	cat.cab = nil
	cat.mu.Unlock()
	h2 := heapInUse()
	cat.invalidate() // drops the search index too
	h3 := heapInUse()
	return build, mib(h0, h1), mib(h2, h1), mib(h3, h2)
}

// dropOnCabinet measures the on-cabinet index as it is now (with what
// the searches made it stat, hash and fold), and leaves the catalog empty.
func (lb *libraryBench) dropOnCabinet() float64 {
	cat := lb.tools.catalog
	h1 := heapInUse()
	cat.mu.Lock()
	cat.cab = nil
	cat.mu.Unlock()
	h2 := heapInUse()
	cat.invalidate()
	return mib(h2, h1)
}

// benchRow is one measured thing of an interleaved run.
type benchRow struct {
	name string
	run  func() time.Duration
	lat  []time.Duration
}

func percentile(lat []time.Duration, p int) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[len(s)*p/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// BenchmarkLibrarySearch50k prints the library issue's figures, over the
// fake RomM with 50,000 synthetic ROMs on 60 platforms and a fake ES with
// the same 50,000 games, one in ten of them on the cabinet's disk:
//
//   - library_search warm, end to end through MCP (in-process client),
//     p50/p95; target p95 <= 20 ms. The fakes' answers are replayed from
//     memory (see replay); the first call of each query, with both fakes
//     live, is printed too, beside what ES's /systems and the RomM calls
//     cost then. Beside it in the same rounds: the RomM calls
//     library_search makes (platforms and the search page) straight
//     through the RomM client, the difference per round (what the tool
//     adds: MCP, ES, marking, results), and batocera_find_games over the
//     same ES through MCP;
//   - the on-cabinet marking of a search page of 20 (cabinetMarker.mark),
//     p50/p95; target <= 2 ms. Beside it: 20 lookups in a plain map, and 20
//     lookups each followed by the os.Stat a name+size match needs at
//     least;
//   - heap: what the catalog keeps, split by dropping its parts (the
//     on-cabinet index, target <= 10 MB, then the search index), and the
//     on-cabinet index again after the rounds, with the lazy parts the
//     marking built (sizes, case-folded names).
//
// Rows are interleaved round robin, so every row meets the same load;
// CABINET_LIBRARY_BENCH_ROUNDS changes the rounds (default 200). The
// targets are printed, not asserted. About a minute:
//
//	go test -run '^$' -bench LibrarySearch50k -benchtime 1x ./daemon/tools/
func BenchmarkLibrarySearch50k(b *testing.B) {
	rounds := benchLibRounds
	if v, err := strconv.Atoi(os.Getenv("CABINET_LIBRARY_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	began := time.Now()
	lb := newLibraryBench(b)
	setup := time.Since(began)
	ctx := context.Background()
	build, catMiB, cabMiB, searchMiB := lb.catalogShares(b)
	first, _ := lb.call(b, "library_search", map[string]any{"query": "crystal"}) // builds the catalog again

	// What library_search's platform argument matches, for the direct rows.
	view, err := platformsOf(ctx, lb.romm, lb.tools.catalog, platforms.Default())
	if err != nil {
		b.Fatal(err)
	}
	queries := []map[string]any{{"query": "crystal"}, {"query": "dragon knight"}, {"query": "neon", "limit": 50},
		{"query": "shadow quest"}, {"query": "golden harbor 3"}, {"query": "iron", "platform": "gba"},
		{"query": "tiger", "on_cabinet": "yes"}, {"query": "lunar", "on_cabinet": "no"}, {"query": "frozen", "offset": 20},
		{"query": "rocket", "platform": "megacd"}, {"query": "mighty ninja"}, {"query": "zero"}}
	rommCalls := func(a map[string]any) time.Duration {
		sq := romm.SearchQuery{Term: a["query"].(string), Limit: libraryDefaultLimit, WithFiles: true}
		if l, ok := a["limit"].(int); ok {
			sq.Limit = l
		}
		if o, ok := a["offset"].(int); ok {
			sq.Offset = o
		}
		if p, ok := a["platform"].(string); ok {
			sq.PlatformIDs, _, _ = view.match(p)
		}
		t0 := time.Now()
		if _, err := lb.romm.Platforms(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := lb.romm.SearchROMs(ctx, sq); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}

	// Live: each query's first call, with what its ES and RomM calls cost.
	var liveSearch, liveES, liveRomM []time.Duration
	for _, q := range queries {
		d, _ := lb.call(b, "library_search", q)
		liveSearch = append(liveSearch, d)
		liveRomM = append(liveRomM, rommCalls(q))
		t0 := time.Now()
		if _, err := lb.tools.catalog.es.Systems(ctx); err != nil {
			b.Fatal(err)
		}
		liveES = append(liveES, time.Since(t0))
	}

	// The page the marking rows mark, and what marks it.
	page, err := lb.romm.SearchROMs(ctx, romm.SearchQuery{Term: "dragon", Limit: 20, WithFiles: true})
	if err != nil || len(page.Items) != 20 {
		b.Fatalf("page: %d items, %v", len(page.Items), err)
	}
	marker := &cabinetMarker{cat: lb.tools.catalog}
	var warnings []string
	marked := 0
	for _, m := range marker.mark(ctx, page.Items, view, &warnings) {
		if m != nil {
			marked++
		}
	}
	if marked == 0 || len(warnings) > 0 {
		b.Fatalf("the page has %d on the cabinet (warnings %v): the benchmark would not mark anything", marked, warnings)
	}
	byName := map[string]string{}
	for _, g := range lb.lib.AllGames() {
		byName[g.System+"\x00"+filepath.Base(g.Path)] = g.Path
	}
	keys := make([]string, len(page.Items))
	for i, r := range page.Items {
		keys[i] = *view.folder(r.PlatformID) + "\x00" + r.FSName
	}

	round := 0
	q := func() map[string]any { return queries[round%len(queries)] }
	sink := 0
	rows := []*benchRow{
		{name: "library_search through MCP", run: func() time.Duration { d, _ := lb.call(b, "library_search", q()); return d }},
		{name: "  its RomM calls, direct", run: func() time.Duration { return rommCalls(q()) }},
		{name: "batocera_find_games through MCP", run: func() time.Duration {
			d, _ := lb.call(b, "batocera_find_games", map[string]any{"query": q()["query"]})
			return d
		}},
		{name: "mark a page of 20", run: func() time.Duration {
			var w []string
			t0 := time.Now()
			out := marker.mark(ctx, page.Items, view, &w)
			d := time.Since(t0)
			sink += len(out)
			return d
		}},
		{name: "  20 map lookups", run: func() time.Duration {
			t0 := time.Now()
			for _, k := range keys {
				if _, ok := byName[k]; ok {
					sink++
				}
			}
			return time.Since(t0)
		}},
		{name: "  20 map lookups + os.Stat", run: func() time.Duration {
			t0 := time.Now()
			for _, k := range keys {
				if p, ok := byName[k]; ok {
					if _, err := os.Stat(filepath.Join(lb.root, p)); err == nil {
						sink++
					}
				}
			}
			return time.Since(t0)
		}},
	}
	// One unmeasured round per query with the replays on: every GET the
	// rows make is then in memory before the clock runs.
	lb.replaying(true)
	for round = 0; round < len(queries); round++ {
		for _, r := range rows {
			r.run()
		}
	}
	missed := lb.rommReplay.misses() + lb.esReplay.misses()
	var diffs []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for round = 0; round < rounds; round++ {
			var search, direct time.Duration
			for j, r := range rows {
				d := r.run()
				r.lat = append(r.lat, d)
				switch j {
				case 0:
					search = d
				case 1:
					direct = d
				}
			}
			diffs = append(diffs, search-direct)
		}
	}
	b.StopTimer()
	if n := lb.rommReplay.misses() + lb.esReplay.misses() - missed; n != 0 {
		b.Errorf("%d answers came from the live fakes during the rounds: the figures include their cost", n)
	}
	lb.replaying(false)
	warmCab := lb.dropOnCabinet()
	runtime.KeepAlive(sink)

	var t strings.Builder
	fmt.Fprintf(&t, "%d ROMs over %d platforms in RomM and ES, %d on the cabinet's disk; set up in %v; %d rounds; load %s\n",
		benchLibROMs, benchLibPlatforms, lb.onDisk, setup.Round(time.Millisecond), rounds*b.N, machineLoad())
	fmt.Fprintf(&t, "%-44s %10s %10s\n", "", "p50", "p95")
	line := func(name string, p50, p95 float64, unit, note string) {
		fmt.Fprintf(&t, "%-44s %8.3f%s %8.3f%s%s\n", name, p50, unit, p95, unit, note)
	}
	liveNote := fmt.Sprintf(" (max of %d)", len(queries))
	line("library_search, fakes live (first calls)", ms(percentile(liveSearch, 50)), ms(slices.Max(liveSearch)), "ms", liveNote)
	line("  ES /systems then, direct", ms(percentile(liveES, 50)), ms(slices.Max(liveES)), "ms", liveNote)
	line("  its RomM calls then, direct", ms(percentile(liveRomM, 50)), ms(slices.Max(liveRomM)), "ms", liveNote)
	fmt.Fprintf(&t, "warm, fakes replayed:\n")
	for i, r := range rows {
		unit, f := "ms", ms
		if i >= 3 {
			unit, f = "µs", us
		}
		line(r.name, f(percentile(r.lat, 50)), f(percentile(r.lat, 95)), unit, "")
		if i == 1 {
			line("  library_search minus its RomM calls", ms(percentile(diffs, 50)), ms(percentile(diffs, 95)), "ms", "")
		}
	}
	fmt.Fprintf(&t, "targets: library_search p95 <= 20 ms, marking <= 2 ms (the page has %d of 20 on the cabinet)\n", marked)
	fmt.Fprintf(&t, "catalog build %v (first library_search %v): heap kept %.2f MiB = on-cabinet index %.2f MiB (target <= 10 MB = 9.54 MiB) "+
		"+ search index %.2f MiB; on-cabinet index after the rounds %.2f MiB",
		build.Round(time.Millisecond), first.Round(time.Millisecond), catMiB, cabMiB, searchMiB, warmCab)
	fmt.Print(t.String() + "\n") // b.Log cuts a benchmark's log at ten lines

	b.ReportMetric(ms(percentile(rows[0].lat, 50)), "search-p50-ms")
	b.ReportMetric(ms(percentile(rows[0].lat, 95)), "search-p95-ms")
	b.ReportMetric(ms(percentile(rows[1].lat, 95)), "romm-direct-p95-ms")
	b.ReportMetric(ms(percentile(diffs, 95)), "search-minus-romm-p95-ms")
	b.ReportMetric(ms(percentile(rows[2].lat, 95)), "find-games-p95-ms")
	b.ReportMetric(ms(slices.Max(liveSearch)), "search-live-max-ms")
	b.ReportMetric(us(percentile(rows[3].lat, 50)), "mark-p50-µs")
	b.ReportMetric(us(percentile(rows[3].lat, 95)), "mark-p95-µs")
	b.ReportMetric(us(percentile(rows[4].lat, 95)), "map-p95-µs")
	b.ReportMetric(us(percentile(rows[5].lat, 95)), "map-stat-p95-µs")
	b.ReportMetric(cabMiB, "oncabinet-MiB")
	b.ReportMetric(warmCab, "oncabinet-warm-MiB")
	b.ReportMetric(searchMiB, "search-index-MiB")
	b.ReportMetric(float64(build.Milliseconds()), "catalog-build-ms")
}

// machineLoad is the machine's 1-minute load, for the record ("?" off Linux).
func machineLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return fmt.Sprintf("%s on %d CPUs", f[0], runtime.NumCPU())
}
