package tools

import (
	"context"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// emulator plays Batocera's part between ES and RetroArch: a libretro game
// brings the fake RetroArch up for as long as it runs; QUIT in RetroArch
// ends the game in ES.
type emulator struct {
	lib *library.Library
	ra  *fakeretroarch.Server
}

func (e *emulator) Run(ctx context.Context, g library.Game) (int, error) {
	sys, _ := e.lib.System(g.System)
	if sys.Libretro {
		c := fakeretroarch.Content{SystemID: sys.RetroArchSystem, Basename: g.Stem(), CRC32: crc32.ChecksumIEEE([]byte(g.Path))}
		if err := e.ra.Load(c); err != nil {
			return 1, err
		}
		defer e.ra.Unload()
	}
	<-ctx.Done()
	return 0, nil
}

// rig is a cabinet on loopback: fake ES and fake RetroArch on real sockets,
// the tools server over them, and an in-process MCP client.
type rig struct {
	t      *testing.T
	lib    *library.Library
	es     *fakees.Server
	esLn   *fakees.Listener
	esc    *es.Client
	ra     *fakeretroarch.Server
	clock  *clock.Fake
	srv    *Server
	client *client.Client
	root   string // fake filesystem tree
	shots  string // screenshot folder
	states string // savestate folder
}

type rigConfig struct {
	opts     Options
	lib      *library.Library
	protocol string          // "" for the client's default (the modern protocol)
	deps     func(*Deps)     // changes the tools' dependencies
	emulator fakees.Emulator // nil: libretro games bring up the fake RetroArch
}

func newRig(t *testing.T, cfg rigConfig) *rig {
	t.Helper()
	if cfg.lib == nil {
		cfg.lib = library.Fixture("")
	}
	r := &rig{t: t, lib: cfg.lib, clock: clock.NewFake(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)),
		root: t.TempDir()}
	r.shots = filepath.Join(r.root, "userdata", "screenshots")
	r.states = filepath.Join(r.root, "userdata", "saves")
	r.ra = &fakeretroarch.Server{ScreenshotDir: r.shots, SavestateDir: r.states}
	raAddr, err := r.ra.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.emulator == nil {
		cfg.emulator = &emulator{lib: cfg.lib, ra: r.ra}
	}
	r.es = fakees.New(fakees.Config{Library: cfg.lib, LaunchDelay: 30 * time.Millisecond,
		ReturnDelay: 10 * time.Millisecond, Emulator: cfg.emulator})
	r.ra.OnQuit = func() { r.es.EndGame(0) }
	ln, err := fakees.Serve("127.0.0.1:0", r.es)
	if err != nil {
		t.Fatal(err)
	}
	r.esLn = ln
	t.Cleanup(func() {
		r.es.Close()
		ln.Close()
		r.ra.Unload()
	})
	r.esc, err = es.New(es.Config{URL: ln.URL(), PollInterval: 20 * time.Millisecond, LaunchTimeout: 5 * time.Second,
		Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	paths := r.fakeTree()
	deps := Deps{ES: r.esc, RetroArch: retroarch.New(raAddr), Paths: paths, Clock: r.clock, Name: "Game Room",
		Version: "1.2.3", Location: time.UTC, Seed: func() uint64 { return 42 }}
	if cfg.deps != nil {
		cfg.deps(&deps)
	}
	r.srv, err = New(deps, cfg.opts)
	if err != nil {
		t.Fatal(err)
	}
	r.client = r.connect(cfg.protocol)
	return r
}

func (r *rig) connect(protocol string, opts ...client.ClientOption) *client.Client {
	r.t.Helper()
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	c, err := client.NewInProcessClientWithOptions(r.srv.MCP(), opts...)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		r.t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "tools-test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	return c
}

// fakeTree writes the files get_health reads.
func (r *rig) fakeTree() Paths {
	p := DefaultPaths().Resolve(func(s string) string { return filepath.Join(r.root, s) })
	p.ScreenshotDir = r.shots
	write := func(path, body string) {
		r.t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	write(filepath.Join(r.root, "sys/class/thermal/thermal_zone0/temp"), "48500\n")
	write(filepath.Join(r.root, "sys/class/thermal/thermal_zone1/temp"), "61234\n")
	write(p.LoadAvg, "0.52 0.58 0.59 1/467 12345\n")
	write(p.MemInfo, "MemTotal:        8048576 kB\nMemFree:         1000000 kB\nMemAvailable:    6000000 kB\n")
	write(p.Uptime, "12345.67 23456.78\n")
	write(p.BatoceraVersion, "41 2024/11/28 19:07\n")
	if err := os.MkdirAll(p.StateDir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// call calls a tool and fails the test on a protocol error.
func (r *rig) call(name string, args map[string]any) *mcp.CallToolResult {
	r.t.Helper()
	res, err := r.callErr(name, args)
	if err != nil {
		r.t.Fatalf("call %s %v: %v", name, args, err)
	}
	return res
}

func (r *rig) callErr(name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return r.client.CallTool(ctx, req)
}

// ok calls a tool that must succeed and decodes its structured content
// into out (when not nil).
func (r *rig) ok(name string, args map[string]any, out any) *mcp.CallToolResult {
	r.t.Helper()
	res := r.call(name, args)
	if res.IsError {
		r.t.Fatalf("call %s %v: tool error: %s", name, args, text(res))
	}
	if res.StructuredContent == nil {
		r.t.Fatalf("call %s: no structured content", name)
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			r.t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			r.t.Fatalf("call %s: structured content %s: %v", name, b, err)
		}
	}
	return res
}

// refused calls a tool that must fail with a tool error and returns its text.
func (r *rig) refused(name string, args map[string]any) string {
	r.t.Helper()
	res := r.call(name, args)
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		r.t.Fatalf("call %s %v: want a tool error, got %s", name, args, b)
	}
	return text(res)
}

// action calls an action tool that must succeed and returns its result.
func (r *rig) action(name string, args map[string]any) ActionResult {
	r.t.Helper()
	var a ActionResult
	r.ok(name, args, &a)
	return a
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// game finds a fixture game by system and name.
func (r *rig) game(system, name string) library.Game {
	r.t.Helper()
	for _, g := range r.lib.Games(system) {
		if g.Name == name {
			return g
		}
	}
	r.t.Fatalf("no game %q in %s", name, system)
	return library.Game{}
}

// launch launches a game through the tool and waits until RetroArch
// answers, for libretro systems.
func (r *rig) launch(system, name string) library.Game {
	r.t.Helper()
	g := r.game(system, name)
	a := r.action("batocera_launch_game", map[string]any{"system": system, "game_id": g.ID})
	if a.Outcome != outcomeDone {
		r.t.Fatalf("launch %s: got %+v", name, a)
	}
	if sys, _ := r.lib.System(system); sys.Libretro {
		r.waitRA(func(s fakeretroarch.Snapshot) bool { return s.Listening })
	}
	return g
}

func (r *rig) waitRA(cond func(fakeretroarch.Snapshot) bool) fakeretroarch.Snapshot {
	r.t.Helper()
	s, err := r.ra.WaitFor(cabinettest.Context(r.t), cond)
	if err != nil {
		r.t.Fatalf("fake RetroArch: %v (last %+v)", err, s)
	}
	return s
}

// esDown stops the fake ES: connections are refused, as while ES restarts.
func (r *rig) esDown() {
	r.t.Helper()
	if err := r.esLn.Stop(); err != nil {
		r.t.Fatal(err)
	}
}
