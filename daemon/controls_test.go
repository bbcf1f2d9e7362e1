package daemon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestHAControls drives the daemon the way Home Assistant does, with
// cabinet.ha.controls on: button presses and notify messages on the
// command topics reach the simulated cabinet through the MCP tools, with
// their refusals, and everything else is ignored and logged.
func TestHAControls(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Rules.Settings.Controls = true }, func(r *rig) {
		// Left on the broker by a misconfigured automation: a cabinet must
		// not replay it when it subscribes.
		if err := r.broker.Publish(r.settings.CommandTopic(haentities.ShowMessage), []byte("RETAINED"), true); err != nil {
			t.Fatal(err)
		}
	})
	s := r.settings
	r.retained(s.AvailabilityTopic(), func(v string) bool { return v == haentities.Online })
	for _, e := range haentities.Controls() {
		r.retained(s.ConfigTopic(e.Component, e.Key), func(v string) bool {
			return strings.Contains(v, `"command_topic":"`+s.CommandTopic(e.Key)+`"`)
		})
	}
	r.logged("mqtt: ignoring a retained command (clear it on the broker)", map[string]string{"topic": "/show_message/set"})

	// No game runs: a pause is refused, with the tool's own words.
	r.press(haentities.PauseGame, haentities.PayloadPress)
	r.logged("HA control refused", map[string]string{"tool": "batocera_pause_game", "reason": "no game is running"})
	// A message goes to ES's notification.
	r.press(haentities.ShowMessage, "Dinner is ready")
	r.waitLog("ES notification", func() bool { return esNotified(r.cab.ES, "Dinner is ready") })

	// A libretro game runs: pause pauses it in RetroArch.
	game := r.cab.Library.Games("nes")[0]
	if err := r.cab.ES.Launch("nes", game.ID); err != nil {
		t.Fatal(err)
	}
	waitRA(t, r.cab.RetroArch, "game loaded", func(s fakeretroarch.Snapshot) bool { return s.Loaded && s.Listening })
	r.press(haentities.PauseGame, haentities.PayloadPress)
	waitRA(t, r.cab.RetroArch, "paused", func(s fakeretroarch.Snapshot) bool { return s.Paused })
	r.logged("HA control", map[string]string{"tool": "batocera_pause_game", "outcome": "done"})

	// Malformed commands change nothing; the good one after them (commands
	// run in order) proves they were handled first.
	r.press(haentities.PauseGame, "press")
	r.press(haentities.ShowMessage, "two\nlines")
	r.press(haentities.ShowMessage, strings.Repeat("x", 201))
	r.publish(s.CommandTopic("reboot"), haentities.PayloadPress)
	r.press(haentities.ShowMessage, "Over the game")
	snap := waitRA(t, r.cab.RetroArch, "message over the game", func(s fakeretroarch.Snapshot) bool {
		return slices.Contains(s.Messages, "Over the game")
	})
	if !snap.Paused || len(snap.Messages) != 1 {
		t.Errorf("after malformed commands: paused=%v messages=%q, want paused and only the good message", snap.Paused, snap.Messages)
	}
	if n := len(r.logs.entries("HA command ignored")); n != 4 {
		t.Errorf("%d 'HA command ignored' lines, want 4:\n%s", n, r.logs.String())
	}

	// Quit ends the game in ES.
	r.press(haentities.QuitGame, haentities.PayloadPress)
	r.waitLog("game quit", func() bool { _, running := r.cab.ES.Running(); return !running })
	r.logged("HA control", map[string]string{"tool": "batocera_quit_game", "outcome": "done"})

	if esNotified(r.cab.ES, "RETAINED") || slices.Contains(r.cab.RetroArch.Snapshot().Messages, "RETAINED") {
		t.Error("the retained command was carried out")
	}
	for _, text := range []string{"Dinner is ready", "Over the game", "two"} {
		if strings.Contains(r.logs.String(), text) {
			t.Errorf("the log shows message text %q", text)
		}
	}
	validate(t, r.capture())

	// Controls off: their configs are cleared (empty retained payloads
	// remove them from the broker, and the entities from HA).
	r.reconfigure(func(c *Config) { c.Rules.Settings.Controls = false })
	for _, e := range haentities.Controls() {
		topic := s.ConfigTopic(e.Component, e.Key)
		cabinettest.Await(t, "cleared "+topic, r.broker.Changed, func() bool { _, ok := r.broker.Retained(topic); return !ok })
	}
	if _, ok := r.broker.Retained(s.ConfigTopic(haentities.ComponentSensor, haentities.CPUTemperature)); !ok {
		t.Error("turning the controls off cleared the diagnostics too")
	}
}

