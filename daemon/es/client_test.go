package es

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestMethods(t *testing.T) {
	f := newFake(t, nil, Config{})
	c, cx := f.c, ctx(t)

	caps, err := c.Caps(cx)
	if err != nil || caps.Version != "42" {
		t.Errorf("Caps = %+v, %v", caps, err)
	}
	systems, err := c.Systems(cx)
	if err != nil || len(systems) != 3 || len(GameSystems(systems)) != 1 {
		t.Errorf("Systems = %+v, %v", systems, err)
	}
	nes, err := c.System(cx, "nes")
	if err != nil || nes.TotalGames != 4 || nes.MostPlayed != "Plain Game" {
		t.Errorf("System(nes) = %+v, %v", nes, err)
	}
	games, err := c.Games(cx, "nes")
	if err != nil || len(games) != 4 {
		t.Fatalf("Games = %d games, %v", len(games), err)
	}
	g, err := c.Game(cx, "nes", plainID)
	if err != nil || g.Name != "Plain Game" || g.PlayCount != 3 || g.Rating != 0.8 {
		t.Errorf("Game = %+v, %v", g, err)
	}
	fav, err := c.Games(cx, "favorites")
	if err != nil || len(fav) != 1 || fav[0].System != "nes" {
		t.Errorf("favorites = %+v, %v; want Plain Game with its source system", fav, err)
	}
	if rg, err := c.RunningGame(cx); rg != nil || err != nil {
		t.Errorf("RunningGame idle = %+v, %v; want nil, nil (201)", rg, err)
	}
	if idle, err := c.IsIdle(cx); !idle || err != nil {
		t.Errorf("IsIdle = %v, %v; want true", idle, err)
	}
	if err := c.Notify(cx, "hello"); err != nil {
		t.Errorf("Notify: %v", err)
	}
	if err := c.MessageBox(cx, "hello box"); err != nil {
		t.Errorf("MessageBox: %v", err)
	}
	if err := c.ReloadGames(cx); err != nil {
		t.Errorf("ReloadGames: %v", err)
	}
	if err := c.EmuKill(cx); err != nil {
		t.Errorf("EmuKill idle: %v", err)
	}
	if err := c.Launch(cx, "/userdata/roms/nes/Nope.nes"); err != nil {
		t.Errorf("Launch of an unknown path: %v (ES answers 200)", err)
	}

	calls := f.srv.Calls()
	var got []string
	for _, call := range calls {
		got = append(got, call.Route+" "+call.Body)
	}
	want := []string{"notify hello", "messagebox hello box", "reloadgames ", "emukill ", "launch /userdata/roms/nes/Nope.nes"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", got, want)
	}
}

func TestRunningGameAndBusy(t *testing.T) {
	f := newFake(t, nil, Config{})
	c, cx := f.c, ctx(t)
	if err := c.Launch(cx, plainPath); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "Plain running", nil, func() bool { rg, _ := c.RunningGame(cx); return rg != nil })
	rg, err := c.RunningGame(cx)
	if err != nil || rg.ID != plainID || rg.System != "nes" {
		t.Errorf("RunningGame = %+v, %v", rg, err)
	}
	if idle, err := c.IsIdle(cx); idle || err != nil {
		t.Errorf("IsIdle while running = %v, %v; want false (201)", idle, err)
	}
	if err := c.EmuKill(cx); err != nil {
		t.Fatal(err)
	}
	if rg, err := c.RunningGame(cx); rg != nil || err != nil {
		t.Errorf("after EmuKill: %+v, %v; want nothing running", rg, err)
	}
}

