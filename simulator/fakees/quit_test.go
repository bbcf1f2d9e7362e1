package fakees

import "testing"

// TestQuitRoutes: GET /quit, /restart and /shutdown fire ES's events where
// ES fires them (Platform.cpp quitES and processQuitMode) and are recorded;
// the fake goes on answering.
func TestQuitRoutes(t *testing.T) {
	for _, tc := range []struct {
		path, route string
		want        []string
	}{
		{"/quit", RouteQuit, []string{"config-changed", "settings-changed", "quit"}},
		{"/restart", RouteRestart, []string{"quit|reboot", "reboot"}},
		{"/shutdown", RouteShutdown, []string{"quit|shutdown", "shutdown"}},
		{"/quit?confirm=menu", RouteQuit, nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			e := capturedEnv(t)
			if got := e.get(tc.path); got.status != 200 || len(got.body) != 0 {
				t.Fatalf("GET %s: %d %q, want 200 and no body", tc.path, got.status, got.body)
			}
			if got := e.events.Take(); !equalStrings(got, tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
			calls := e.srv.Calls()
			if len(calls) != 1 || calls[0].Route != tc.route || calls[0].Method != "GET" || e.srv.CallCount(tc.route) != 1 {
				t.Errorf("calls %+v, want one %s", calls, tc.route)
			}
			if got := e.get("/caps"); got.status != 200 {
				t.Errorf("GET /caps after %s: %d; the fake does not quit", tc.path, got.status)
			}
		})
	}
}

// TestQuitRoutesDuringAGame: /restart and /shutdown fire their events at
// once (on ES's HTTP thread), a plain /quit only once the game has ended
// (ES's main loop takes the SDL_QUIT after the emulator returns).
func TestQuitRoutesDuringAGame(t *testing.T) {
	e := capturedEnv(t)
	if err := e.srv.Launch("nes", smbID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(DefaultLaunchDelay)
	if _, ok := e.srv.Running(); !ok {
		t.Fatal("the game did not start")
	}
	e.events.Take()

	e.get("/shutdown")
	if got, want := e.events.Take(), []string{"quit|shutdown", "shutdown"}; !equalStrings(got, want) {
		t.Errorf("/shutdown during a game fired %q, want %q at once", got, want)
	}
	e.get("/quit")
	if got := e.events.Take(); len(got) != 0 {
		t.Errorf("/quit during a game fired %q at once, want nothing until the game ends", got)
	}
	e.srv.EndGame(0)
	if got := e.events.Take(); !equalStrings(got, []string{"game-end"}) {
		t.Errorf("the game's end fired %q, want game-end", got)
	}
	e.clock.Advance(DefaultReturnDelay)
	if got, want := e.events.Take(), []string{"config-changed", "settings-changed", "quit"}; !equalStrings(got, want) {
		t.Errorf("after the game /quit fired %q, want %q", got, want)
	}
	if n := e.srv.Queued(); n != 0 {
		t.Errorf("%d actions still queued", n)
	}
}