// TestDiagnosticsPublished checks the diagnostic states the daemon
// publishes against the simulated tree (thermal zone 47 °C, Batocera 42),
// without controls: their configs are then never announced.
func TestDiagnosticsPublished(t *testing.T) {
	r := newRig(t, nil, nil)
	s := r.settings
	num := func(v string) bool { _, err := strconv.ParseFloat(v, 64); return err == nil }
	checks := []struct {
		key string
		ok  func(string) bool
	}{
		{haentities.CPUTemperature, func(v string) bool { return v == "47.0" }},
		{haentities.FreeSpace, func(v string) bool { f, err := strconv.ParseFloat(v, 64); return err == nil && f > 0 }},
		{haentities.BatoceraVersion, func(v string) bool { return v == "42" }},
		{haentities.CabinetVersion, func(v string) bool { return v == "9.9.9-test" }},
		{haentities.OutboxDepth, num},
		{haentities.OutboxDropped, func(v string) bool { return v == "0" }},
		{haentities.MQTTReconnects, func(v string) bool { return v == "0" }},
	}
	for _, c := range checks {
		r.retained(s.ConfigTopic(haentities.ComponentSensor, c.key), func(v string) bool {
			return strings.Contains(v, `"entity_category":"diagnostic"`) && strings.Contains(v, `"expire_after":180`)
		})
		got := r.retained(s.StateTopic(c.key), func(string) bool { return true })
		if !c.ok(got) {
			t.Errorf("%s = %q", c.key, got)
		}
	}
	for _, e := range haentities.Controls() {
		if _, ok := r.broker.Retained(s.ConfigTopic(e.Component, e.Key)); ok {
			t.Errorf("control %s announced with cabinet.ha.controls off", e.Key)
		}
	}
	validate(t, r.capture())
}

func esNotified(es *fakees.Server, text string) bool {
	for _, c := range es.Calls() {
		if c.Route == fakees.RouteNotify && strings.Contains(c.Body, text) {
			return true
		}
	}
	return false
}

func waitRA(t testing.TB, ra *fakeretroarch.Server, what string, cond func(fakeretroarch.Snapshot) bool) fakeretroarch.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	snap, err := ra.WaitFor(ctx, cond)
	if err != nil {
		t.Fatalf("fake RetroArch %s: %v (last %+v)", what, err, snap)
	}
	return snap
}

// validate runs the strict HA validator on a broker capture.
func validate(t *testing.T, capture []byte) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CABINET_REQUIRE_PEERS") == "1" {
			t.Fatalf("python3 is required (CABINET_REQUIRE_PEERS=1): %v", err)
		}
		t.Log("python3 not found: validate_discovery.py skipped")
		return
	}
	file := filepath.Join(t.TempDir(), "capture.txt")
	if err := os.WriteFile(file, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join("..", "haentities", "testdata", "validate_discovery.py")
	out, err := exec.Command(py, script, "--strict", "--format", "rtp", file).CombinedOutput()
	if err == nil {
		t.Logf("validator: %s", strings.TrimSpace(string(out)))
		return
	}
	// No hook ran, so the event entities fired nothing in this capture:
	// that warning, and only that one, is expected.
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		expected := strings.HasPrefix(line, "WARN [W-NO-MESSAGES] ") && strings.Contains(line, "/event/") ||
			strings.HasSuffix(line, " failed") && !strings.HasPrefix(line, "ERROR") && !strings.HasPrefix(line, "WARN")
		if !expected {
			t.Fatalf("validate_discovery.py --strict: %v\n%s", err, out)
		}
	}
	t.Logf("validator (events silent, as expected): %s", strings.TrimSpace(string(out)))
}
