package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
)

// rules parses cabinet.household.* keys given without the prefix.
func rules(t *testing.T, kv ...string) household.Rules {
	t.Helper()
	values := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		values[household.Prefix+kv[i]] = kv[i+1]
	}
	r, errs := household.Parse(values)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return r
}

// daemonReports is a daemon whose status carries the report of r and st, as
// `cabinet serve` builds it.
func daemonReports(r household.Rules, st household.Status) func(context.Context) (*household.Report, error) {
	return func(context.Context) (*household.Report, error) {
		rep := household.NewReport(r, st, time.UTC)
		return &rep, nil
	}
}

// The play-time check shows the rules, today's budget and the clock's
// trust from the daemon's report, and the configured rules alone when the
// daemon does not answer.
func TestDoctorPlayTime(t *testing.T) {
	notRunning := func(context.Context) (*household.Report, error) {
		return nil, errors.New("cabinet serve is not running")
	}
	starting := func(context.Context) (*household.Report, error) { return nil, nil }
	family := rules(t, "enabled", "1", "minutes.daily", "90", "minutes.mon", "60", "minutes.sat", "0", "bedtime", "21:00-07:00")
	const familyRules = "on — 90 min a day (Mon 60, Sat 0), bedtime 21:00-07:00, warnings at 15,5,1 min, at the limit save_quit"
	sunday := household.Status{Enabled: true, State: household.StateOK, Day: "2026-12-06", Weekday: time.Sunday, ClockTrusted: true,
		Limit: 90, Bonus: 15, Used: 35*time.Minute + 20*time.Second, Left: 69*time.Minute + 40*time.Second, SessionLeft: -1}
	untrusted := sunday
	untrusted.ClockTrusted = false
	bedtime := sunday
	bedtime.State, bedtime.InBedtime, bedtime.Refusal = household.StateBedtime, true, "It's bedtime: games are back at 07:00."
	bedtime.NextPlay = time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC)
	monday := household.Status{Enabled: true, State: household.StateOK, Day: "2026-12-07", Weekday: time.Monday, ClockTrusted: true,
		Limit: 30, Used: 10 * time.Minute, Left: 20 * time.Minute, SessionLeft: -1}
	paused := household.Status{State: household.StatePaused, Day: "2026-12-06", Weekday: time.Sunday, ClockTrusted: true, Paused: true,
		Limit: -1, Left: -1, SessionLeft: -1, Refusal: "Play is paused."}
	sessions := rules(t, "enabled", "1", "session_minutes", "45", "warn_at", "", "minutes.sat", "120", "min_start_minutes", "5")
	playing := household.Status{Enabled: true, State: household.StateOK, Day: "2026-12-06", Weekday: time.Sunday, ClockTrusted: true,
		Limit: -1, Used: 33 * time.Minute, Left: -1, SessionLeft: 12 * time.Minute}

	for _, tt := range []struct {
		name   string
		env    PlayTimeEnv
		status Status
		detail string
		lines  []string // in order
		hint   string   // contained
		facts  string   // contained in one fact
	}{
		{"off, no daemon", PlayTimeEnv{Rules: household.Default(), Daemon: notRunning}, Skip, playTimeOff, nil, "", ""},
		{"off, the daemon says so", PlayTimeEnv{Rules: family, Daemon: daemonReports(household.Default(), household.Status{State: household.StateOff, Limit: -1, Left: -1, SessionLeft: -1})},
			Skip, playTimeOff, nil, "", ""},
		{"off, but paused", PlayTimeEnv{Daemon: daemonReports(household.Default(), paused)}, Warn, "off, but play is paused: a game started now is ended", nil,
			"switch.batocera_pause_play", ""},
		{"on, no daemon", PlayTimeEnv{Rules: family, Daemon: notRunning}, Warn, familyRules,
			[]string{"Today's budget and the clock: only `cabinet serve` counts play and enforces the rules, and it does not answer (see the daemon check)"},
			"nothing limits play", ""},
		{"on, the daemon not asked", PlayTimeEnv{Rules: family}, Warn, familyRules, []string{"Today's budget and the clock: only `cabinet serve`"}, "batocera-services start cabinet", ""},
		{"on, the daemon starting", PlayTimeEnv{Rules: family, Daemon: starting}, Warn, familyRules,
			[]string{"Today's budget: cabinet serve answers but has not counted play yet (it is starting)"}, "again in a moment", ""},
		{"on, clock set", PlayTimeEnv{Rules: household.Default(), Daemon: daemonReports(family, sunday)}, OK, familyRules, []string{
			"Today (2026-12-06, Sunday): limit 90 min, used 35 min, extra +15, 70 min left; state ok",
			"Clock: set (NTP or clock chip) — days and bedtime follow it"}, "", ""},
		{"on, clock not set", PlayTimeEnv{Daemon: daemonReports(family, untrusted)}, Warn, familyRules, []string{
			"Today (2026-12-06, Sunday): limit 90 min, used 35 min, extra +15, 70 min left; state ok",
			"Clock: NOT set yet — today is the last day the cabinet knew (2026-12-06); bedtime waits until NTP sets the clock"}, "NTP", ""},
		{"bedtime", PlayTimeEnv{Daemon: daemonReports(family, bedtime)}, OK, familyRules, []string{
			"Today (2026-12-06, Sunday): limit 90 min, used 35 min, extra +15, 70 min left; state bedtime",
			"Clock: set (NTP or clock chip) — days and bedtime follow it",
			"A game started now would be ended: It's bedtime: games are back at 07:00."}, "", "play is possible again at 2026-12-07T07:00:00Z"},
		{"a limit set for today", PlayTimeEnv{Daemon: daemonReports(family, monday)}, OK, familyRules, []string{
			"Today (2026-12-07, Monday): limit 30 min (set for today), used 10 min, 20 min left; state ok"}, "", ""},
		{"a session limit, no daily one", PlayTimeEnv{Daemon: daemonReports(sessions, playing)}, OK,
			"on — no daily limit except Sat 120 min, at most 45 min a game, no warnings, at the limit save_quit, a game starts with at least 5 min left",
			[]string{"Today (2026-12-06, Sunday): no limit, used 33 min, 12 min left for this game; state ok"}, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := checkPlayTime(context.Background(), tt.env)
			if r.Status != tt.status || r.Detail != tt.detail {
				t.Errorf("got %s %q, want %s %q", r.Status, r.Detail, tt.status, tt.detail)
			}
			if len(r.Lines) < len(tt.lines) {
				t.Fatalf("lines %q, want %q", r.Lines, tt.lines)
			}
			for i, want := range tt.lines {
				if !strings.HasPrefix(r.Lines[i], want) {
					t.Errorf("line %d = %q, want %q", i, r.Lines[i], want)
				}
			}
			if tt.hint == "" && r.Hint != "" || !strings.Contains(r.Hint, tt.hint) {
				t.Errorf("hint %q, want %q", r.Hint, tt.hint)
			}
			if tt.facts != "" && !strings.Contains(strings.Join(r.Facts, "\n"), tt.facts) {
				t.Errorf("facts %q, want %q", r.Facts, tt.facts)
			}
		})
	}
}

