package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestHouseholdUIMode: Home Assistant's select restarts ES in Kid mode
// through the init script (stop, the file written, start), and the select
// follows the file when ES itself rewrites it (its passkey's unlock sets
// Full). The MCP tool answers with the mode read back.
func TestHouseholdUIMode(t *testing.T) {
	var settingsFile, initLog string
	r := householdRigWith(t, func(r *rig) {
		dir := r.cab.Path("/userdata/system/configs/emulationstation")
		settingsFile, initLog = filepath.Join(dir, "es_settings.cfg"), filepath.Join(t.TempDir(), "init.log")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(settingsFile, []byte("<?xml version=\"1.0\"?>\n<config>\n\t<string name=\"LastSystem\" value=\"nes\" />\n</config>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(t.TempDir(), "S31emulationstation")
		body := fmt.Sprintf("#!/bin/sh\nprintf '%%s %%s\\n' \"$1\" \"$(grep -c 'name=\"UIMode\" value=\"Kid\"' %s)\" >>%s\n", settingsFile, initLog)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		r.cfg.System.ESSettings, r.cfg.System.ESInit = settingsFile, script
		r.mu.Unlock()
	}, "enabled", "1", "minutes.daily", "60")
	s := r.d.config().Rules.Settings
	mode := s.StateTopic(haentities.UIMode)
	is := func(want string) func(string) bool { return func(v string) bool { return v == want } }
	r.retained(s.ConfigTopic(haentities.ComponentSelect, haentities.UIMode), func(v string) bool {
		var cfg struct {
			Options []string `json:"options"`
		}
		return json.Unmarshal([]byte(v), &cfg) == nil && fmt.Sprint(cfg.Options) == "[Full Kiosk Kid]"
	})
	r.retained(mode, is("Full"))

	r.press(haentities.UIMode, "Kid")
	r.retained(mode, is("Kid"))
	if b, _ := os.ReadFile(initLog); string(b) != "stop 0\nstart 1\n" {
		t.Errorf("the init script ran:\n%s\nwant stop (file not yet Kid), then start (Kid)", b)
	}
	// ES's menus rewrite the file (the passkey's unlock): the select follows.
	seen := len(r.logs.entries(msgConfigChanged))
	if err := os.WriteFile(settingsFile, []byte("<config>\n\t<string name=\"LastSystem\" value=\"nes\" />\n</config>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.waitLog("the settings' change noticed", func() bool { return len(r.logs.entries(msgConfigChanged)) > seen })
	r.clock.Advance(configDebounce)
	r.retained(mode, is("Full"))

	res, err := r.d.mcpServer(false).Call(cabinettest.Context(t), "batocera_set_ui_mode", map[string]any{"mode": "Kiosk"})
	if err != nil || res.IsError {
		t.Fatalf("batocera_set_ui_mode: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Outcome string `json:"outcome"`
		Limits  struct {
			UIMode *string `json:"ui_mode"`
		} `json:"limits"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Outcome != "done" || out.Limits.UIMode == nil || *out.Limits.UIMode != "Kiosk" {
		t.Errorf("batocera_set_ui_mode Kiosk = %s (%v)", b, err)
	}
	r.retained(mode, is("Kiosk"))
	validate(t, r.capture())
}

// TestHouseholdTimeRequest: Cabinet's entries answered through the socket
// as `cabinet entry` asks: a request for 15 more minutes raises
// time_requested with whose time it is; the parent's no (deny_time) and
// yes (extra_time) reach the player as ES notifications; asking what is
// left says it.
func TestHouseholdTimeRequest(t *testing.T) {
	r := householdRigWith(t, nil, "enabled", "1", "minutes.daily", "60", "profiles", "alice,bob")
	s := r.d.config().Rules.Settings
	r.retained(s.StateTopic(haentities.Player), func(v string) bool { return v == haentities.PlayerNone }) // subscribed
	r.press(haentities.Player, "alice")
	r.retained(s.StateTopic(haentities.Player), func(v string) bool { return v == "alice" })
	ask := func(name string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		text, err := socket.Entry(ctx, r.cfg.Layout.Socket(), name)
		if err != nil {
			t.Fatalf("entry %s: %v", name, err)
		}
		return text
	}
	notified := func(want string) {
		t.Helper()
		cabinettest.Await(t, "ES's notification "+want, nil, func() (bool, string) {
			var got []string
			for _, c := range r.cab.ES.Calls() {
				if c.Route == fakees.RouteNotify {
					got = append(got, c.Body)
				}
			}
			return slices.ContainsFunc(got, func(b string) bool { return strings.Contains(b, want) }), strings.Join(got, " | ")
		})
	}
	if got := ask(packaging.EntryTimeLeft); got != "alice: 60 minutes of play left today." {
		t.Errorf("time left: %q", got)
	}
	if got := ask(packaging.EntryAskTime); got != "Asked a parent for 15 more minutes. The answer will show here." {
		t.Errorf("ask: %q", got)
	}
	requested := func(n int) {
		t.Helper()
		cabinettest.Await(t, fmt.Sprintf("%d time_requested events", n), r.broker.Changed, func() (bool, string) {
			ev := r.limitEvents(haentities.LimitTimeRequested)
			return len(ev) == n && ev[n-1]["profile"] == "alice" && ev[n-1]["minutes"] == float64(15), fmt.Sprint(ev)
		})
	}
	requested(1)
	if got := ask(packaging.EntryAskTime); !strings.HasPrefix(got, "Already asked") {
		t.Errorf("asked again: %q", got)
	}
	r.press(haentities.DenyTime, haentities.PayloadPress)
	notified("A parent said no to more time today.")
	r.clock.Advance(time.Second) // an event is one per moment (its key has the time)
	ask(packaging.EntryAskTime)
	requested(2)
	r.press(haentities.ExtraTime, haentities.PayloadPress)
	notified("A parent gave you 15 more minutes.")
	r.retained(s.StateTopic(haentities.TimeLeftToday), func(v string) bool { return v == "75" })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := socket.Entry(ctx, r.cfg.Layout.Socket(), "rm -rf"); err == nil || !strings.Contains(err.Error(), "not one of Cabinet's entries") {
		t.Errorf("an unknown entry: %v", err)
	}
	validate(t, r.capture())
}
