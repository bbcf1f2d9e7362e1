package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// BenchmarkPlayByName prints how long a launch takes by each path against the fake ES, from the
// request sent to the moment the fake ES reports the game running (each path's own answer comes
// later, after its poll of ES's /runningGame confirms it): Home Assistant's text.batocera_play (a command
// on the embedded broker, the name resolved by the daemon) beside the MCP tool
// batocera_launch_game over Streamable HTTP (the game's id given), interleaved, 30 each
// (CABINET_E2E_BENCH_RUNS). The tools' rate limits are lifted (CABINET_BENCH_NO_RATE_LIMITS).
// Target (printed, not asserted): the HA path's p95 within 50 ms of the tool's. Outside -race:
//
//	go test -run '^$' -bench PlayByName -benchtime 1x ./daemon/e2e/
func BenchmarkPlayByName(b *testing.B) {
	runs := runsOr(30)
	r := newRig(b, startBroker(b, cabinettest.Embedded), "cabinet.ha.controls=1")
	r.extraEnv = []string{"CABINET_BENCH_NO_RATE_LIMITS=1"}
	d := r.startOnline()
	d.waitLog("game names refreshed", 20*time.Second)
	ha := haClient{r, r.broker.Dial(b)}
	ctx := context.Background()

	tr, err := transport.NewStreamableHTTP(r.mcpURL()+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + r.token()}))
	if err != nil {
		b.Fatal(err)
	}
	mc := client.NewClient(tr)
	if err := mc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer mc.Close()
	if _, err := mc.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}

	games := []struct{ request, system, name string }{
		{"the legend of zelda on nes", "nes", "The Legend of Zelda"},
		{"chrono trigger", "snes", "Chrono Trigger"},
		{"sonic 2 genesis", "megadrive", "Sonic The Hedgehog 2"},
		{"gunstar heroes", "megadrive", "Gunstar Heroes"},
	}
	idOf := func(system, name string) string {
		for _, g := range r.cab.Library.Games(system) {
			if g.Name == name {
				return g.ID
			}
		}
		b.Fatalf("no %s in %s", name, system)
		return ""
	}
	// awaitRunning polls the fake ES in-process: no HTTP between the launch and the clock.
	awaitRunning := func(name string) time.Time {
		deadline := time.Now().Add(cabinettest.Deadline)
		for time.Now().Before(deadline) {
			if g, ok := r.cab.ES.Running(); ok && g.Name == name {
				return time.Now()
			}
			time.Sleep(200 * time.Microsecond)
		}
		b.Fatalf("%s never ran", name)
		return time.Time{}
	}
	var viaHA, viaMCP []time.Duration
	for i := -2; i < runs; i++ { // two unmeasured rounds: the index built, the connections warm
		g := games[(i+2)%len(games)]
		from := r.obs.Mark()
		start := time.Now()
		ha.set(haentities.Play, g.request)
		took := awaitRunning(g.name).Sub(start)
		// The request is over once its event is out (the launch holds until ES confirms).
		cabinettest.Await(b, "the request's event", r.obs.Changed, func() bool { return len(r.playEvents(from)) > 0 })
		if err := simulator.EndGame(ctx, r.cab); err != nil {
			b.Fatal(err)
		}
		// The tool answers once its own poll of ES confirms the game: timed, like the HA path, to
		// the moment ES reports it running, with the call still under way.
		called := make(chan error, 1)
		start = time.Now()
		go func() {
			res, err := mc.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_launch_game",
				Arguments: map[string]any{"system": g.system, "game_id": idOf(g.system, g.name)}}})
			if err == nil && res.IsError {
				err = fmt.Errorf("%+v", res.Content)
			}
			called <- err
		}()
		tookMCP := awaitRunning(g.name).Sub(start)
		if err := <-called; err != nil {
			b.Fatalf("batocera_launch_game: %v", err)
		}
		if err := simulator.EndGame(ctx, r.cab); err != nil {
			b.Fatal(err)
		}
		if i >= 0 {
			viaHA, viaMCP = append(viaHA, took), append(viaMCP, tookMCP)
		}
	}
	h, m := spreadOf(viaHA), spreadOf(viaMCP)
	fmt.Printf("\nlaunch -> ES reports the game running (fake ES, embedded broker, %d runs each, interleaved)\n", runs)
	fmt.Printf("  MCP batocera_launch_game (HTTP)   median %s  p95 %s  max %s\n", ms(m.median), ms(m.p95), ms(m.max))
	fmt.Printf("  HA text.batocera_play (MQTT)      median %s  p95 %s  max %s  p95 over the tool's %s  %s\n", ms(h.median), ms(h.p95),
		ms(h.max), ms(h.p95-m.p95), verdict(h.p95 <= m.p95+50*time.Millisecond, "the HA path adds <= 50ms at p95"))
	b.ReportMetric(ms64(h.p95), "ha_p95_ms")
	b.ReportMetric(ms64(m.p95), "mcp_p95_ms")
	d.term()
}
