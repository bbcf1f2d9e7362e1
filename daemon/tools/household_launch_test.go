package tools

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// oneLaunch allows one launch or quit an hour: a token spent shows.
var oneLaunch = Options{Limits: Limits{LaunchQuit: Bucket{Burst: 1, Every: time.Hour}}}

// TestLaunchRefusedByTheRules: a launch the rules would end at once is
// refused before anything is looked up or sent, and spends no token; when
// the rules cannot be read the launch goes ahead with a warning.
func TestLaunchRefusedByTheRules(t *testing.T) {
	f := newFakeHousehold(onAt60())
	f.used = 60
	r := householdRig(t, oneLaunch, f)
	tetris := r.game("nes", "Tetris")
	args := map[string]any{"system": "nes", "game_id": tetris.ID}
	for range 3 {
		msg := r.refused("batocera_launch_game", args)
		if want := "The household's play-time rules do not allow a game now: Time is up for today. Only a parent can " +
			"give extra time or change the rules."; msg != want {
			t.Errorf("refusal %q, want %q", msg, want)
		}
	}
	f.set(func(f *fakeHousehold) { f.used, f.paused = 0, true })
	if msg := r.refused("batocera_launch_game", args); !strings.Contains(msg, "do not allow a game now: Play is paused.") {
		t.Errorf("paused: %q", msg)
	}
	if calls := r.es.Calls(); len(calls) != 0 {
		t.Errorf("refused launches reached ES: %+v", calls)
	}
	// Rules off: a refusal in the report does not count.
	f.set(func(f *fakeHousehold) { f.values[hp+"enabled"] = "0" })
	if a := r.action("batocera_launch_game", args); a.Outcome != outcomeDone || len(a.Warnings) != 0 {
		t.Fatalf("launch with the rules off (the one token): %+v", a)
	}
	if _, err := r.srv.QuitForRules(cabinettest.Context(t)); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Hour)
	f.set(func(f *fakeHousehold) { f.err = errors.New("store closed") })
	a := r.action("batocera_launch_game", args)
	if a.Outcome != outcomeDone || len(a.Warnings) != 1 ||
		a.Warnings[0] != "Could not read the household's play-time rules (store closed); the cabinet applies them once the game starts." {
		t.Errorf("launch with the rules unreadable: %+v", a)
	}
}

func TestQuitForRules(t *testing.T) {
	t.Run("rate limit spent", func(t *testing.T) {
		r := newRig(t, rigConfig{opts: oneLaunch})
		r.launchDirect("snes", "Chrono Trigger")
		if a, err := r.srv.QuitForRules(cabinettest.Context(t)); err != nil || a.Outcome != outcomeDone {
			t.Fatalf("QuitForRules: %+v, %v", a, err)
		}
		r.launch("nes", "Tetris") // the one token: QuitForRules spent none
		if msg := r.refused("batocera_quit_game", nil); !strings.HasPrefix(msg, "Rate limit: refusing to quit Tetris (nes)") {
			t.Fatalf("quit tool: %q, want the rate limit", msg)
		}
		a, err := r.srv.QuitForRules(cabinettest.Context(t))
		if err != nil || a.Outcome != outcomeDone || a.Detail != "Quit Tetris (nes)." || strings.Join(a.Sent, "|") != "GET /emukill" {
			t.Fatalf("QuitForRules: %+v, %v", a, err)
		}
		if _, ok := r.es.Running(); ok {
			t.Error("the game still runs")
		}
		if n := r.es.CallCount(fakees.RouteEmuKill); n != 2 {
			t.Errorf("emukill calls %d, want 2", n)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		r := newRig(t, rigConfig{opts: Options{DryRun: true}})
		r.launchDirect("snes", "Chrono Trigger")
		if a := r.action("batocera_quit_game", nil); a.Outcome != outcomeDryRun {
			t.Fatalf("quit tool in a dry run: %+v", a)
		}
		a, err := r.srv.QuitForRules(cabinettest.Context(t))
		if err != nil || a.Outcome != outcomeDone || a.Detail != "Quit Chrono Trigger (snes)." {
			t.Fatalf("QuitForRules: %+v, %v", a, err)
		}
		if _, ok := r.es.Running(); ok {
			t.Error("the game still runs")
		}
		if n := r.es.CallCount(fakees.RouteEmuKill); n != 1 {
			t.Errorf("emukill calls %d, want 1", n)
		}
	})
	t.Run("no game shown", func(t *testing.T) {
		r := newRig(t, rigConfig{})
		a, err := r.srv.QuitForRules(cabinettest.Context(t))
		want := ActionResult{Cabinet: "Game Room", Outcome: outcomeDone, Detail: "EmulationStation showed no game running; " +
			"sent /emukill in case one was starting.", Sent: []string{"GET /emukill"}, Warnings: []string{}}
		if err != nil || mustJSON(t, a) != mustJSON(t, want) {
			t.Errorf("QuitForRules: %+v, %v; want %+v", a, err, want)
		}
		if n := r.es.CallCount(fakees.RouteEmuKill); n != 1 {
			t.Errorf("emukill calls %d, want 1", n)
		}
	})
	t.Run("ES down", func(t *testing.T) {
		r := newRig(t, rigConfig{})
		r.esDown()
		if _, err := r.srv.QuitForRules(cabinettest.Context(t)); err == nil ||
			!strings.Contains(err.Error(), "EmulationStation is not answering") {
			t.Errorf("QuitForRules with ES down: %v", err)
		}
	})
}
