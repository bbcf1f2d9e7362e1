package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// fakeHousehold is the daemon's play-time rules in memory, on Thursday
// 2025-05-01: the batocera.conf values, today's own limit, the extra time
// and the pause, reported through household.NewReport. It records every
// change, and with err set every call fails.
type fakeHousehold struct {
	mu      sync.Mutex
	values  map[string]string
	today   int // today's own limit, -1: none
	bonus   int
	paused  bool
	used    int    // minutes played today
	refusal string // a launch refusal while play is otherwise allowed
	player  string
	uiMode  string // "" is Full
	uiErr   error  // what PlanUIMode and SetUIMode refuse with
	err     error
	calls   []string
}

const hp = household.Prefix

func newFakeHousehold(values map[string]string) *fakeHousehold {
	return &fakeHousehold{values: maps.Clone(values), today: -1}
}

// onAt60 are rules on with an hour a day.
func onAt60() map[string]string {
	return map[string]string{hp + "enabled": "1", hp + "minutes.daily": "60"}
}

func (f *fakeHousehold) report() household.Report {
	r, _ := household.Parse(f.values)
	st := household.Status{Enabled: r.Enabled, State: household.StateOff, Day: "2025-05-01", Weekday: time.Thursday,
		ClockTrusted: true, Limit: r.DayLimit(time.Thursday), Bonus: f.bonus, Used: time.Duration(f.used) * time.Minute,
		Left: -1, SessionLeft: -1, UntilBedtime: -1, Remaining: -1, Paused: f.paused, Bedtime: r.Bedtime,
		Profile: f.player, Player: f.player}
	if f.today >= 0 {
		st.Limit = f.today
	}
	if st.Limit >= 0 {
		st.Left = max(0, time.Duration(st.Limit+st.Bonus)*time.Minute-st.Used)
	}
	if r.Enabled {
		switch {
		case f.paused:
			st.State, st.Refusal = household.StatePaused, "Play is paused."
		case st.Left == 0:
			st.State, st.Refusal = household.StateTimeUp, "Time is up for today."
		default:
			st.State, st.Refusal = household.StateOK, f.refusal
		}
	}
	rep := household.NewReport(r, st, time.UTC)
	mode := cmp.Or(f.uiMode, haentities.UIModeFull)
	rep.UIMode = &mode
	return rep
}

func (f *fakeHousehold) Report(context.Context) (household.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return household.Report{}, f.err
	}
	return f.report(), nil
}

func (f *fakeHousehold) change(call string, apply func() error) (household.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if f.err != nil {
		return household.Report{}, f.err
	}
	if err := apply(); err != nil {
		return household.Report{}, err
	}
	return f.report(), nil
}

func (f *fakeHousehold) SetRules(_ context.Context, values map[string]string, by string) (household.Report, error) {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		kv = append(kv, k+"="+values[k])
	}
	return f.change("SetRules "+strings.Join(kv, ",")+" by "+by, func() error {
		for k, v := range values {
			if err := household.Check(k, v); err != nil {
				return err
			}
		}
		if f.values == nil {
			f.values = map[string]string{}
		}
		maps.Copy(f.values, values)
		return nil
	})
}

func (f *fakeHousehold) SetTodayLimit(_ context.Context, minutes int, by string) (household.Report, error) {
	return f.change(fmt.Sprintf("SetTodayLimit %d by %s", minutes, by), func() error { f.today = minutes; return nil })
}

func (f *fakeHousehold) Grant(_ context.Context, minutes int, by string) (household.Report, error) {
	return f.change(fmt.Sprintf("Grant %d by %s", minutes, by), func() error { f.bonus += minutes; return nil })
}

func (f *fakeHousehold) Pause(_ context.Context, on bool, by string) (household.Report, error) {
	return f.change(fmt.Sprintf("Pause %t by %s", on, by), func() error { f.paused = on; return nil })
}

func (f *fakeHousehold) SetPlayer(_ context.Context, name, by string) (household.Report, error) {
	return f.change(fmt.Sprintf("SetPlayer %q by %s", name, by), func() error { f.player = name; return nil })
}

