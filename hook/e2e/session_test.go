package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// ROMs of the scenarios (the files need not exist: only paths travel).
const (
	smbPath   = "/userdata/roms/nes/Super Mario Bros. (World).nes"
	smbName   = "Super Mario Bros. (World)"
	marioPath = "/userdata/roms/nes/Mario_(USA).nes"
	marioStem = "Mario_(USA)"
)

// play is the time a game runs in a scenario: scenario time, not a wait
// for anything to happen.
func play(d time.Duration) { <-time.After(d) }

// launch plays what ES and Batocera's launcher do around one game: ES fires
// game-start (async) and starts emulatorlauncher, whose configgen scripts
// run (sync) once Python is up, a few hundred ms later; the game runs for
// d, then configgen's gameStop and ES's game-end. waitLive, when set, runs
// while the game is running.
func (c *cabinet) launch(rom, name string, d time.Duration, waitLive func()) {
	c.t.Helper()
	if rom == c.lastRom {
		// The tracker takes the same game's session_start within its 10 s
		// duplicate window for a repeat of the last one: scenarios
		// replayed on one cabinet relaunch a game later than that.
		cabinettest.Await(c.t, "10 s since the game's previous launch", nil, func() (bool, string) {
			return time.Since(c.lastLaunch) > 10500*time.Millisecond, "too close to the previous launch"
		})
	}
	c.fire("game-start", esevents.GameStartArgs(rom, name)...)
	c.configgen(esevents.GameStart, systemOf(rom), "libretro", "fceumm", rom)
	c.lastLaunch, c.lastRom = time.Now(), rom // after both reports were stamped
	started := time.Now()
	if waitLive != nil {
		waitLive()
	}
	play(d - time.Since(started))
	c.configgen(esevents.GameStop, systemOf(rom), "libretro", "fceumm", rom)
	c.fire("game-end")
}

func systemOf(rom string) string {
	rest := strings.TrimPrefix(rom, "/userdata/roms/")
	sys, _, _ := strings.Cut(rest, "/")
	return sys
}

// TestLoggedSession: a session ES and configgen both report is logged once,
// and so is one whose ES game-start hook never runs (ES's unquoted stem
// "Mario_(USA)" is a sh syntax error, es-captures/events_launch_mario_parens.txt):
// configgen and game-end are enough.
func TestLoggedSession(t *testing.T) { runScenarios(t, loggedSessionScenarios()) }

// TestShortSession: a session under min_session_seconds shows live and is
// never logged.
func TestShortSession(t *testing.T) {
	cabinettest.Long(t, "a session plus the 3 s reorder window")
	runScenarios(t, []scenario{shortSessionScenario()})
}