// The play time comes last, after the daemon's check whose status it
// reads, and its lines are shown without --verbose and kept in the JSON.
func TestDoctorPlayTimeSection(t *testing.T) {
	family := rules(t, "enabled", "1", "minutes.daily", "20", "bedtime", "20:30-07:00", "warn_at", "5,1")
	st := household.Status{Enabled: true, State: household.StateTimeUp, Day: "2026-12-06", Weekday: time.Sunday, ClockTrusted: true,
		Limit: 20, Bonus: 15, Used: 35 * time.Minute, Left: 0, SessionLeft: -1, Refusal: "Time is up for today. Play again tomorrow from 07:00."}
	env := Env{Extra: []Check{{"daemon", func(context.Context, []Result) Result { return Result{Status: OK, Detail: "cabinet serve runs"} }}},
		PlayTime: PlayTimeEnv{Daemon: daemonReports(family, st)}}
	checks := Checks(env)
	if n := len(checks); n < 3 || checks[n-3].Name != "daemon" || checks[n-2].Name != CheckPlayTime || checks[n-1].Name != CheckSaveSync {
		t.Fatalf("the last checks are not the daemon's, the play time, then the save sync")
	}
	rep := Run(context.Background(), checks[len(checks)-3:len(checks)-1], time.Second)
	var out strings.Builder
	rep.Write(&out, false)
	want := `OK   daemon     cabinet serve runs
OK   playtime   on — 20 min a day, bedtime 20:30-07:00, warnings at 5,1 min, at the limit save_quit
                Today (2026-12-06, Sunday): limit 20 min, used 35 min, extra +15, 0 min left; state time_up
                Clock: set (NTP or clock chip) — days and bedtime follow it
                A game started now would be ended: Time is up for today. Play again tomorrow from 07:00.
All checks passed.
`
	if out.String() != want {
		t.Errorf("doctor prints:\n%s\nwant:\n%s", out.String(), want)
	}
	var js strings.Builder
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Checks []Result `json:"checks"`
	}
	if err := json.Unmarshal([]byte(js.String()), &got); err != nil {
		t.Fatal(err)
	}
	if r := got.Checks[1]; r.Name != CheckPlayTime || len(r.Lines) != 3 || !strings.HasPrefix(r.Lines[0], "Today (2026-12-06, Sunday)") {
		t.Errorf("JSON play time = %+v", r)
	}
}