func (f *fakeHousehold) PlanUIMode(_ context.Context, mode string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.uiErr != nil {
		return "", f.uiErr
	}
	return "Would restart EmulationStation in " + mode + " mode.", nil
}

func (f *fakeHousehold) SetUIMode(_ context.Context, mode, by string) (household.Report, string, error) {
	rep, err := f.change(fmt.Sprintf("SetUIMode %s by %s", mode, by), func() error {
		if f.uiErr != nil {
			return f.uiErr
		}
		f.uiMode = mode
		return nil
	})
	return rep, "Switched to " + mode + " mode: EmulationStation restarted.", err
}

func (f *fakeHousehold) set(mod func(f *fakeHousehold)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mod(f)
}

func (f *fakeHousehold) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func householdRig(t *testing.T, opts Options, f *fakeHousehold) *rig {
	t.Helper()
	return newRig(t, rigConfig{opts: opts, deps: func(d *Deps) { d.Household = f }})
}

var householdTools = []string{"batocera_get_limits", "batocera_set_limits", "batocera_grant_time", "batocera_pause_play",
	"batocera_set_player"}

func TestHouseholdRegistration(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		f    *fakeHousehold
		want []string
	}{
		{"without Household", Options{}, nil, nil},
		{"with Household", Options{}, newFakeHousehold(nil), householdTools},
		{"read-only", Options{ReadOnly: true}, newFakeHousehold(nil), []string{"batocera_get_limits"}},
		{"dry run", Options{DryRun: true}, newFakeHousehold(nil), householdTools},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, rigConfig{opts: tc.opts, deps: func(d *Deps) {
				if tc.f != nil {
					d.Household = tc.f
				}
			}})
			var got []string
			for _, n := range r.srv.ToolNames() {
				if slices.Contains(householdTools, n) {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("household tools %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGetLimits(t *testing.T) {
	f := newFakeHousehold(map[string]string{hp + "enabled": "1", hp + "minutes.daily": "90", hp + "bedtime": "21:00-07:00"})
	f.bonus, f.used = 15, 83
	r := householdRig(t, Options{}, f)
	var got LimitsResult
	res := r.ok("batocera_get_limits", nil, &got)
	if want := (LimitsResult{Cabinet: "Game Room", Report: completeReport(f.report())}); mustJSON(t, got) != mustJSON(t, want) {
		t.Errorf("got  %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
	}
	if want := "Limits on: 22 min left today (limit 90, +15 extra, used 83). Bedtime 21:00-07:00."; text(res) != want {
		t.Errorf("text %q, want %q", text(res), want)
	}
	f.set(func(f *fakeHousehold) { f.used = 105 })
	if res := r.ok("batocera_get_limits", nil, nil); !strings.HasSuffix(text(res), "No game may start now: Time is up for today.") {
		t.Errorf("time up: %q", text(res))
	}
	f.set(func(f *fakeHousehold) { f.values[hp+"enabled"] = "0" })
	if res := r.ok("batocera_get_limits", nil, nil); text(res) != "Play-time rules are off." {
		t.Errorf("off: %q", text(res))
	}
	f.set(func(f *fakeHousehold) { f.err = errors.New("store closed") })
	if msg := r.refused("batocera_get_limits", nil); !strings.HasPrefix(msg, "Could not read the play-time rules: store closed.") {
		t.Errorf("failing daemon: %q", msg)
	}
}

// TestSetLimits maps each argument to its cabinet.household.* value, on
// rules that are on with 60 minutes a day and everything else at its
// default.
func TestSetLimits(t *testing.T) {
	f := newFakeHousehold(nil)
	r := householdRig(t, Options{}, f)
	const schema = "input schema"
	for _, tc := range []struct {
		name    string
		args    map[string]any
		calls   string // the fake's calls, joined by "; "
		outcome string // or the refusal's text (a prefix)
		sent    string // joined by "|"
		warning string
	}{
		{"daily", map[string]any{"daily_minutes": 90}, "SetRules cabinet.household.minutes.daily=90 by mcp", outcomeDone,
			"SET cabinet.household.minutes.daily=90", ""},
		{"no daily limit", map[string]any{"daily_minutes": -1}, "SetRules cabinet.household.minutes.daily= by mcp",
			outcomeDone, "SET cabinet.household.minutes.daily=", ""},
		{"daily unchanged", map[string]any{"daily_minutes": 60}, "", outcomeUnchanged, "", ""},
		{"weekdays", map[string]any{"weekday_minutes": map[string]any{"sat": 120, "sun": -1, "mon": 0}},
			"SetRules cabinet.household.minutes.mon=0,cabinet.household.minutes.sat=120 by mcp", outcomeDone,
			"SET cabinet.household.minutes.mon=0|SET cabinet.household.minutes.sat=120", ""},
		{"session", map[string]any{"session_minutes": 45}, "SetRules cabinet.household.session_minutes=45 by mcp",
			outcomeDone, "SET cabinet.household.session_minutes=45", ""},
		{"no session limit already", map[string]any{"session_minutes": 0}, "", outcomeUnchanged, "", ""},
		{"bedtime", map[string]any{"bedtime": "9:30-7:00"}, "SetRules cabinet.household.bedtime=09:30-07:00 by mcp",
			outcomeDone, "SET cabinet.household.bedtime=09:30-07:00", ""},
		{"no bedtime already", map[string]any{"bedtime": ""}, "", outcomeUnchanged, "", ""},
		{"warn_at", map[string]any{"warn_at": []any{5, 15}}, "SetRules cabinet.household.warn_at=15,5 by mcp", outcomeDone,
			"SET cabinet.household.warn_at=15,5", ""},
		{"no warnings", map[string]any{"warn_at": []any{}}, "SetRules cabinet.household.warn_at= by mcp", outcomeDone,
			"SET cabinet.household.warn_at=", ""},
		{"warn_at default in another order", map[string]any{"warn_at": []any{1, 5, 15}}, "", outcomeUnchanged, "", ""},
		{"at_limit", map[string]any{"at_limit": "quit"}, "SetRules cabinet.household.at_limit=quit by mcp", outcomeDone,
			"SET cabinet.household.at_limit=quit", ""},
		{"min_start", map[string]any{"min_start_minutes": 5}, "SetRules cabinet.household.min_start_minutes=5 by mcp",
			outcomeDone, "SET cabinet.household.min_start_minutes=5", ""},
		{"off", map[string]any{"enabled": false}, "SetRules cabinet.household.enabled=0 by mcp", outcomeDone,
			"SET cabinet.household.enabled=0", ""},
		{"off with a limit", map[string]any{"enabled": false, "daily_minutes": 30},
			"SetRules cabinet.household.enabled=0,cabinet.household.minutes.daily=30 by mcp", outcomeDone,
			"SET cabinet.household.enabled=0|SET cabinet.household.minutes.daily=30", "The play-time rules are off"},
		{"today", map[string]any{"today_minutes": 45}, "SetTodayLimit 45 by mcp", outcomeDone, "SET today_minutes=45", ""},
		{"today cleared", map[string]any{"today_minutes": -1}, "SetTodayLimit -1 by mcp", outcomeDone, "SET today_minutes=-1", ""},
		{"rules and today", map[string]any{"daily_minutes": 90, "today_minutes": 30},
			"SetRules cabinet.household.minutes.daily=90 by mcp; SetTodayLimit 30 by mcp", outcomeDone,
			"SET cabinet.household.minutes.daily=90|SET today_minutes=30", ""},
		{"nothing", map[string]any{}, "", "Nothing to change: give at least one of enabled, daily_minutes", "", ""},
		{"no weekday", map[string]any{"weekday_minutes": map[string]any{}}, "", "Nothing to change", "", ""},
		{"bedtime out of range", map[string]any{"bedtime": "25:00-07:00"}, "",
			`Cannot set bedtime: cabinet.household.bedtime="25:00-07:00": want empty (none) or HH:MM-HH:MM`, "", ""},
		{"empty bedtime window", map[string]any{"bedtime": "21:00-21:00"}, "", "Cannot set bedtime:", "", ""},
		{"bedtime not a window", map[string]any{"bedtime": "evening"}, "", schema, "", ""},
		{"daily too long", map[string]any{"daily_minutes": 1441}, "", schema, "", ""},
		{"daily below -1", map[string]any{"daily_minutes": -2}, "", schema, "", ""},
		{"daily not whole", map[string]any{"daily_minutes": 1.5}, "", schema, "", ""},
		{"session below 0", map[string]any{"session_minutes": -1}, "", schema, "", ""},
		{"today too long", map[string]any{"today_minutes": 1441}, "", schema, "", ""},
		{"unknown day", map[string]any{"weekday_minutes": map[string]any{"xyz": 5}}, "", schema, "", ""},
		{"weekday too long", map[string]any{"weekday_minutes": map[string]any{"sat": 2000}}, "", schema, "", ""},
		{"seven warnings", map[string]any{"warn_at": []any{1, 2, 3, 4, 5, 6, 7}}, "", schema, "", ""},
		{"warning at 0", map[string]any{"warn_at": []any{0}}, "", schema, "", ""},
		{"warning too early", map[string]any{"warn_at": []any{121}}, "", schema, "", ""},
		{"at_limit unknown", map[string]any{"at_limit": "never"}, "", schema, "", ""},
		{"min_start too long", map[string]any{"min_start_minutes": 61}, "", schema, "", ""},
		{"unknown argument", map[string]any{"minutes": 5}, "", schema, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.set(func(f *fakeHousehold) { f.values, f.today, f.calls = onAt60(), -1, nil })
			if tc.outcome != outcomeDone && tc.outcome != outcomeUnchanged {
				if msg := r.refused("batocera_set_limits", tc.args); !strings.Contains(msg, tc.outcome) {
					t.Errorf("refusal %q, want %q", msg, tc.outcome)
				}
				if calls := f.takeCalls(); len(calls) != 0 {
					t.Errorf("a refused call changed %v", calls)
				}
				return
			}
			var got LimitsActionResult
			r.ok("batocera_set_limits", tc.args, &got)
			if got.Outcome != tc.outcome || strings.Join(got.Sent, "|") != tc.sent {
				t.Errorf("got %s %q, want %s %q", got.Outcome, got.Sent, tc.outcome, tc.sent)
			}
			if calls := strings.Join(f.takeCalls(), "; "); calls != tc.calls {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
			if w := strings.Join(got.Warnings, " "); !strings.Contains(w, tc.warning) || (tc.warning == "" && w != "") {
				t.Errorf("warnings %q, want %q", got.Warnings, tc.warning)
			}
			if want := completeReport(f.report()); mustJSON(t, got.Limits) != mustJSON(t, want) {
				t.Errorf("limits %s, want the report after: %s", mustJSON(t, got.Limits), mustJSON(t, want))
			}
		})
	}
}

func TestSetLimitsDetail(t *testing.T) {
	r := householdRig(t, Options{}, newFakeHousehold(onAt60()))
	var got LimitsActionResult
	res := r.ok("batocera_set_limits", map[string]any{"daily_minutes": 90, "weekday_minutes": map[string]any{"sat": 120},
		"bedtime": "21:00-07:00", "today_minutes": 30}, &got)
	want := "Set the play-time rules: daily limit 90 min, Saturday 120 min, bedtime 21:00-07:00, today's limit 30 min."
	if got.Detail != want {
		t.Errorf("detail %q, want %q", got.Detail, want)
	}
	if want := "\nLimits on: 30 min left today (limit 30, used 0). Bedtime 21:00-07:00."; !strings.HasSuffix(text(res), want) {
		t.Errorf("text %q, want it to end with %q", text(res), want)
	}
}

func TestHouseholdDryRun(t *testing.T) {
	f := newFakeHousehold(onAt60())
	r := householdRig(t, Options{DryRun: true}, f)
	for _, tc := range []struct {
		tool string
		args map[string]any
		sent string
	}{
		{"batocera_set_limits", map[string]any{"daily_minutes": 90, "today_minutes": 30},
			"SET cabinet.household.minutes.daily=90|SET today_minutes=30"},
		{"batocera_grant_time", map[string]any{"minutes": 15}, "GRANT +15 min today"},
		{"batocera_pause_play", map[string]any{"paused": true}, "PAUSE on"},
	} {
		var got LimitsActionResult
		res := r.ok(tc.tool, tc.args, &got)
		if got.Outcome != outcomeDryRun || strings.Join(got.Sent, "|") != tc.sent || !strings.HasPrefix(got.Detail, "Would ") ||
			!strings.HasPrefix(text(res), "Dry run, nothing was sent") {
			t.Errorf("%s: %+v, want dry_run sending %q", tc.tool, got.ActionResult, tc.sent)
		}
		if mustJSON(t, got.Limits) != mustJSON(t, completeReport(f.report())) {
			t.Errorf("%s: limits %s, want them as they are", tc.tool, mustJSON(t, got.Limits))
		}
	}
	if calls := f.takeCalls(); len(calls) != 0 {
		t.Errorf("a dry run changed %v", calls)
	}
	// unchanged wins over dry_run, as for every tool
	var got LimitsActionResult
	if r.ok("batocera_pause_play", map[string]any{"paused": false}, &got); got.Outcome != outcomeUnchanged {
		t.Errorf("resume while not paused: %+v", got.ActionResult)
	}
}

func TestGrantTime(t *testing.T) {
	f := newFakeHousehold(onAt60())
	r := householdRig(t, Options{}, f)
	for _, tc := range []struct {
		name    string
		setup   func(f *fakeHousehold)
		args    map[string]any
		want    string // the detail, or the refusal (a part)
		warning string
	}{
		{"grant", nil, map[string]any{"minutes": 15}, "Granted 15 extra minutes for today; they lapse at midnight.", ""},
		{"rules off", func(f *fakeHousehold) { f.values[hp+"enabled"] = "0" }, map[string]any{"minutes": 240},
			"Granted 240 extra minutes", "The play-time rules are off"},
		{"no daily limit", func(f *fakeHousehold) { f.values[hp+"minutes.daily"] = "" }, map[string]any{"minutes": 1},
			"Granted 1 extra minutes", "There is no daily limit today"},
		{"paused", func(f *fakeHousehold) { f.paused = true }, map[string]any{"minutes": 10}, "Granted 10",
			"does not lift bedtime or a pause"},
		{"none", nil, map[string]any{"minutes": 0}, "input schema", ""},
		{"too many", nil, map[string]any{"minutes": 241}, "input schema", ""},
		{"missing", nil, map[string]any{}, "input schema", ""},
		{"not a number", nil, map[string]any{"minutes": "ten"}, "input schema", ""},
		{"daemon fails", func(f *fakeHousehold) { f.err = errors.New("disk full") }, map[string]any{"minutes": 5},
			"Could not read the play-time rules: disk full.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.set(func(f *fakeHousehold) {
				f.values, f.bonus, f.paused, f.err, f.calls = onAt60(), 0, false, nil, nil
				if tc.setup != nil {
					tc.setup(f)
				}
			})
			if !strings.HasPrefix(tc.want, "Granted") {
				if msg := r.refused("batocera_grant_time", tc.args); !strings.Contains(msg, tc.want) {
					t.Errorf("refusal %q, want %q", msg, tc.want)
				}
				if calls := f.takeCalls(); len(calls) != 0 {
					t.Errorf("a refused grant changed %v", calls)
				}
				return
			}
			var got LimitsActionResult
			r.ok("batocera_grant_time", tc.args, &got)
			n := int(tc.args["minutes"].(int))
			if got.Outcome != outcomeDone || !strings.HasPrefix(got.Detail, tc.want) ||
				strings.Join(got.Sent, "|") != fmt.Sprintf("GRANT +%d min today", n) {
				t.Errorf("got %+v", got.ActionResult)
			}
			if calls := strings.Join(f.takeCalls(), "; "); calls != fmt.Sprintf("Grant %d by mcp", n) {
				t.Errorf("calls %q", calls)
			}
			if w := strings.Join(got.Warnings, " "); !strings.Contains(w, tc.warning) || (tc.warning == "" && w != "") {
				t.Errorf("warnings %q, want %q", got.Warnings, tc.warning)
			}
			if got.Limits.BonusMinutes != n {
				t.Errorf("limits after: bonus %d, want %d", got.Limits.BonusMinutes, n)
			}
		})
	}
}

