package sensors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// fakeHousehold records the household calls as "Method(value, by)"; its zero value is ready. err,
// when set, is every call's answer.
type fakeHousehold struct {
	calls []string
	err   error
}

func (f *fakeHousehold) record(ctx context.Context, call string) error {
	if _, ok := ctx.Deadline(); !ok {
		call += " without a deadline"
	}
	f.calls = append(f.calls, call)
	return f.err
}

func (f *fakeHousehold) SetEnabled(ctx context.Context, on bool, by string) error {
	return f.record(ctx, fmt.Sprintf("SetEnabled(%v, %s)", on, by))
}

func (f *fakeHousehold) SetTodayLimit(ctx context.Context, minutes int, by string) error {
	return f.record(ctx, fmt.Sprintf("SetTodayLimit(%d, %s)", minutes, by))
}

func (f *fakeHousehold) Grant(ctx context.Context, minutes int, by string) error {
	return f.record(ctx, fmt.Sprintf("Grant(%d, %s)", minutes, by))
}

func (f *fakeHousehold) Pause(ctx context.Context, on bool, by string) error {
	return f.record(ctx, fmt.Sprintf("Pause(%v, %s)", on, by))
}

func (f *fakeHousehold) SetPlayer(ctx context.Context, name, by string) error {
	return f.record(ctx, fmt.Sprintf("SetPlayer(%q, %s)", name, by))
}

func (f *fakeHousehold) SetUIMode(ctx context.Context, mode, by string) error {
	return f.record(ctx, fmt.Sprintf("SetUIMode(%s, %s)", mode, by))
}

func (f *fakeHousehold) DenyTime(ctx context.Context, by string) error {
	return f.record(ctx, fmt.Sprintf("DenyTime(%s)", by))
}

// TestHouseholdCommands: each household entity and payload becomes its call while
// cabinet.ha.household is on; a redelivered press, a bad payload, the setting off or no rules
// yet are ignored with a log line saying why.
func TestHouseholdCommands(t *testing.T) {
	tests := []struct {
		name      string
		household bool // cabinet.ha.household
		noRules   bool // Controls.Household is nil
		entity    string
		payload   string
		dup       bool
		want      string // the call; "" for none
		log       string // in the log line when want is ""
	}{
		{"limits on", true, false, haentities.Limits, "ON", false, "SetEnabled(true, home_assistant)", ""},
		{"limits off", true, false, haentities.Limits, "OFF", false, "SetEnabled(false, home_assistant)", ""},
		{"limits set again (DUP)", true, false, haentities.Limits, "ON", true, "SetEnabled(true, home_assistant)", ""},
		{"pause", true, false, haentities.PausePlay, "ON", false, "Pause(true, home_assistant)", ""},
		{"resume", true, false, haentities.PausePlay, "OFF", false, "Pause(false, home_assistant)", ""},
		{"daily limit", true, false, haentities.DailyLimit, "90", false, "SetTodayLimit(90, home_assistant)", ""},
		{"daily limit as a float", true, false, haentities.DailyLimit, "45.0", false, "SetTodayLimit(45, home_assistant)", ""},
		{"no play today", true, false, haentities.DailyLimit, "0", false, "SetTodayLimit(0, home_assistant)", ""},
		{"daily limit set again (DUP)", true, false, haentities.DailyLimit, "30", true, "SetTodayLimit(30, home_assistant)", ""},
		{"+15", true, false, haentities.ExtraTime, "PRESS", false, "Grant(15, home_assistant)", ""},
		{"+30", true, false, haentities.ExtraTime30, "PRESS", false, "Grant(30, home_assistant)", ""},
		{"+60", true, false, haentities.ExtraTime60, "PRESS", false, "Grant(60, home_assistant)", ""},
		{"+15 redelivered", true, false, haentities.ExtraTime, "PRESS", true, "", "MQTT DUP"},
		{"+60 redelivered", true, false, haentities.ExtraTime60, "PRESS", true, "", "MQTT DUP"},
		{"bad switch payload", true, false, haentities.Limits, "on", false, "", "switch payload must be"},
		{"bad press payload", true, false, haentities.ExtraTime30, "press", false, "", "button payload must be"},
		{"limit out of range", true, false, haentities.DailyLimit, "1441", false, "", "0 to 1440"},
		{"limit not a number", true, false, haentities.DailyLimit, "lots", false, "", "0 to 1440"},
		{"fractional limit", true, false, haentities.DailyLimit, "12.5", false, "", "0 to 1440"},
		{"setting off", false, false, haentities.ExtraTime, "PRESS", false, "", "cabinet.ha.household is off"},
		{"setting off, switch", false, false, haentities.Limits, "OFF", false, "", "cabinet.ha.household is off"},
		{"rules not ready", true, true, haentities.ExtraTime, "PRESS", false, "", "not ready"},
		{"player", true, false, haentities.Player, "bob", false, `SetPlayer("bob", home_assistant)`, ""},
		{"no player", true, false, haentities.Player, "—", false, `SetPlayer("", home_assistant)`, ""},
		{"unknown player", true, false, haentities.Player, "carol", false, "", "not one of the household's players"},
		{"kid mode", true, false, haentities.UIMode, "Kid", false, "SetUIMode(Kid, home_assistant)", ""},
		{"full mode", true, false, haentities.UIMode, " Full\n", false, "SetUIMode(Full, home_assistant)", ""},
		{"not a mode", true, false, haentities.UIMode, "Basic", false, "", "want Full, Kiosk or Kid"},
		{"ui mode with the setting off", false, false, haentities.UIMode, "Kid", false, "", "cabinet.ha.household is off"},
		{"deny", true, false, haentities.DenyTime, "PRESS", false, "DenyTime(home_assistant)", ""},
		{"deny redelivered (harmless: nothing waits then)", true, false, haentities.DenyTime, "PRESS", true, "DenyTime(home_assistant)", ""},
		{"bad deny payload", true, false, haentities.DenyTime, "yes", false, "", "button payload must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(haentities.Sources{})
			h.rules.Settings.Household, h.rules.Settings.Profiles = tt.household, "alice,bob"
			fake := &fakeHousehold{}
			var logs bytes.Buffer
			c := &Controls{Host: h, Clock: clock.NewFake(time.Time{}), Log: zerolog.New(&logs), Ctx: context.Background(),
				Tools: func() ToolCaller { return nil }, Presses: &power.Presses{}, Household: fake}
			if tt.noRules {
				c.Household = nil
			}
			c.OnCommand(h.Rules().Settings.CommandTopic(tt.entity), []byte(tt.payload), tt.dup)
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if !slices.Equal(fake.calls, want) {
				t.Errorf("calls %q, want %q", fake.calls, want)
			}
			if tt.want == "" && !strings.Contains(logs.String(), tt.log) {
				t.Errorf("log %s lacks %q", logs.String(), tt.log)
			}
		})
	}
}

