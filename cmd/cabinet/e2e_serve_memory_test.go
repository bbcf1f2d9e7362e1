package main

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestServeMemory prints (figures for reading, not asserted: issue 25's target is at most
// 40 MB resident and 60 MB peak for 50,000 games) the resident memory of `cabinet serve`
// against `cabinet simulate --games 50000`, after its start and four batocera_find_games calls
// over MCP on HTTP, beside the same figures against the simulator's fixture library, in the
// same run. serve is the release build (what a cabinet runs), the simulator the default one;
// neither is built with -race. Run: go test -run TestServeMemory -v ./cmd/cabinet/
func TestServeMemory(t *testing.T) {
	cabinettest.Long(t, "indexes 50,000 games")
	fixture := serveMemory(t, nil)
	large := serveMemory(t, []string{"--games", "50000"})
	t.Logf("cabinet serve, fixture library: after start %s; after four searches %s", fixture.start, fixture.after)
	t.Logf("cabinet serve, 50,000 games:    after start %s; after four searches %s", large.start, large.after)
}

type memFigures struct{ start, after string }

// serveMemory runs `cabinet simulate args…` and `cabinet serve` against it, and reads serve's
// VmRSS and VmHWM after its start and after four searches.
func serveMemory(t *testing.T, args []string) memFigures {
	t.Helper()
	env, _, stopSim := startSimulate(t, cabinetBinary(t), args...)
	defer stopSim()

	url, token, daemonLog, stop, pid := startServeBinary(t, releaseCabinet.Path(t), append(env, "CABINET_LOG_LEVEL=debug"))
	defer stop()
	// The start's pass over ES's lists (the names cache) first, then the searches: the figures
	// are of the daemon at rest, and of it after searching.
	daemonLog.AwaitLine(t, "the start's pass over the game names", "game names refreshed")
	c := mcpSession(t, url, token)
	var f memFigures
	f.start = procStatus(t, pid, "VmRSS", "VmHWM", "RssAnon", "RssFile")
	for i, q := range []string{"super dragon", "dragon", "quest", "mario"} {
		// The first call fetches every game list from the fake ES (slow under load): no client
		// deadline but the test's.
		res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_find_games",
			Arguments: map[string]any{"query": q, "limit": 50}}})
		if err != nil || res.IsError {
			t.Fatalf("batocera_find_games %d (%q): %v %+v", i+1, q, err, res)
		}
	}
	f.after = procStatus(t, pid, "VmRSS", "VmHWM", "RssAnon", "RssFile")
	return f
}