func TestPausePlay(t *testing.T) {
	f := newFakeHousehold(onAt60())
	r := householdRig(t, Options{}, f)
	for _, tc := range []struct {
		name    string
		args    map[string]any
		outcome string // or the refusal (a part)
		calls   string
		sent    string
		warning string
	}{
		{"pause", map[string]any{"paused": true}, outcomeDone, "Pause true by mcp", "PAUSE on", ""},
		{"pause again", map[string]any{"paused": true}, outcomeUnchanged, "", "", ""},
		{"resume", map[string]any{"paused": false}, outcomeDone, "Pause false by mcp", "PAUSE off", ""},
		{"resume again", map[string]any{"paused": false}, outcomeUnchanged, "", "", ""},
		{"missing", map[string]any{}, "input schema", "", "", ""},
		{"not a boolean", map[string]any{"paused": "yes"}, "input schema", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.outcome != outcomeDone && tc.outcome != outcomeUnchanged {
				if msg := r.refused("batocera_pause_play", tc.args); !strings.Contains(msg, tc.outcome) {
					t.Errorf("refusal %q, want %q", msg, tc.outcome)
				}
				return
			}
			var got LimitsActionResult
			r.ok("batocera_pause_play", tc.args, &got)
			if got.Outcome != tc.outcome || strings.Join(got.Sent, "|") != tc.sent || got.Limits.Paused != tc.args["paused"] {
				t.Errorf("got %+v, paused %v", got.ActionResult, got.Limits.Paused)
			}
			if calls := strings.Join(f.takeCalls(), "; "); calls != tc.calls {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
		})
	}
	f.set(func(f *fakeHousehold) { f.values[hp+"enabled"] = "0" })
	var got LimitsActionResult
	// A pause applies with the rules off too: nothing to warn about.
	if r.ok("batocera_pause_play", map[string]any{"paused": true}, &got); got.Outcome != outcomeDone || len(got.Warnings) != 0 {
		t.Errorf("pause with the rules off: %+v", got.ActionResult)
	}
}

