package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/links"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// logBuffer is the daemon's log, with its JSON lines decoded on demand.
type logBuffer struct{ cabinettest.LogBuffer }

func newLogBuffer() *logBuffer { return &logBuffer{} }

// written is closed at the next line.
func (l *logBuffer) written() <-chan struct{} { return l.Changed() }

// entries returns the log lines whose message is msg, decoded.
func (l *logBuffer) entries(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(l.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["message"] == msg {
			out = append(out, e)
		}
	}
	return out
}

// rig is a simulated cabinet, an embedded broker and the daemon run
// in-process against them, on a fake clock: its timers fire when a test
// advances it. Its configuration is the daemon's own (what cmd/cabinet
// maps the cabinet.* keys to); reconfigure changes it live.
type rig struct {
	t        testing.TB
	cab      *simulator.Cabinet
	broker   *mqttbroker.Broker
	clock    *clock.Fake
	file     string // the watched configuration file
	settings haentities.Settings
	logs     *logBuffer
	d        *Daemon // set once it is ready

	mu  sync.Mutex
	cfg Config
	// fileRules: the loader applies the file's cabinet.household.* keys
	// (householdRig); armed is Options.HouseholdArmed.
	fileRules bool
	armed     func(time.Duration)
	loop      *playLoop // householdRig's view of armed
}

// rigEpoch is the fake clock's start; the boot clock counts from it.
var rigEpoch = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

// newRig starts the simulator and the broker and then the daemon; change
// edits the configuration first, before runs before the daemon starts
// (to leave retained messages).
func newRig(t testing.TB, change func(*Config), before func(*rig)) *rig {
	t.Helper()
	return newRigWith(t, simulator.Options{}, change, before)
}

