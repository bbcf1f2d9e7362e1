package fakees

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

const (
	smbPath   = "/userdata/roms/nes/Super Mario Bros. (World).nes"
	plainPath = "/userdata/roms/nes/Plain.nes"
	smbID     = "dfc0a340a06b614e45b445627708cb05"
	plainID   = "c4bd586365d2edccc03d52f2441bb64c"
)

func (e *env) runningStatus() int { e.t.Helper(); return e.get("/runningGame").status }

func TestLaunchTimeline(t *testing.T) {
	e := capturedEnv(t)
	e.srv.Start()
	e.events.Take()

	if got := e.do("POST", "/launch", smbPath); got.status != 200 || len(got.body) != 0 {
		t.Fatalf("launch: %d %q, want 200 and no body", got.status, got.body)
	}
	if got := e.runningStatus(); got != 201 {
		t.Errorf("right after the POST: runningGame %d, want 201", got)
	}
	e.clock.Advance(999 * time.Millisecond)
	if got := e.runningStatus(); got != 201 {
		t.Errorf("before the launch delay: runningGame %d, want 201", got)
	}
	e.clock.Advance(time.Millisecond)
	if got := e.runningStatus(); got != 200 {
		t.Errorf("after the launch delay: runningGame %d, want 200", got)
	}
	want := []string{"config-changed", "settings-changed",
		`game-start|/userdata/roms/nes/Super\ Mario\ Bros.\ \(World\).nes|Super Mario Bros. (World)|Super Mario Bros. (World)`}
	if got := e.events.Take(); !equalStrings(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}

	// The play timer (12 s) ends the game: game-end, then statistics.
	e.clock.Advance(12 * time.Second)
	if got := e.runningStatus(); got != 201 {
		t.Errorf("after the game: runningGame %d, want 201", got)
	}
	if got := e.events.Take(); !equalStrings(got, []string{"game-end"}) {
		t.Errorf("events %q, want [game-end]", got)
	}
	g, _ := e.srv.Library().Game("nes", smbID)
	if g.PlayCount() != 1 || g.GameTime() != 12 {
		t.Errorf("playcount %d gametime %d, want 1 and 12", g.PlayCount(), g.GameTime())
	}

	// The second launch does not save the settings again. (The UI takes
	// ReturnDelay to come back first; a launch before that would queue.)
	e.clock.Advance(DefaultReturnDelay)
	e.do("POST", "/launch", plainPath)
	e.clock.Advance(time.Second)
	if got := e.events.Take(); len(got) != 1 || !strings.HasPrefix(got[0], "game-start|") {
		t.Errorf("second launch events %q, want only game-start", got)
	}
}

// orderSink checks, when game-start and game-end fire, what /runningGame
// says at that moment (ES: 201 both times).
type orderSink struct {
	e       *env
	mu      sync.Mutex
	running map[string]bool
}

func (o *orderSink) Fire(event string, args ...string) {
	if event != "game-start" && event != "game-end" {
		return
	}
	_, running := o.e.srv.Running()
	o.mu.Lock()
	o.running[event] = running
	o.mu.Unlock()
}

func TestRunningGameUnsetAroundEvents(t *testing.T) {
	e := &env{t: t, clock: clock.NewFake(epoch), events: &Recorder{}}
	sink := &orderSink{e: e, running: map[string]bool{}}
	e.srv = New(Config{Library: library.Captured(""), Clock: e.clock, Events: sink})
	e.srv.Launch("nes", smbID)
	e.clock.Advance(time.Second)
	if !e.srv.EndGame(0) {
		t.Fatal("EndGame found no game")
	}
	for _, ev := range []string{"game-start", "game-end"} {
		running, fired := sink.running[ev]
		if !fired || running {
			t.Errorf("%s: fired %v, game running while fired %v; want fired with no running game", ev, fired, running)
		}
	}
}

func TestQueuedLaunch(t *testing.T) {
	e := capturedEnv(t)
	e.do("POST", "/launch", plainPath)
	e.clock.Advance(time.Second)
	e.do("POST", "/launch", smbPath) // queued behind Plain
	if q := e.srv.Queued(); q != 1 {
		t.Fatalf("queued %d, want 1", q)
	}
	e.clock.Advance(5 * time.Second)
	if g, _ := e.srv.Running(); g.ID != plainID {
		t.Fatalf("running %q, want Plain still", g.Name)
	}
	if !e.srv.EndGame(0) {
		t.Fatal("EndGame: nothing running")
	}
	// ~1.3 s later (return + transition) the queued game runs.
	e.clock.Advance(1299 * time.Millisecond)
	if _, ok := e.srv.Running(); ok {
		t.Error("queued game already running 1.299 s after the first ended")
	}
	e.clock.Advance(time.Millisecond)
	if g, ok := e.srv.Running(); !ok || g.ID != smbID {
		t.Errorf("running %q %v, want Super Mario Bros. 1.3 s after the first game ended", g.Name, ok)
	}
}

func TestReloadCancelsQueuedLaunch(t *testing.T) {
	for _, keep := range []bool{false, true} {
		e := newEnv(t, Config{Library: library.Captured(""), KeepQueuedLaunchOnReload: keep})
		e.do("POST", "/launch", plainPath)
		e.clock.Advance(time.Second)
		e.do("POST", "/launch", smbPath)
		e.get("/reloadgames")
		e.srv.EndGame(0)
		e.clock.Advance(2 * time.Second)
		_, running := e.srv.Running()
		if running != keep {
			t.Errorf("KeepQueuedLaunchOnReload=%v: queued game running %v, want %v", keep, running, keep)
		}
	}
}