// TestDoctorProfilesAndPads: the check lists the profiles with their pads and each pad connected
// with its id (to bind one) and whose it is.
func TestDoctorProfilesAndPads(t *testing.T) {
	r := rules(t, "enabled", "1", "profiles", "alice,bob", "profile.alice.pad", "A0:AB:51:00:00:0A")
	pads := func() ([]controllers.Pad, error) {
		return []controllers.Pad{{Key: "a0:ab:51:00:00:0a", Name: "Wireless Controller"}, {Key: "usb-0000:00:14.0-1/input0", Name: "Arcade Stick"}}, nil
	}
	res := checkPlayTime(context.Background(), PlayTimeEnv{Rules: r, Pads: pads})
	got := strings.Join(res.Lines, "\n")
	for _, want := range []string{"Profiles: alice (pad a0:ab:51:00:00:0a), bob",
		"Wireless Controller [a0:ab:51:00:00:0a] — alice's; Arcade Stick [usb-0000:00:14.0-1/input0]"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines %q lack %q", got, want)
		}
	}
	res = checkPlayTime(context.Background(), PlayTimeEnv{Rules: rules(t), Pads: func() ([]controllers.Pad, error) { return nil, nil }})
	if got := strings.Join(res.Lines, "\n"); !strings.Contains(got, "Game pads: none connected") || strings.Contains(got, "Profiles") {
		t.Errorf("no pads, no profiles: %q", got)
	}
}

// TestDoctorUIMode: the play-time check says EmulationStation's mode, and
// what forces it.
func TestDoctorUIMode(t *testing.T) {
	dir := t.TempDir()
	settings, conf := filepath.Join(dir, "es_settings.cfg"), filepath.Join(dir, "batocera.conf")
	os.WriteFile(settings, []byte(`<config><string name="UIMode" value="Kid" /></config>`), 0o644)
	a := &uimode.Applier{Settings: settings, BatoceraConf: conf}
	env := PlayTimeEnv{Rules: household.Rules{}, UIMode: a.Read}
	has := func(want string) {
		t.Helper()
		res := checkPlayTime(context.Background(), env)
		if got := strings.Join(res.Lines, "\n"); !strings.Contains(got, want) {
			t.Errorf("lines:\n%s\nwant %q", got, want)
		}
	}
	has("EmulationStation: Kid mode (no settings menus, only games marked for kids) (select.batocera_ui_mode")
	os.WriteFile(conf, []byte("es.customsargs=--force-kiosk\n"), 0o644)
	has("EmulationStation: Kiosk mode (no settings menus), forced by es.customsargs in batocera.conf")
	os.WriteFile(settings, []byte(`<config><string`), 0o644)
	has("EmulationStation: its mode not read (es_settings.cfg is not valid XML")
}
