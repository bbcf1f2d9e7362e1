package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/hook/tracker"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakeinput"
	"github.com/batocera-cabinet/cabinet/simulator/faketools"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// withSystem gives the rig's cabinet batocera-audio (at 60 %, not muted),
// a game pad list (one pad, 80 %), Batocera's update check (publishing
// 43) and this machine's /proc, and returns the fake pads.
func withSystem(t *testing.T, r *rig) *fakeinput.Input {
	t.Helper()
	root := r.cab.Path("/")
	if err := faketools.InstallAudio(root, 60, false); err != nil {
		t.Fatal(err)
	}
	if err := faketools.InstallUpdateCheck(root, "43 2026/05/14 10:00", false); err != nil {
		t.Fatal(err)
	}
	in, err := fakeinput.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Connect("Wireless Controller", "a0:ab:51:00:00:01", 80); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.cfg.System = System{Proc: "/proc", Sys: in.Sys(), InputDevices: in.InputDevices(),
		Audio: r.cab.Path("/" + faketools.AudioBin), Upgrade: r.cab.Path("/" + faketools.UpgradeBin)}
	r.mu.Unlock()
	return in
}

// TestSystemEntities: a cabinet with batocera-audio, game pads and the
// update check announces volume, mute, controllers and the OS update and
// gives each a state; the volume follows a change made on the cabinet and
// Home Assistant's slider and switch; pads coming and going are events.
func TestSystemEntities(t *testing.T) {
	var in *fakeinput.Input
	r := newRig(t, nil, func(r *rig) { in = withSystem(t, r) })
	s := r.d.config().Rules.Settings
	root := r.cab.Path("/")
	for _, e := range []struct{ component, key string }{
		{haentities.ComponentNumber, haentities.Volume}, {haentities.ComponentSwitch, haentities.Mute},
		{haentities.ComponentSensor, haentities.Controllers}, {haentities.ComponentEvent, haentities.Controller},
		{haentities.ComponentUpdate, haentities.OSUpdate}, {haentities.ComponentSensor, haentities.PowerState},
		{haentities.ComponentSensor, haentities.LastBoot}, {haentities.ComponentSensor, haentities.Load},
		{haentities.ComponentSensor, haentities.MemoryUsed},
	} {
		r.retained(s.ConfigTopic(e.component, e.key), func(v string) bool { return v != "" })
	}
	is := func(want string) func(string) bool { return func(v string) bool { return v == want } }
	r.retained(s.StateTopic(haentities.Volume), is("60"))
	r.retained(s.StateTopic(haentities.Mute), is("OFF"))
	r.retained(s.StateTopic(haentities.PowerState), is(haentities.PowerRunning))
	r.retained(s.StateTopic(haentities.Controllers), is("1"))
	r.retained(s.AttributesTopic(haentities.Controllers), is(`{"names":["Wireless Controller"],"batteries":{"Wireless Controller":80}}`))
	r.retained(s.StateTopic(haentities.OSUpdate), is(`{"installed_version":"42","title":"Batocera"}`))

	// Home Assistant's slider and switch act through batocera-audio.
	r.press(haentities.Volume, "35.0")
	r.retained(s.StateTopic(haentities.Volume), is("35"))
	r.press(haentities.Mute, "ON")
	r.retained(s.StateTopic(haentities.Mute), is("ON"))
	if level, muted, err := faketools.ReadAudio(root); err != nil || level != 35 || !muted {
		t.Errorf("batocera-audio: level %d muted %v (%v), want 35 and muted", level, muted, err)
	}
	r.press(haentities.Volume, "250")
	r.logged("HA command refused", map[string]string{"reason": "from 0 to 100"})
	// Changed on the cabinet itself: seen at the next reading.
	if err := faketools.SetAudio(root, 90, false); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(sensors.VolumePoll)
	r.retained(s.StateTopic(haentities.Volume), is("90"))
	r.retained(s.StateTopic(haentities.Mute), is("OFF"))

	// A second pad connects, its battery drops, the first goes away.
	if err := in.Connect("Pro Controller", "a0:ab:51:00:00:02", -1); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(sensors.PadsPoll)
	r.retained(s.StateTopic(haentities.Controllers), is("2"))
	if err := in.Disconnect("a0:ab:51:00:00:01"); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(sensors.PadsPoll)
	r.retained(s.AttributesTopic(haentities.Controllers), is(`{"names":["Pro Controller"]}`))
	// The disconnection's event follows the attributes above: wait for it, not for them.
	want := []string{`{"event_type":"connected","name":"Pro Controller"}`, `{"event_type":"disconnected","name":"Wireless Controller"}`}
	var events []string
	cabinettest.Await(t, "the controller events", r.broker.Changed, func() bool {
		events = events[:0]
		for _, m := range r.broker.Messages() {
			if m.Topic == s.StateTopic(haentities.Controller) {
				if m.Retain {
					events = append(events, "retained: "+string(m.Payload))
				} else {
					events = append(events, string(m.Payload))
				}
			}
		}
		return len(events) >= len(want)
	})
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("controller events:\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}

	// Batocera's update check answers 10 minutes after start.
	r.clock.Advance(sensors.UpdateFirst)
	r.retained(s.StateTopic(haentities.OSUpdate), is(`{"installed_version":"42","latest_version":"43 2026/05/14 10:00","title":"Batocera"}`))
	validate(t, r.capture())
}

// TestNoDeadEntities: a cabinet without a thermal zone, batocera-audio, an
// input device list, the update check or a batocera.version announces none
// of their entities; one that loses them (found again at the next reading
// of the configuration) removes what it announced.
func TestNoDeadEntities(t *testing.T) {
	r := newRig(t, nil, func(r *rig) { withSystem(t, r) })
	s := r.d.config().Rules.Settings
	backed := []struct{ component, key string }{
		{haentities.ComponentSensor, haentities.CPUTemperature}, {haentities.ComponentSensor, haentities.BatoceraVersion},
		{haentities.ComponentNumber, haentities.Volume}, {haentities.ComponentSwitch, haentities.Mute},
		{haentities.ComponentSensor, haentities.Controllers}, {haentities.ComponentEvent, haentities.Controller},
		{haentities.ComponentUpdate, haentities.OSUpdate},
	}
	for _, e := range backed {
		r.retained(s.ConfigTopic(e.component, e.key), func(v string) bool { return v != "" })
	}
	zones, _ := filepath.Glob(r.cab.Path("/sys/class/thermal/thermal_zone*/temp"))
	for _, z := range zones {
		os.Remove(z)
	}
	r.reconfigure(func(c *Config) {
		c.Rules.Settings.BatoceraVersion = ""
		c.System.Audio, c.System.InputDevices, c.System.Upgrade = "", "", ""
	})
	for _, e := range backed {
		topic := s.ConfigTopic(e.component, e.key)
		cabinettest.Await(t, "cleared "+topic, r.broker.Changed, func() bool {
			_, found := r.broker.Retained(topic)
			return !found
		})
	}
	r.retained(s.StateTopic(haentities.PowerState), func(v string) bool { return v == haentities.PowerRunning })
}

// TestPowerState follows sensor.power_state through ES's events, as the
// hooks hand them over: a plain quit is ES restarting and its start is
// running again; a reboot's and a shutdown's quit say so, and a late plain
// quit does not undo them; an event of an earlier boot is ignored.
func TestPowerState(t *testing.T) {
	r := newRig(t, nil, nil)
	topic := r.settings.StateTopic(haentities.PowerState)
	is := func(want string) func(string) bool { return func(v string) bool { return v == want } }
	r.retained(topic, is(haentities.PowerRunning))
	hook := func(kind tracker.Kind, arg, boot string) {
		t.Helper()
		ev := r.stamp().Event(kind, tracker.SourceES)
		ev.Arg = arg
		if boot != "" {
			ev.BootID = boot
		}
		r.deliver(ev)
	}
	hook(tracker.KindQuit, "", "")
	r.retained(topic, is(haentities.PowerRestartingES))
	hook(tracker.KindStart, "", "")
	r.retained(topic, is(haentities.PowerRunning))
	hook(tracker.KindQuit, "shutdown", "an-earlier-boot")
	hook(tracker.KindQuit, "reboot", "")
	r.retained(topic, is(haentities.PowerRebooting))
	hook(tracker.KindQuit, "", "")
	hook(tracker.KindShutdown, "", "")
	r.retained(topic, is(haentities.PowerShuttingDown))
	var seen []string
	for _, m := range r.broker.Messages() {
		if m.Topic == topic {
			seen = append(seen, string(m.Payload))
		}
	}
	want := []string{haentities.PowerRunning, haentities.PowerRestartingES, haentities.PowerRunning, haentities.PowerRebooting, haentities.PowerShuttingDown}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("power states %v, want %v", seen, want)
	}
}