func TestReloadDoesNotCancelDirectLaunch(t *testing.T) {
	e := capturedEnv(t)
	e.do("POST", "/launch", plainPath)
	e.get("/reloadgames")
	e.clock.Advance(time.Second)
	if _, ok := e.srv.Running(); !ok {
		t.Error("a reload during a direct launch's transition cancelled it")
	}
}

func TestEmuKill(t *testing.T) {
	e := capturedEnv(t)
	e.do("POST", "/launch", plainPath)
	e.clock.Advance(time.Second)
	if got := e.get("/emukill"); got.status != 200 || len(got.body) != 0 {
		t.Fatalf("emukill: %d %q", got.status, got.body)
	}
	// Answered only once the emulator is gone: no waiting needed here.
	if got := e.runningStatus(); got != 201 {
		t.Errorf("runningGame right after /emukill: %d, want 201", got)
	}
	if got := e.get("/emukill"); got.status != 200 {
		t.Errorf("emukill with nothing running: %d, want 200", got.status)
	}
	if n := e.srv.CallCount(RouteEmuKill); n != 2 {
		t.Errorf("emukill count %d, want 2", n)
	}
}

// exitEmulator runs until cancelled and returns a fixed exit code.
type exitEmulator struct{ code int }

func (x exitEmulator) Run(ctx context.Context, _ library.Game) (int, error) {
	<-ctx.Done()
	return x.code, nil
}

func TestPlayStatistics(t *testing.T) {
	for _, tc := range []struct {
		name                string
		emu                 Emulator
		endGame             *int
		session             time.Duration
		playcount, gametime int
		lastplayed          string
	}{
		{"clean exit long", nil, nil, 30 * time.Second, 4, 155, "20261130T030706"},
		{"clean exit short", nil, nil, 5 * time.Second, 4, 125, "20261130T030641"},
		{"crash via emulator", exitEmulator{code: 139}, nil, 30 * time.Second, 3, 125, "20240101T120000"},
		{"EndGame with error code", nil, intp(1), 30 * time.Second, 3, 125, "20240101T120000"},
		{"EndGame clean", exitEmulator{code: 139}, intp(0), 30 * time.Second, 4, 155, "20261130T030706"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{Library: library.Captured(""), Emulator: tc.emu})
			e.do("POST", "/launch", plainPath)
			e.clock.Advance(time.Second)
			e.clock.Advance(tc.session)
			if tc.endGame != nil {
				e.srv.EndGame(*tc.endGame)
			} else {
				e.get("/emukill")
			}
			g, _ := e.srv.Library().Game("nes", plainID)
			if g.PlayCount() != tc.playcount || g.GameTime() != tc.gametime || g.Value("lastplayed") != tc.lastplayed {
				t.Errorf("playcount %d gametime %d lastplayed %s, want %d %d %s", g.PlayCount(), g.GameTime(),
					g.Value("lastplayed"), tc.playcount, tc.gametime, tc.lastplayed)
			}
		})
	}
}

func intp(i int) *int { return &i }

func TestLaunchMatching(t *testing.T) {
	for _, tc := range []struct {
		body    string
		matches bool
	}{
		{plainPath, true},
		{"/userdata/roms/nes//Plain.nes", true}, // getAbsolutePath makes it generic
		{`\userdata\roms\nes\Plain.nes`, true},  // isAbsolute looks at the generic path
		{"roms/nes/Plain.nes", true},            // relative to ES's cwd, /userdata
		{plainPath + "\n", false},
		{"/userdata/roms/nes/plain.nes", false},
		{"/userdata/roms/nes/Nope.nes", false},
	} {
		e := capturedEnv(t)
		e.do("POST", "/launch", tc.body)
		e.clock.Advance(time.Second)
		if _, ok := e.srv.Running(); ok != tc.matches {
			t.Errorf("launch %q: running %v, want %v", tc.body, ok, tc.matches)
		}
	}
}

func TestLaunchClearsSleepWithoutWake(t *testing.T) {
	e := capturedEnv(t)
	if err := e.srv.StartScreensaver(ScreensaverDim); err != nil {
		t.Fatal(err)
	}
	if got := e.events.Take(); !equalStrings(got, []string{"screensaver-start|dim", "sleep"}) {
		t.Errorf("dim screensaver events %q", got)
	}
	e.do("POST", "/launch", smbPath)
	if e.srv.Sleeping() {
		t.Error("still sleeping after /launch")
	}
	e.clock.Advance(time.Second)
	got := e.events.Take()
	if len(got) != 4 || got[0] != "screensaver-stop" || got[1] != "config-changed" || !strings.HasPrefix(got[3], "game-start|") {
		t.Errorf("events %q, want screensaver-stop, config-changed, settings-changed, game-start and no wake", got)
	}
}

func TestMessageBoxClearsSleepSilently(t *testing.T) {
	e := capturedEnv(t)
	e.srv.Sleep()
	e.events.Take()
	e.do("POST", "/messagebox", "hi")
	if e.srv.Sleeping() {
		t.Error("still sleeping after /messagebox")
	}
	e.srv.Sleep() // sleep again with no wake in between
	if got := e.events.Take(); !equalStrings(got, []string{"sleep"}) {
		t.Errorf("events %q, want a second sleep and no wake", got)
	}
}

func TestClose(t *testing.T) {
	e := capturedEnv(t)
	e.srv.Launch("nes", plainID)
	e.clock.Advance(time.Second)
	e.do("POST", "/launch", smbPath) // queued
	e.srv.Close()
	if _, ok := e.srv.Running(); ok {
		t.Fatal("a game still runs after Close")
	}
	e.clock.Advance(5 * time.Second)
	if _, ok := e.srv.Running(); ok {
		t.Error("a queued launch started after Close")
	}
}
