package tools

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// powerRig is the tools rig with batocera_power over the fake ES, through
// the real runner and power client; lock is the install lock file.
func powerRig(t *testing.T, opts Options) (r *rig, lock string) {
	t.Helper()
	lock = filepath.Join(t.TempDir(), "install.lock")
	r = newRig(t, rigConfig{opts: opts, deps: func(d *Deps) {
		esc := d.ES.(*es.Client)
		d.Power = &power.Runner{ES: esc, Routes: es.NewPowerClient(esc), Busy: install.BusyCheck(lock)}
	}})
	return r, lock
}

// quitRoutes are what the fake ES got of /quit, /restart, /shutdown and
// /emukill, in order.
func quitRoutes(r *rig) string {
	var got []string
	for _, c := range r.es.Calls() {
		switch c.Route {
		case fakees.RouteQuit, fakees.RouteRestart, fakees.RouteShutdown, fakees.RouteEmuKill:
			got = append(got, c.Route)
		}
	}
	return strings.Join(got, ",")
}

func TestPowerWithoutConfirmSendsNothing(t *testing.T) {
	r, _ := powerRig(t, Options{})
	for _, tc := range []struct {
		action, detail, sent string
	}{
		{"shutdown", "Would shut down the cabinet, as the Quit menu of EmulationStation does. Nothing was sent: ask " +
			"the user, then call again with confirm: true.", "GET /shutdown"},
		{"reboot", "Would restart the cabinet", "GET /restart"},
		{"restart_es", "Would restart EmulationStation", "GET /quit"},
	} {
		for _, args := range []map[string]any{{"action": tc.action}, {"action": tc.action, "confirm": false}} {
			a := r.action("batocera_power", args)
			if a.Outcome != outcomeDryRun || !strings.HasPrefix(a.Detail, tc.detail) || strings.Join(a.Sent, ",") != tc.sent {
				t.Errorf("%v: %+v, want dry_run %q sending %s", args, a, tc.detail, tc.sent)
			}
		}
	}
	tetris := r.launch("nes", "Tetris")
	a := r.action("batocera_power", map[string]any{"action": "shutdown"})
	if !strings.HasPrefix(a.Detail, "Would quit Tetris (nes) first (unsaved progress is lost), then shut down the cabinet") ||
		strings.Join(a.Sent, ",") != "GET /emukill,GET /shutdown" {
		t.Errorf("during a game: %+v", a)
	}
	if g, ok := r.es.Running(); !ok || g.ID != tetris.ID {
		t.Error("the game no longer runs after an unconfirmed call")
	}
	if got := quitRoutes(r); got != "" {
		t.Errorf("unconfirmed calls sent %s", got)
	}
	// Unconfirmed calls spend no rate-limit token: two confirmed ones still pass.
	r.es.EndGame(0)
	for range 2 {
		if a := r.action("batocera_power", map[string]any{"action": "restart_es", "confirm": true}); a.Outcome != outcomeDone {
			t.Errorf("confirmed after unconfirmed ones: %+v", a)
		}
	}
}

func TestPowerConfirmed(t *testing.T) {
	r, _ := powerRig(t, Options{})
	a := r.action("batocera_power", map[string]any{"action": "shutdown", "confirm": true})
	if a.Outcome != outcomeDone || !strings.HasPrefix(a.Detail, "Asked EmulationStation to shut down the cabinet, as its Quit menu does") ||
		strings.Join(a.Sent, ",") != "GET /shutdown" {
		t.Errorf("shutdown: %+v", a)
	}
	if got := quitRoutes(r); got != "shutdown" {
		t.Errorf("ES got %s, want shutdown", got)
	}

	r.clock.Advance(time.Minute)
	r.launch("snes", "Chrono Trigger")
	a = r.action("batocera_power", map[string]any{"action": "reboot", "confirm": true})
	if a.Outcome != outcomeDone || !strings.HasPrefix(a.Detail, "Quit Chrono Trigger (snes), then asked EmulationStation to restart the cabinet") ||
		strings.Join(a.Sent, ",") != "GET /emukill,GET /restart" {
		t.Errorf("reboot during a game: %+v", a)
	}
	if _, ok := r.es.Running(); ok {
		t.Error("the game still runs after the reboot was sent")
	}
	if got := quitRoutes(r); got != "shutdown,emukill,restart" {
		t.Errorf("ES got %s, want shutdown, then emukill and restart", got)
	}
}

func TestPowerRateLimit(t *testing.T) {
	r, _ := powerRig(t, Options{})
	confirm := map[string]any{"action": "restart_es", "confirm": true}
	r.action("batocera_power", confirm)
	r.action("batocera_power", confirm)
	msg := r.refused("batocera_power", confirm)
	if want := "Rate limit: refusing to restart EmulationStation (try again in 30s)"; !strings.HasPrefix(msg, want) {
		t.Errorf("third call: %q, want %q", msg, want)
	}
	if a := r.action("batocera_power", map[string]any{"action": "restart_es"}); a.Outcome != outcomeDryRun {
		t.Errorf("an unconfirmed call while limited: %+v", a)
	}
	r.clock.Advance(30 * time.Second)
	r.action("batocera_power", confirm)
	if n := r.es.CallCount(fakees.RouteQuit); n != 3 {
		t.Errorf("ES got %d /quit, want 3", n)
	}
}