func TestArgumentChecks(t *testing.T) {
	f := newFake(t, nil, Config{})
	c, cx := f.c, ctx(t)
	for name, err := range map[string]error{
		"empty notify":     c.Notify(cx, ""),
		"empty messagebox": c.MessageBox(cx, ""),
		"empty launch":     c.Launch(cx, ""),
		"bad id":           func() error { _, err := c.Game(cx, "nes", "../../quit"); return err }(),
		"upper id":         func() error { _, err := c.Game(cx, "nes", strings.ToUpper(plainID)); return err }(),
		"bad system":       func() error { _, err := c.Games(cx, "nes/games/x"); return err }(),
		"empty system":     func() error { _, err := c.System(cx, ""); return err }(),
		"huge notify":      c.Notify(cx, strings.Repeat("x", DefaultMaxObjectBytes+1)),
	} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: err %v, want an invalid-argument error", name, err)
		}
	}
	if n := len(f.srv.Calls()); n != 0 {
		t.Errorf("%d requests reached ES for invalid arguments", n)
	}
}

func TestNotFound(t *testing.T) {
	f := newFake(t, nil, Config{})
	c, cx := f.c, ctx(t)
	for name, err := range map[string]error{
		"game":         func() error { _, err := c.Game(cx, "nes", strings.Repeat("0", 32)); return err }(),
		"system games": func() error { _, err := c.Games(cx, "psx"); return err }(),
		"system":       func() error { _, err := c.System(cx, "psx"); return err }(),
		"lookup":       func() error { _, err := c.LookupGame(cx, "nes", strings.Repeat("0", 32)); return err }(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: err %v, want ErrNotFound", name, err)
		}
	}
}