// TestRuleValuesBehindTheSchema: what the input schema refuses first is
// refused by the handler too (a caller inside the process, a schema
// loosened later).
func TestRuleValuesBehindTheSchema(t *testing.T) {
	for _, tc := range []struct {
		args setLimitsArgs
		want string
	}{
		{setLimitsArgs{WeekdayMinutes: map[string]int{"xyz": 5}}, `weekday_minutes: unknown day "xyz"`},
		{setLimitsArgs{DailyMinutes: ptr(-2)}, "Cannot set daily_minutes: cabinet.household.minutes.daily=\"-2\""},
		{setLimitsArgs{WeekdayMinutes: map[string]int{"sat": 1441}}, "Cannot set weekday_minutes.sat:"},
		{setLimitsArgs{SessionMinutes: ptr(-1)}, "Cannot set session_minutes:"},
		{setLimitsArgs{WarnAt: &[]int{0}}, "Cannot set warn_at:"},
		{setLimitsArgs{WarnAt: &[]int{1, 2, 3, 4, 5, 6, 7}}, "Cannot set warn_at:"},
		{setLimitsArgs{AtLimit: ptr("never")}, "Cannot set at_limit:"},
		{setLimitsArgs{MinStartMinutes: ptr(61)}, "Cannot set min_start_minutes:"},
	} {
		if _, err := ruleValues(tc.args); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.args, err, tc.want)
		}
	}
	g := newGuard(false, DefaultLimits(), clock.Real{})
	f := newFakeHousehold(onAt60())
	if _, err := setLimits(context.Background(), f, g, "x", setLimitsArgs{TodayMinutes: ptr(-2)}); err == nil ||
		!strings.HasPrefix(err.Error(), "today_minutes must be from 0 to 1440, or -1") {
		t.Errorf("today -2: %v", err)
	}
	if _, err := grantTime(context.Background(), f, g, "x", grantArgs{Minutes: 241}); err == nil {
		t.Error("a grant of 241 minutes passed")
	}
	if calls := f.takeCalls(); len(calls) != 0 {
		t.Errorf("refused calls changed %v", calls)
	}
}

