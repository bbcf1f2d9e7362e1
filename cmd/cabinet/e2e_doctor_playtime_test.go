package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/doctor"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestDoctorPlayTimeEndToEnd runs `cabinet doctor` against the simulator
// with the play-time rules as configured: off, one line saying how to turn
// them on; on without `cabinet serve`, the rules from the configuration and
// why today's budget is missing; on with it, today's budget and the clock
// from the daemon's status, in the text and in --json.
func TestDoctorPlayTimeEndToEnd(t *testing.T) {
	t.Parallel()
	cab, err := simulator.Start(simulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cab.Close() })

	off, err := cab.WriteConfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ := runBinary(t, configEnv(off), "doctor")
	if want := `SKIP playtime   off — to limit play, set cabinet.household.enabled=1 (README: "Play time for children")`; !lineStarting(out, want) {
		t.Errorf("rules off: no line %q in:\n%s", want, out)
	}

	on, err := cab.WriteConfig(t.TempDir(), "cabinet.household.enabled=1", "cabinet.household.minutes.daily=90",
		"cabinet.household.minutes.mon=60", "cabinet.household.minutes.sat=0", "cabinet.household.bedtime=21:00-07:00")
	if err != nil {
		t.Fatal(err)
	}
	env := configEnv(on)
	const rules = "on — 90 min a day (Mon 60, Sat 0), bedtime 21:00-07:00, warnings at 15,5,1 min, at the limit save_quit"
	_, out, _ = runBinary(t, env, "doctor")
	for _, want := range []string{
		"WARN playtime   " + rules,
		"                Today's budget and the clock: only `cabinet serve` counts play and enforces the rules, and it does not answer",
		"                -> start it (batocera-services start cabinet",
	} {
		if !lineStarting(out, want) {
			t.Errorf("no daemon: no line starting %q in:\n%s", want, out)
		}
	}

	_, _, daemonLog, stop := startServe(t, env)
	defer stop()
	today := regexp.MustCompile(`^Today \(\d{4}-\d{2}-\d{2}, (Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\): limit (90|60|0) min, used 0 min, (90|60|0) min left; state (ok|bedtime|time_up)$`)
	var play doctor.Result
	cabinettest.Await(t, "the daemon's play-time report in doctor --json", nil, func() (bool, string) {
		_, js, _ := runBinary(t, env, "doctor", "--json")
		var rep doctor.Report
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			return false, err.Error() + ": " + js
		}
		play, _ = doctor.Find(rep.Results, doctor.CheckPlayTime)
		return len(play.Lines) >= 2 && strings.HasPrefix(play.Lines[0], "Today ("), js
	})
	if play.Detail != rules || !today.MatchString(play.Lines[0]) {
		t.Errorf("play time with the daemon = %q, %q; want %q and a line like %s\ndaemon log:\n%s", play.Detail, play.Lines, rules, today, daemonLog)
	}
	clockSet := play.Lines[1] == "Clock: set (NTP or clock chip) — days and bedtime follow it"
	if !clockSet && !strings.HasPrefix(play.Lines[1], "Clock: NOT set yet — today is the last day the cabinet knew (") {
		t.Errorf("clock line %q", play.Lines[1])
	}
	// Bedtime (or a Saturday's 0 minutes) refuses a launch now, and says why.
	if refused := strings.Contains(play.Lines[0], "state bedtime") || strings.Contains(play.Lines[0], "state time_up"); refused !=
		(len(play.Lines) == 3 && strings.HasPrefix(play.Lines[2], "A game started now would be ended: ")) {
		t.Errorf("lines %q: a refusal shown for another state, or not shown", play.Lines)
	}
	_, out, _ = runBinary(t, env, "doctor")
	status := map[bool]string{true: "OK  ", false: "WARN"}[clockSet]
	for _, want := range []string{status + " playtime   " + rules, "                " + play.Lines[0], "                " + play.Lines[1]} {
		if !lineStarting(out, want) {
			t.Errorf("with the daemon: no line starting %q in:\n%s", want, out)
		}
	}
}
