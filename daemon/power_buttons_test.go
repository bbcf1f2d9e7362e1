package daemon

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// powerCalls are the fake ES's quit, reboot, shutdown and emukill calls,
// in order.
func powerCalls(es *fakees.Server) string {
	var got []string
	for _, c := range es.Calls() {
		switch c.Route {
		case fakees.RouteQuit, fakees.RouteRestart, fakees.RouteShutdown, fakees.RouteEmuKill:
			got = append(got, c.Route)
		}
	}
	return strings.Join(got, ",")
}

// TestPowerButtons drives the power buttons the way Home Assistant does:
// off without cabinet.ha.power; with it, a first press only asks on screen,
// a second one within 10 s does what ES's Quit menu does (a running game
// quit first), a late second press is a first press again, and nothing
// happens while a library install writes.
func TestPowerButtons(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.Tools.InstallLock = c.Layout.InstallLock()
	}, nil)
	s := r.settings
	r.retained(s.AvailabilityTopic(), func(v string) bool { return v == haentities.Online })
	for _, e := range haentities.PowerButtons() {
		if _, ok := r.broker.Retained(s.ConfigTopic(e.Component, e.Key)); ok {
			t.Errorf("power button %s announced with cabinet.ha.power off", e.Key)
		}
	}

	r.reconfigure(func(c *Config) { c.Rules.Settings.Power = true })
	// The new settings bring a new MQTT link, subscribed to the command
	// topics before it announces itself; the configs may have gone out
	// through the old one.
	// A harmless malformed press, repeated until the daemon logs it, shows
	// the command subscription is live before the real presses.
	cabinettest.Await(t, "the command topics subscribed", r.logs.written, func() (bool, string) {
		r.press(haentities.Shutdown, "probe")
		return len(r.logs.entries("HA command ignored")) > 0, "no command handled yet"
	})

	r.settings = r.d.config().Rules.Settings
	s = r.settings
	for _, e := range haentities.PowerButtons() {
		r.retained(s.ConfigTopic(e.Component, e.Key), func(v string) bool {
			return strings.Contains(v, `"entity_category":"config"`) && strings.Contains(v, `"command_topic":"`+s.CommandTopic(e.Key)+`"`)
		})
	}
	prompt := (&power.Presses{}).Prompt(power.Shutdown)

	// One press: the question on screen (ES's notification: no game runs), nothing sent.
	r.press(haentities.Shutdown, haentities.PayloadPress)
	r.logged("HA power button: first press, waiting for a second one", map[string]string{"action": "shutdown"})
	r.waitLog("the prompt on screen", func() bool { return esNotified(r.cab.ES, prompt) })
	if got := powerCalls(r.cab.ES); got != "" {
		t.Fatalf("one press sent %s", got)
	}
	// The second press after the window is a first press again.
	r.clock.Advance(power.DefaultWindow + 1)
	r.press(haentities.Shutdown, haentities.PayloadPress)
	r.waitLog("a second first press", func() bool {
		return len(r.logs.entries("HA power button: first press, waiting for a second one")) == 2
	})
	if got := powerCalls(r.cab.ES); got != "" {
		t.Fatalf("a late second press sent %s", got)
	}
	// A malformed press changes nothing (the probes above were some).
	r.press(haentities.Shutdown, "press")

	// While an install writes: refused, nothing sent.
	lock, err := os.OpenFile(r.cfg.Tools.InstallLock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	r.press(haentities.Shutdown, haentities.PayloadPress)
	r.logged("HA power refused", map[string]string{"action": "shutdown", "reason": "library install"})
	if got := powerCalls(r.cab.ES); got != "" {
		t.Fatalf("a press during an install sent %s", got)
	}
	lock.Close()

	// A game runs: two presses quit it, then ask ES to shut down.
	game := r.cab.Library.Games("nes")[0]
	if err := r.cab.ES.Launch("nes", game.ID); err != nil {
		t.Fatal(err)
	}
	waitRA(t, r.cab.RetroArch, "game loaded", func(s fakeretroarch.Snapshot) bool { return s.Loaded && s.Listening })
	r.press(haentities.Shutdown, haentities.PayloadPress)
	r.press(haentities.Shutdown, haentities.PayloadPress)
	r.logged("HA power", map[string]string{"action": "shutdown", "detail": "then asked EmulationStation to shut down the cabinet"})
	if got := powerCalls(r.cab.ES); got != "emukill,shutdown" {
		t.Errorf("ES got %q, want emukill,shutdown", got)
	}
}