func TestGetStatusLimits(t *testing.T) {
	r := newRig(t, rigConfig{})
	res := r.ok("batocera_get_status", nil, nil)
	if l, ok := res.StructuredContent.(map[string]any)["limits"]; !ok || l != nil {
		t.Errorf("without Household: limits %v (present %v), want null", l, ok)
	}
	if strings.Contains(text(res), "Play-time") {
		t.Errorf("without Household the text says %q", text(res))
	}

	f := newFakeHousehold(onAt60())
	f.used = 38
	r = householdRig(t, Options{}, f)
	for _, tc := range []struct {
		name  string
		setup func(f *fakeHousehold)
		want  *limitsState
		text  string
	}{
		{"time left", nil, &limitsState{Enabled: true, State: "ok", LeftMinutes: ptr(22)}, " Play-time rules: 22 min left today."},
		{"time up", func(f *fakeHousehold) { f.used = 60 },
			&limitsState{Enabled: true, State: "time_up", LeftMinutes: ptr(0), LaunchRefused: ptr("Time is up for today.")},
			" Play-time rules: no game may start now: Time is up for today."},
		{"no daily limit", func(f *fakeHousehold) { f.values[hp+"minutes.daily"] = "" },
			&limitsState{Enabled: true, State: "ok"}, " Play-time rules: no daily limit today."},
		{"off", func(f *fakeHousehold) { f.values[hp+"enabled"] = "0" },
			&limitsState{State: "off", LeftMinutes: ptr(22)}, " Play-time rules: off."},
		{"unreadable", func(f *fakeHousehold) { f.err = errors.New("store closed") }, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.set(func(f *fakeHousehold) {
				f.values, f.used, f.err = onAt60(), 38, nil
				if tc.setup != nil {
					tc.setup(f)
				}
			})
			var st statusResult
			res := r.ok("batocera_get_status", nil, &st)
			if mustJSON(t, st.Limits) != mustJSON(t, tc.want) {
				t.Errorf("limits %s, want %s", mustJSON(t, st.Limits), mustJSON(t, tc.want))
			}
			if tc.want == nil {
				if strings.Contains(text(res), "Play-time") || len(st.Limitations) != 1 ||
					!strings.HasPrefix(st.Limitations[0], "The household's play-time rules could not be read (store closed)") {
					t.Errorf("unreadable rules: %q, limitations %q", text(res), st.Limitations)
				}
				return
			}
			if !strings.Contains(text(res), tc.text) {
				t.Errorf("text %q, want %q in it", text(res), tc.text)
			}
		})
	}
}