// newRigWith is newRig with more of the simulator (its fake RomM).
func newRigWith(t testing.TB, so simulator.Options, change func(*Config), before func(*rig)) *rig {
	t.Helper()
	so.LaunchDelay = 50 * time.Millisecond
	cab, err := simulator.Start(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cab.Close() })
	broker, err := mqttbroker.Start(mqttbroker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Close() })
	r := &rig{t: t, cab: cab, broker: broker, clock: clock.NewFake(rigEpoch), logs: newLogBuffer(),
		file: filepath.Join(t.TempDir(), "cabinet.conf")}
	r.cfg = rigConfig(cab, broker)
	if change != nil {
		change(&r.cfg)
	}
	r.settings = r.cfg.Rules.Settings
	r.writeFile()
	if before != nil {
		before(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		done <- Run(ctx, Options{Load: r.load, ConfigFile: r.file, Version: "9.9.9-test", LogOut: r.logs,
			Clock: r.clock, Now: r.stamp, ClockSynced: func(time.Time) bool { return true }, Ready: func(d *Daemon) { r.d = d; close(ready) },
			HouseholdArmed: r.armed})
	}()
	t.Cleanup(func() { // registered last: runs first, before the fakes go
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(cabinettest.Deadline):
			t.Errorf("the daemon did not stop within %v", cabinettest.Deadline)
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", r.logs.String())
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the daemon did not start: %v", err)
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("the daemon was not ready within %v", cabinettest.Deadline)
	}
	return r
}

// rigConfig is what cmd/cabinet maps the simulator's configuration to,
// with MQTT on the broker.
func rigConfig(cab *simulator.Cabinet, broker *mqttbroker.Broker) Config {
	settings := haentities.Settings{ID: "daemon_test", Version: "9.9.9-test", BatoceraVersion: "42", Daemon: true}
	p := tools.DefaultPaths().Resolve(cab.Path)
	p.LoadAvg, p.MemInfo, p.Uptime = "/proc/loadavg", "/proc/meminfo", "/proc/uptime"
	return Config{
		Layout:      paths.Layout{State: cab.Path("/userdata/system/cabinet"), Run: cab.Path("/var/run/cabinet")},
		Rules:       journal.Rules{Settings: settings, Tracker: tracker.DefaultConfig(), Publishing: true},
		MQTT:        mqttlink.Options{Broker: broker.URL(), ClientID: "cabinet_daemon_test"},
		BirthTopic:  "homeassistant/status",
		Tools:       links.Settings{ESURL: cab.ESURL(), RetroArchAddr: cab.RetroArchAddr(), Paths: p, Name: "Batocera"},
		HTTP:        HTTP{Listen: "127.0.0.1:0"},
		Diagnostics: Diagnostics{ThermalZones: cab.Path("/sys/class/thermal/thermal_zone*/temp")},
		LogLevel:    "debug",
	}
}

// load is the daemon's loader: the rig's configuration as it is now.
func (r *rig) load() (Loaded, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg := r.cfg
	if r.fileRules {
		r.fileHousehold(&cfg)
	}
	return Loaded{Config: cfg}, nil
}

// stamp reads the fake clock on both of the tracker's clocks.
func (r *rig) stamp() tracker.Stamp {
	now := r.clock.Now()
	return tracker.Stamp{At: now, Boot: time.Hour + now.Sub(rigEpoch), BootID: "rig-boot"}
}

// writeFile replaces the configuration file the way batocera-settings-set
// does (a new file renamed over the old one): the daemon watches it.
func (r *rig) writeFile() {
	r.t.Helper()
	tmp := r.file + ".tmp"
	if err := os.WriteFile(tmp, []byte(time.Now().String()+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, r.file); err != nil {
		r.t.Fatal(err)
	}
}

// reconfigure changes the configuration and waits until the daemon has
// applied it: the file's change arms the daemon's debounce, and the rig
// moves the clock past it.
func (r *rig) reconfigure(change func(*Config)) {
	r.t.Helper()
	r.mu.Lock()
	change(&r.cfg)
	r.mu.Unlock()
	seen := len(r.logs.entries(msgConfigChanged))
	r.writeFile()
	r.waitLog("the file change noticed", func() bool { return len(r.logs.entries(msgConfigChanged)) > seen })
	applied := len(r.logs.entries("configuration change applied"))
	r.clock.Advance(configDebounce)
	r.waitLog("the change applied", func() bool { return len(r.logs.entries("configuration change applied")) > applied })
}

// press publishes a command the way Home Assistant does (not retained).
func (r *rig) press(entity, payload string) {
	r.t.Helper()
	r.publish(r.settings.CommandTopic(entity), payload)
}

func (r *rig) publish(topic, payload string) {
	r.t.Helper()
	if err := r.broker.Publish(topic, []byte(payload), false); err != nil {
		r.t.Fatal(err)
	}
}

// retained waits for a retained payload on topic that satisfies ok.
func (r *rig) retained(topic string, ok func(string) bool) string {
	r.t.Helper()
	var last string
	cabinettest.Await(r.t, "retained "+topic, r.broker.Changed, func() bool {
		b, found := r.broker.Retained(topic)
		last = string(b)
		return found && ok(last)
	})
	return last
}

// capture is the broker's capture once the daemon's pictures and play time
// today (published by their own parts, at any moment after the start) are
// out, for validate.
func (r *rig) capture() []byte {
	r.t.Helper()
	for _, key := range []string{haentities.Artwork, haentities.LastScreenshot, haentities.PlayTimeToday, haentities.SelectedMarquee} {
		r.retained(r.settings.StateTopic(key), func(v string) bool { return v != "" })
	}
	return r.broker.Capture()
}

// waitApplied waits, apply by apply, until cond holds.
func (r *rig) waitApplied(what string, cond func() bool) {
	r.t.Helper()
	cabinettest.Await(r.t, what, r.d.eng.appliedCh, cond)
}

// waitLog waits, line by line, until cond holds.
func (r *rig) waitLog(what string, cond func() bool) {
	r.t.Helper()
	cabinettest.Await(r.t, what, r.logs.written, cond)
}

// logged waits for a log line with message msg whose fields contain want.
func (r *rig) logged(msg string, want map[string]string) map[string]any {
	r.t.Helper()
	var found map[string]any
	r.waitLog("log "+msg+" "+strings.Join(mapPairs(want), " "), func() bool {
		for _, e := range r.logs.entries(msg) {
			match := true
			for k, v := range want {
				s, _ := e[k].(string)
				if !strings.Contains(s, v) {
					match = false
				}
			}
			if match {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

func mapPairs(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"~"+v)
	}
	return out
}

// deliver hands ev to the daemon as a wrapper does, under one key. The
// wrapper's fast path waits 80 ms for the ack (an fsync), which CI's load
// can exceed: then a real hook records the event itself; here it is handed
// over again, and the key makes the daemon apply it once.
func (r *rig) deliver(ev tracker.Event) {
	r.t.Helper()
	key := journal.NewKey(ev)
	var err error
	for range 25 {
		if err = socket.Deliver(context.Background(), r.cfg.Layout.Socket(), key, ev); err == nil {
			return
		}
	}
	r.t.Fatalf("deliver %s: %v", ev.Kind, err)
}