// TestHouseholdRefusal: a refusal of the rules is logged, and the other controls keep their
// behaviour whatever DUP says (a redelivered pause still reaches its tool, as before).
func TestHouseholdRefusal(t *testing.T) {
	h := newHost(haentities.Sources{})
	h.rules.Settings.Household, h.rules.Settings.Controls = true, true
	fake := &fakeHousehold{err: errors.New("limits are off: turn them on first")}
	tools := &fakeTools{}
	var logs bytes.Buffer
	c := &Controls{Host: h, Clock: clock.NewFake(time.Time{}), Log: zerolog.New(&logs), Ctx: context.Background(),
		Tools: func() ToolCaller { return tools }, Presses: &power.Presses{}, Household: fake}
	set := h.Rules().Settings
	c.OnCommand(set.CommandTopic(haentities.DailyLimit), []byte("60"), false)
	if !strings.Contains(logs.String(), "HA household command refused") || !strings.Contains(logs.String(), "turn them on first") {
		t.Errorf("log %s lacks the refusal", logs.String())
	}
	c.OnCommand(set.CommandTopic(haentities.PauseGame), []byte(haentities.PayloadPress), true)
	if !slices.Equal(tools.calls, []string{"batocera_pause_game"}) {
		t.Errorf("tools called %q, want batocera_pause_game", tools.calls)
	}
	if len(fake.calls) != 1 {
		t.Errorf("household calls %q, want the one daily limit", fake.calls)
	}
}

// FuzzParseHousehold: whatever arrives on a household command topic, a call is made only for one
// of the household entities with its exact payload.
func FuzzParseHousehold(f *testing.F) {
	for _, e := range []string{haentities.Limits, haentities.DailyLimit, haentities.ExtraTime, haentities.PausePlay, haentities.QuitGame, haentities.Player} {
		f.Add(e, "ON")
		f.Add(e, "PRESS")
		f.Add(e, "90.0")
		f.Add(e, "alice")
		f.Add(e, "—")
	}
	settings := haentities.Settings{Profiles: "alice,bob"}
	f.Fuzz(func(t *testing.T, entity, payload string) {
		call, err := parseHousehold(settings, entity, []byte(payload))
		if err != nil {
			return
		}
		fake := &fakeHousehold{}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if call(ctx, fake) != nil || len(fake.calls) != 1 {
			t.Fatalf("parseHousehold(%q, %q): calls %q", entity, payload, fake.calls)
		}
		switch entity {
		case haentities.Limits, haentities.PausePlay:
			if payload != "ON" && payload != "OFF" {
				t.Fatalf("switch %s accepted %q", entity, payload)
			}
		case haentities.DailyLimit:
		case haentities.Player:
			if p := strings.TrimSpace(payload); p != "alice" && p != "bob" && p != haentities.PlayerNone {
				t.Fatalf("player accepted %q", payload)
			}
		default:
			if haentities.ExtraTimeMinutes(entity) == 0 || payload != haentities.PayloadPress {
				t.Fatalf("parseHousehold(%q, %q) accepted", entity, payload)
			}
		}
	})
}