// TestLimitsSchemaIsTheReport: batocera_get_limits' output schema names
// exactly household.Report's JSON fields (and the cabinet), so a field
// added to the report fails here, not in a client.
func TestLimitsSchemaIsTheReport(t *testing.T) {
	var rep map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, LimitsResult{Report: completeReport(household.Report{})})), &rep); err != nil {
		t.Fatal(err)
	}
	tl := toolDef(t, "batocera_get_limits")
	keys := func(m map[string]any) string { return strings.Join(slices.Sorted(maps.Keys(m)), ",") }
	if got, want := keys(tl.OutputSchema.Properties), keys(rep); got != want {
		t.Errorf("schema properties %s, report fields %s", got, want)
	}
	rules := tl.OutputSchema.Properties["rules"].(js)["properties"].(map[string]any)
	if got, want := keys(rules), keys(rep["rules"].(map[string]any)); got != want {
		t.Errorf("rules: schema properties %s, report fields %s", got, want)
	}
	if len(tl.OutputSchema.Required) != len(tl.OutputSchema.Properties) {
		t.Errorf("not every field is required: %v", tl.OutputSchema.Required)
	}
}

// TestSetPlayer: a profile of the household is chosen, again is unchanged, "" is none; a name the
// household does not have, or a household without profiles, is refused naming what there is.
func TestSetPlayer(t *testing.T) {
	f := newFakeHousehold(map[string]string{hp + "enabled": "1", hp + "profiles": "alice,bob"})
	r := householdRig(t, Options{}, f)
	var got LimitsActionResult
	r.ok("batocera_set_player", map[string]any{"player": " Alice "}, &got)
	if got.Outcome != outcomeDone || got.Limits.Player == nil || *got.Limits.Player != "alice" || strings.Join(got.Sent, "") != "PLAYER alice" {
		t.Errorf("alice: %+v %+v", got.ActionResult, got.Limits)
	}
	r.ok("batocera_set_player", map[string]any{"player": "alice"}, &got)
	if got.Outcome != outcomeUnchanged {
		t.Errorf("alice again: %+v", got.ActionResult)
	}
	r.ok("batocera_set_player", map[string]any{"player": ""}, &got)
	if got.Outcome != outcomeDone || got.Limits.Player != nil || strings.Join(f.takeCalls(), "|") != `SetPlayer "alice" by mcp|SetPlayer "" by mcp` {
		t.Errorf("none: %+v", got.ActionResult)
	}
	if msg := r.refused("batocera_set_player", map[string]any{"player": "carol"}); !strings.Contains(msg, "alice, bob") {
		t.Errorf("carol: %q", msg)
	}
	f.set(func(f *fakeHousehold) { f.values = map[string]string{hp + "enabled": "1"} })
	if msg := r.refused("batocera_set_player", map[string]any{"player": "alice"}); !strings.Contains(msg, "cabinet.household.profiles") {
		t.Errorf("no profiles: %q", msg)
	}
}