func TestTransportErrors(t *testing.T) {
	f := newFake(t, nil, Config{Timeout: 300 * time.Millisecond, ListTimeout: 300 * time.Millisecond})
	c, cx := f.c, ctx(t)
	for _, tc := range []struct {
		name   string
		faults fakees.Faults
		want   error
	}{
		{"forbidden", fakees.Faults{Forbidden: true}, ErrForbidden},
		{"500", fakees.Faults{Status: 500}, ErrServer},
		{"503", fakees.Faults{Status: 503}, ErrServer},
		{"malformed", fakees.Faults{Malformed: true}, ErrMalformed},
		{"truncated", fakees.Faults{Truncated: true}, ErrMalformed},
		{"latency past the deadline", fakees.Faults{Latency: time.Second}, ErrTimeout},
		{"slow body past the deadline", fakees.Faults{Dribble: 100 * time.Millisecond}, ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.srv.SetFaults(tc.faults)
			defer f.srv.SetFaults(fakees.Faults{})
			c.Invalidate()
			_, err := c.Games(cx, "nes")
			if !errors.Is(err, tc.want) {
				t.Fatalf("Games: err %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), "GET /systems/nes/games") {
				t.Errorf("error %q does not name the request", err)
			}
		})
	}
	// Slow, but well within the deadline: a client whose deadline leaves a
	// loaded machine room (the same faults take ~150 ms of a 300 ms one).
	f.srv.SetFaults(fakees.Faults{Latency: 50 * time.Millisecond, Dribble: time.Millisecond})
	patient, err := New(Config{URL: f.c.cfg.URL, Timeout: 10 * time.Second, ListTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := patient.Games(cx, "nes"); err != nil {
		t.Errorf("slow but within the deadline: %v", err)
	}
}

func TestForbiddenMessage(t *testing.T) {
	f := newFake(t, nil, Config{})
	f.srv.SetFaults(fakees.Faults{Forbidden: true})
	_, err := f.c.Caps(ctx(t))
	for _, want := range []string{"403", "127.0.0.1", "PublicWebAccess"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	f := newFake(t, nil, Config{})
	c, cx := f.c, ctx(t)
	if _, err := c.Caps(cx); err != nil {
		t.Fatal(err)
	}
	f.ln.Stop()
	_, err := c.Caps(cx)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "EmulationStation is not running or still loading") {
		t.Errorf("stopped ES: err %v, want ErrUnavailable", err)
	}
	if err := f.ln.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Caps(cx); err != nil {
		t.Errorf("restarted ES: %v", err)
	}
}

func TestBodyBounds(t *testing.T) {
	f := newFake(t, library.Fixture(""), Config{MaxListBytes: 4096, MaxObjectBytes: 1024})
	c, cx := f.c, ctx(t)
	if _, err := c.Games(cx, "nes"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("game list over the bound: %v, want ErrTooLarge", err)
	}
	contra := library.GameID("/userdata/roms/nes/Contra (USA).nes") // its description is > 2000 bytes
	if _, err := c.Game(cx, "nes", contra); !errors.Is(err, ErrTooLarge) {
		t.Errorf("game over the bound: %v, want ErrTooLarge", err)
	}
	if _, err := c.Caps(cx); err != nil {
		t.Errorf("small object: %v", err)
	}
}

func TestDeadlineFromContext(t *testing.T) {
	f := newFake(t, nil, Config{Timeout: 5 * time.Second})
	f.srv.SetFaults(fakees.Faults{Latency: time.Second})
	cx, cancel := contextWithTimeout(t, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.c.Caps(cx)
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("err %v, want ErrTimeout", err)
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Errorf("the caller's deadline was not honoured")
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "http://127.0.0.1:1234"},
		{"http://localhost:1234", "http://127.0.0.1:1234"},
		{"http://LOCALHOST:1234/", "http://127.0.0.1:1234"},
		{"http://127.0.0.1:4321", "http://127.0.0.1:4321"},
		{"http://192.168.1.5:1234", "http://192.168.1.5:1234"},
	} {
		c, err := New(Config{URL: tc.in})
		if err != nil || c.BaseURL() != tc.want {
			t.Errorf("New(%q): %v, %v; want %s", tc.in, c, err, tc.want)
		}
	}
	for _, bad := range []string{"https://127.0.0.1:1234", "127.0.0.1:1234", "http://127.0.0.1:1234/api", "http://u:p@127.0.0.1:1234", "http://[::1"} {
		if _, err := New(Config{URL: bad}); err == nil {
			t.Errorf("New(%q): no error", bad)
		}
	}
}

func TestLocalhostDialsIPv4(t *testing.T) {
	f := newFake(t, nil, Config{})
	port := f.ln.Addr()[strings.LastIndexByte(f.ln.Addr(), ':')+1:]
	c, err := New(Config{URL: "http://localhost:" + port})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Caps(ctx(t)); err != nil {
		t.Errorf("localhost URL: %v", err)
	}
}

// TestNoDangerousRoutes: the client has no method for what Cabinet must never
// do, and exercising every method never reaches those routes.
func TestNoDangerousRoutes(t *testing.T) {
	typ := reflect.TypeOf(&Client{})
	for i := 0; i < typ.NumMethod(); i++ {
		name := strings.ToLower(typ.Method(i).Name)
		for _, bad := range []string{"quit", "restart", "shutdown", "reboot", "addgame", "removegame", "upload", "media", "metadata", "setgame", "update"} {
			if strings.Contains(name, bad) {
				t.Errorf("Client has a method %s", typ.Method(i).Name)
			}
		}
	}
	f := newFake(t, nil, Config{})
	c, cx := f.c, ctx(t)
	c.Caps(cx)
	c.Systems(cx)
	c.System(cx, "nes")
	c.Games(cx, "nes")
	c.Game(cx, "nes", plainID)
	c.LookupGame(cx, "nes", plainID)
	c.RunningGame(cx)
	c.IsIdle(cx)
	c.Notify(cx, "x")
	c.MessageBox(cx, "x")
	c.ReloadGames(cx)
	c.LaunchGame(cx, "nes", plainID)
	c.EmuKill(cx)
	for _, route := range []string{fakees.RouteQuit, fakees.RouteRestart, fakees.RouteShutdown, fakees.RouteAddGames,
		fakees.RouteRemoveGames, fakees.RouteMetadata, fakees.RouteMediaUpload, fakees.RouteStorageEvent} {
		if n := f.srv.CallCount(route); n != 0 {
			t.Errorf("%s called %d times", route, n)
		}
	}
}
