package daemon

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// BenchmarkHouseholdTiming prints, over 50 games on the daemon's fake clock
// (the simulated cabinet's ES and RetroArch are real sockets), how long
// after its point a warning lands over the game and how long after the
// limit the game is gone from ES: on the fake clock (the loop's scheduling:
// it should wake at the point itself) and in real time from the clock
// reaching the point (the work: RetroArch's GET_STATUS and SHOW_MSG; the
// save, ES's /emukill and the wait for /runningGame to clear). Beside them,
// in the same run, the floors: SHOW_MSG sent straight to RetroArch, and
// batocera_quit_game called straight. Targets (printed, not asserted):
// warning p95 within 1 s of its point, quit p95 within 2 s of the limit.
//
//	go test -run '^$' -bench HouseholdTiming ./daemon/
func BenchmarkHouseholdTiming(b *testing.B) {
	runs := 50
	if v, err := strconv.Atoi(os.Getenv("CABINET_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	r := householdRig(b, "enabled", "1", "minutes.daily", "2", "warn_at", "1")
	// shown is the number of messages RetroArch has shown so far; since
	// says whether one shown after the first n contains text.
	shown := func() int { return r.cab.RetroArch.Snapshot().MessagesShown }
	since := func(n int, text string) bool {
		snap := r.cab.RetroArch.Snapshot()
		msgs := snap.Messages
		if k := snap.MessagesShown - n; k < len(msgs) {
			msgs = msgs[len(msgs)-k:]
		}
		return slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, text) })
	}
	var warnFake, warnReal, quitFake, quitReal []time.Duration
	for i := 0; i < runs; i++ {
		if i > 0 {
			if _, err := r.d.household.Grant(3, "benchmark"); err != nil {
				b.Fatal(err)
			}
		}
		seen := shown()
		r.play(i % len(r.cab.Library.Games("nes")))
		var st = r.d.household.Status()
		cabinettest.Await(b, "the game counted", r.d.eng.appliedCh, func() bool {
			st = r.d.household.Status()
			return st.Playing && st.Remaining > time.Minute+10*time.Second
		})
		point := r.clock.Now().Add(st.Remaining - time.Minute)
		limit := r.clock.Now().Add(st.Remaining)
		reached := r.stepTo(point)
		warned := func() bool { return since(seen, "1 minute of play left today") }
		r.until("the warning over the game", func() (bool, string) { return warned(), "not shown" })
		cabinettest.Await(b, "the warning over the game", nil, warned)
		warnReal = append(warnReal, time.Since(reached))
		warnFake = append(warnFake, r.clock.Now().Sub(point))
		reached = r.stepTo(limit)
		quit := func() bool { _, running := r.cab.ES.Running(); return !running }
		// Stepped until the loop decides (its timer may fall just after the
		// limit), then real time only: the quit itself is ES's.
		r.until("the limit", func() (bool, string) {
			v, _ := r.broker.Retained(r.settings.StateTopic(haentities.LimitState))
			return string(v) == string(household.StateTimeUp), string(v) // the loop's own
		})
		cabinettest.Await(b, "the game quit", nil, quit)
		quitReal = append(quitReal, time.Since(reached))
		quitFake = append(quitFake, r.clock.Now().Sub(limit))
		r.ended()
	}
	// The floors, on the same rig, with time to play.
	if _, err := r.d.household.Grant(120, "benchmark"); err != nil {
		b.Fatal(err)
	}
	var showFloor, quitFloor []time.Duration
	srv := r.d.mcpServer(false)
	for i := 0; i < runs; i++ {
		// ES alone (the rules' loop is not involved in the floors).
		g := r.cab.Library.Games("nes")[i%len(r.cab.Library.Games("nes"))]
		cabinettest.Await(b, "ES launching "+g.Name, nil, func() bool { return r.cab.ES.Launch("nes", g.ID) == nil })
		waitRA(b, r.cab.RetroArch, "game loaded", func(s fakeretroarch.Snapshot) bool { return s.Loaded && s.Listening })
		r.clock.Advance(10 * time.Second) // the quit tool's rate limit gives a token every 5 s
		text := fmt.Sprintf("floor %d", i)
		start := time.Now()
		if err := r.d.links().RetroArch.ShowMessage(context.Background(), text); err != nil {
			b.Fatal(err)
		}
		cabinettest.Await(b, "the floor's message", nil, func() bool {
			return slices.Contains(r.cab.RetroArch.Snapshot().Messages, text)
		})
		showFloor = append(showFloor, time.Since(start))
		start = time.Now()
		if _, err := srv.Call(context.Background(), "batocera_quit_game", map[string]any{}); err != nil {
			b.Fatal(err)
		}
		cabinettest.Await(b, "the floor's quit", nil, func() bool { _, running := r.cab.ES.Running(); return !running })
		quitFloor = append(quitFloor, time.Since(start))
	}
	p95 := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[(len(s)*95+99)/100-1]
	}
	med := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	verdict := func(ok bool, target string) string {
		if ok {
			return "ok: " + target
		}
		return "MISSED: " + target
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nplay-time rules, %d games on the fake clock (simulated ES and RetroArch on sockets)\n", runs)
	fmt.Fprintf(&out, "  %-46s %10s %10s %s\n", "", "median", "p95", "")
	row := func(name string, ds []time.Duration, note string) {
		fmt.Fprintf(&out, "  %-46s %10v %10v %s\n", name, med(ds).Round(time.Microsecond), p95(ds).Round(time.Microsecond), note)
	}
	row("warning: late on the fake clock", warnFake, "")
	row("warning: real time, point -> over the game", warnReal, verdict(p95(warnFake)+p95(warnReal) <= time.Second, "p95 within 1 s"))
	row("floor: SHOW_MSG straight to RetroArch", showFloor, "")
	row("quit: late on the fake clock", quitFake, "")
	row("quit: real time, limit -> gone from ES", quitReal, verdict(p95(quitFake)+p95(quitReal) <= 2*time.Second, "p95 within 2 s"))
	row("floor: batocera_quit_game", quitFloor, "")
	b.ReportMetric(float64(p95(warnReal))/float64(time.Millisecond), "warn_p95_ms")
	b.ReportMetric(float64(p95(quitReal))/float64(time.Millisecond), "quit_p95_ms")
	fmt.Print(out.String())
}