func TestPowerDryRun(t *testing.T) {
	r, _ := powerRig(t, Options{DryRun: true})
	if err := r.es.Launch("nes", r.game("nes", "Tetris").ID); err != nil { // the tool would only say it would
		t.Fatal(err)
	}
	cabinettest.Await(t, "the game to run", nil, func() bool { _, ok := r.es.Running(); return ok })
	a := r.action("batocera_power", map[string]any{"action": "shutdown", "confirm": true})
	if a.Outcome != outcomeDryRun || !strings.HasPrefix(a.Detail, "Would quit Tetris (nes) first") ||
		strings.Join(a.Sent, ",") != "GET /emukill,GET /shutdown" {
		t.Errorf("dry run: %+v", a)
	}
	if got := quitRoutes(r); got != "" {
		t.Errorf("a dry run sent %s", got)
	}
}

func TestPowerRefusedWhileInstalling(t *testing.T) {
	r, lock := powerRig(t, Options{})
	f, err := os.Create(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{{"action": "shutdown"}, {"action": "shutdown", "confirm": true}} {
		msg := r.refused("batocera_power", args)
		if want := "Refusing to shut down the cabinet: a library install or uninstall is writing to the cabinet: try again " +
			"when it is done."; msg != want {
			t.Errorf("%v while installing:\n got  %q\n want %q", args, msg, want)
		}
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if a := r.action("batocera_power", map[string]any{"action": "shutdown", "confirm": true}); a.Outcome != outcomeDone {
		t.Errorf("after the install: %+v", a)
	}
	if got := quitRoutes(r); got != "shutdown" {
		t.Errorf("ES got %s, want one shutdown after the install", got)
	}
}

func TestPowerESDown(t *testing.T) {
	r, _ := powerRig(t, Options{})
	r.esDown()
	for _, args := range []map[string]any{{"action": "reboot"}, {"action": "reboot", "confirm": true}} {
		msg := r.refused("batocera_power", args)
		if !strings.HasPrefix(msg, "Cannot restart the cabinet: EmulationStation is not answering, so nothing was sent: "+
			"use the Quit menu on the cabinet itself") {
			t.Errorf("%v with ES down: %q", args, msg)
		}
	}
}

// noKill is ES whose /emukill finds nothing to kill, as the swissknife
// does for a game not started by emulatorlauncher: the request is
// recorded, the game goes on.
type noKill struct{ *es.Client }

func (n noKill) EmuKill(context.Context) error { return nil }

// TestPowerGameDoesNotQuit: a game still running after /emukill: nothing
// else is sent, and the refusal says so.
func TestPowerGameDoesNotQuit(t *testing.T) {
	r := newRig(t, rigConfig{deps: func(d *Deps) {
		esc := d.ES.(*es.Client)
		d.Power = &power.Runner{ES: noKill{esc}, Routes: es.NewPowerClient(esc), QuitWait: 300 * time.Millisecond}
	}})
	g := r.game("nes", "Tetris")
	if err := r.es.Launch("nes", g.ID); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "the game to run", nil, func() bool { _, ok := r.es.Running(); return ok })
	msg := r.refused("batocera_power", map[string]any{"action": "shutdown", "confirm": true})
	if !strings.HasPrefix(msg, "Cannot shut down the cabinet: Tetris (nes) is still running 300ms after GET /emukill: the "+
		"running game did not quit, so nothing else was sent") || !strings.HasSuffix(msg, "Sent: GET /emukill.") {
		t.Errorf("refusal %q", msg)
	}
	if got := quitRoutes(r); got != "" {
		t.Errorf("ES got %s, want nothing (this ES's /emukill is a stand-in)", got)
	}
	if _, ok := r.es.Running(); !ok {
		t.Error("the game stopped")
	}
}

func TestPowerRegistration(t *testing.T) {
	has := func(s *Server) bool { return slices.Contains(s.ToolNames(), "batocera_power") }
	if r := newRig(t, rigConfig{}); has(r.srv) {
		t.Error("batocera_power registered without Deps.Power")
	}
	r, _ := powerRig(t, Options{})
	if !has(r.srv) {
		t.Error("batocera_power not registered with Deps.Power")
	}
	if r, _ := powerRig(t, Options{ReadOnly: true}); has(r.srv) {
		t.Error("batocera_power registered in read-only mode")
	}
	// cabinet.mcp.power and read_only as the daemon builds the server: daemon/links TestPowerSwitch.
}