// TestSetUIMode: Kid is applied and read back in the limits; the same mode
// again changes nothing; a mode that is not ES's, and a change the daemon
// refuses (a game runs), are refused with the reason and nothing done.
func TestSetUIMode(t *testing.T) {
	f := newFakeHousehold(onAt60())
	r := householdRig(t, Options{}, f)
	var got LimitsActionResult
	r.ok("batocera_set_ui_mode", map[string]any{"mode": "Kid"}, &got)
	if got.Outcome != outcomeDone || got.Limits.UIMode == nil || *got.Limits.UIMode != "Kid" ||
		strings.Join(got.Sent, "|") != "S31emulationstation stop|UIMode=Kid|S31emulationstation start" {
		t.Errorf("Kid: %+v ui_mode %v", got.ActionResult, got.Limits.UIMode)
	}
	r.ok("batocera_set_ui_mode", map[string]any{"mode": "Kid"}, &got)
	if got.Outcome != outcomeUnchanged || len(got.Sent) != 0 {
		t.Errorf("Kid again: %+v", got.ActionResult)
	}
	if msg := r.refused("batocera_set_ui_mode", map[string]any{"mode": "kid"}); !strings.Contains(msg, "'Full', 'Kiosk', 'Kid'") {
		t.Errorf("kid: %q", msg)
	}
	f.set(func(f *fakeHousehold) { f.uiErr = fmt.Errorf("Tetris: %w", uimode.ErrGameRunning) })
	if msg := r.refused("batocera_set_ui_mode", map[string]any{"mode": "Full"}); !strings.Contains(msg, "Not changed: Tetris: a game is running") {
		t.Errorf("during a game: %q", msg)
	}
	if calls := strings.Join(f.takeCalls(), "|"); calls != "SetUIMode Kid by mcp" {
		t.Errorf("calls %s", calls)
	}
}