func loggedSessionScenarios() []scenario {
	cases := []struct {
		name, rom, esName string
		wantGame          string
		wantSource        string
		esHookFails       bool
	}{
		{name: "normal", rom: smbPath, esName: smbName, wantGame: smbName, wantSource: "es"},
		{name: "es hook never fires", rom: marioPath, esName: marioStem, wantGame: marioStem, wantSource: "configgen", esHookFails: true},
	}
	var out []scenario
	for _, tc := range cases {
		out = append(out, scenario{name: tc.name, opts: cabinetOptions{MinSessionSeconds: 1}, run: func(c *cabinet) {
			t := c.t
			c.fire("start")
			c.waitState("activity", "menu")
			playTimeBefore := atoi(t, c.lastRetained()[c.topic("play_time")])

			var live func()
			if !tc.esHookFails {
				// Without ES's hook nothing publishes while the game runs:
				// configgen's hook never touches the network.
				live = func() {
					c.waitState("now_playing", tc.wantGame)
					c.waitState("playing", "ON")
					c.waitState("activity", "playing")
				}
			}
			c.launch(tc.rom, tc.esName, 1500*time.Millisecond, live)
			if failed := strings.Contains(c.esStderrSince(), "Syntax error"); failed != tc.esHookFails {
				t.Fatalf("ES game-start failed in sh: %v, want %v (ES stderr %q)", failed, tc.esHookFails, c.esStderrSince())
			}
			c.waitSessionEvents("session_end", 1)
			c.waitQuiet()

			got := c.checkStates(map[string]string{
				"now_playing": "Idle", "playing": "OFF", "now_playing_system": "None",
				"last_session": tc.wantGame, "activity": "menu", "screensaver": "OFF", "status": "online",
			})
			if pt := atoi(t, got[c.topic("play_time")]); pt < playTimeBefore+1 {
				t.Errorf("play_time = %d, want at least %d + 1", pt, playTimeBefore)
			}
			starts := ofType(c.sessionEvents(), "session_start")
			ends := ofType(c.sessionEvents(), "session_end")
			if len(starts) != 1 || len(ends) != 1 {
				t.Fatalf("session events %v, want one session_start and one session_end", types(c.sessionEvents()))
			}
			s, e := starts[0], ends[0]
			if s.SessionID == "" || s.SessionID != e.SessionID {
				t.Errorf("session ids: start %q end %q, want the same", s.SessionID, e.SessionID)
			}
			if e.Game != tc.wantGame || e.System != "nes" || e.Rom != tc.rom || e.Source != tc.wantSource {
				t.Errorf("session_end = %s, want game %q system nes rom %q source %q", e.raw, tc.wantGame, tc.rom, tc.wantSource)
			}
			if e.DurationS == nil || *e.DurationS < 1 {
				t.Errorf("session_end duration_s = %v, want >= 1: %s", e.DurationS, e.raw)
			}
			if attrs := got[c.topic("last_session/attributes")]; !strings.Contains(attrs, `"session_id":"`+e.SessionID+`"`) {
				t.Errorf("last_session attributes %s do not name session %s", attrs, e.SessionID)
			}
			for _, ce := range c.cabinetEvents() {
				if ce.EventType != "start" {
					t.Errorf("cabinet event %s during a game session", ce.raw)
				}
			}
		}})
	}
	return out
}

func shortSessionScenario() scenario {
	return scenario{name: "short session", opts: cabinetOptions{MinSessionSeconds: 60}, run: func(c *cabinet) {
		t := c.t
		c.fire("start")
		c.waitState("activity", "menu")
		c.waitQuiet()
		before := c.broker.Retained(t)

		c.launch(smbPath, smbName, 500*time.Millisecond, func() {
			c.waitState("now_playing", smbName)
			c.waitState("playing", "ON")
			c.waitState("now_playing_system", "nes")
			c.waitState("activity", "playing")
		})
		c.waitState("now_playing", "Idle")
		c.flushFinal()

		c.checkStates(map[string]string{
			"now_playing": "Idle", "playing": "OFF", "activity": "menu", "status": "online",
			"last_session":            before[c.topic("last_session")],
			"last_session/attributes": before[c.topic("last_session/attributes")],
			"last_session_length":     before[c.topic("last_session_length")],
			"play_time":               before[c.topic("play_time")],
		})
		evs := c.sessionEvents()
		if n := len(ofType(evs, "session_end")); n != 0 {
			t.Errorf("%d session_end for a short session, want none: %v", n, types(evs))
		}
		if n := len(ofType(evs, "session_start")); n != 1 {
			t.Errorf("%d session_start, want 1 (the start is live; only logging waits for the length): %v", n, types(evs))
		}
	}}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a whole number", s)
	}
	return n
}

// flushFinal makes every pending outcome final the way the hook's detached
// flusher does: once the tracker's 3 s reorder window has passed since the
// last event, `cabinet hook --flush-after` applies no event and publishes.
func (c *cabinet) flushFinal() {
	c.t.Helper()
	c.waitQuiet()
	since := time.Now()
	cabinettest.Await(c.t, "the reorder window to pass", nil, func() (bool, string) {
		return time.Since(since) > 3500*time.Millisecond, "still inside the window"
	})
	if r := c.hook("--flush-after", "1ms"); r.Err != nil || len(r.Stdout) != 0 {
		c.t.Fatalf("flush: err %v stdout %q", r.Err, r.Stdout)
	}
}
