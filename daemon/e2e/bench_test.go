package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realmosquitto"
)

// benchRuns is how many runs each row times (CABINET_E2E_BENCH_RUNS
// overrides it); idleWindow how long the idle daemon is watched
// (CABINET_E2E_IDLE, a Go duration, at least a minute by default).
const (
	benchRuns  = 500
	idleWindow = 60 * time.Second
)

// BenchmarkDaemon prints, with the daemon running, in one run: the start
// time of `cabinet version` (the floor: process start plus package init),
// the wall time of `cabinet hook` from spawn to exit through the daemon's
// socket, and the event-to-broker latency (hook spawned → the state
// received by a subscriber), medians and p95 over 500 runs per broker; then
// the idle daemon's CPU time per minute and its RSS. Floor and hook runs
// alternate, so both meet the same machine load. Targets (printed, not
// asserted): hook median <= floor + 1.5 ms, hook p95 <= floor p95 + 3 ms,
// latency p95 <= floor p95 + 8 ms, idle CPU < 0.5 s per minute.
//
//	go test -run '^$' -bench . ./daemon/e2e/
func BenchmarkDaemon(b *testing.B) {
	runs := runsOr(benchRuns)
	idle := idleWindow
	if v, err := time.ParseDuration(os.Getenv("CABINET_E2E_IDLE")); err == nil && v > 0 {
		idle = v
	}
	if raceEnabled {
		b.Log("under -race the daemon is race-built: its figures are not the shipped binary's")
	}
	kinds := []cabinettest.Kind{cabinettest.Embedded}
	if realmosquitto.Available() == nil {
		kinds = append(kinds, cabinettest.Mosquitto)
	} else {
		b.Logf("no Mosquitto here: embedded broker only (%v)", realmosquitto.Available())
	}
	// Beside the idle daemon, watched over the same window (so under the
	// same load), a daemon enforcing the household's play-time rules:
	// limits, a bedtime, the HA controls on. Started first, it has
	// settled (names cached, everything announced) by the window.
	rulesRig := newRig(b, startBroker(b, cabinettest.Embedded), "cabinet.log.level=info", "cabinet.household.enabled=1",
		"cabinet.household.minutes.daily=90", "cabinet.household.minutes.sat=120", "cabinet.household.bedtime=21:00-07:00",
		"cabinet.ha.household=1")
	rulesRig.startOnline()
	var out strings.Builder
	var idleRig *rig
	for _, kind := range kinds {
		tb := startBroker(b, kind)
		tb.subscribe = true // latency to a real subscriber
		r := newRig(b, tb, "cabinet.log.level=info")
		r.startOnline()
		floor, wall, lat := timeHooks(b, r, runs)
		fallbacks := strings.Count(readFile(filepath.Join(r.state, "cabinet.log")), "daemon did not ack in time")
		fmt.Fprintf(&out, "\n%s broker, %d runs each, daemon running (%d hook(s) fell back to the standalone path)\n", kind, runs, fallbacks)
		fmt.Fprintf(&out, "  %-34s %9s %9s %9s %12s %11s %s\n", "", "median", "p95", "max", "median/floor", "p95-floor", "target")
		row := func(name string, s stats, target string) {
			fmt.Fprintf(&out, "  %-34s %9s %9s %9s %11.2fx %11s %s\n", name, ms(s.median), ms(s.p95), ms(s.max),
				float64(s.median)/float64(floor.median), ms(s.p95-floor.p95), target)
		}
		row("cabinet version (floor)", floor, "")
		row("cabinet hook, spawn to exit", wall, verdict(wall.median <= floor.median+1500*time.Microsecond && wall.p95 <= floor.p95+3*time.Millisecond,
			"median <= floor+1.5ms, p95 <= floor p95+3ms"))
		row("hook spawned -> state on broker", lat, verdict(lat.p95 <= floor.p95+8*time.Millisecond, "p95 <= floor p95+8ms"))
		b.ReportMetric(ms64(floor.median), string(kind)+"_floor_median_ms")
		b.ReportMetric(ms64(wall.median), string(kind)+"_hook_median_ms")
		b.ReportMetric(ms64(wall.p95), string(kind)+"_hook_p95_ms")
		b.ReportMetric(ms64(lat.p95), string(kind)+"_latency_p95_ms")
		idleRig = r // the last broker's daemon: Mosquitto when there is one
	}

	fmt.Fprintf(&out, "\n%s", initCost(b, idleRig, 21))

	type idleFigures struct {
		cpu      time.Duration
		rss, hwm string
	}
	var rulesOn idleFigures
	done := make(chan struct{})
	go func() {
		defer close(done)
		rulesOn.cpu, rulesOn.rss, rulesOn.hwm = idleDaemon(b, rulesRig, idle)
	}()
	cpu, rss, hwm := idleDaemon(b, idleRig, idle)
	<-done
	perMinute := time.Duration(float64(cpu) * float64(time.Minute) / float64(idle))
	rulesPerMinute := time.Duration(float64(rulesOn.cpu) * float64(time.Minute) / float64(idle))
	fmt.Fprintf(&out, "\nidle daemon (%s broker, ES watcher polling), watched %v: CPU %v per minute (%s), VmRSS %s, VmHWM %s\n",
		idleRig.broker.Kind, idle, perMinute.Round(time.Millisecond), verdict(perMinute < 500*time.Millisecond, "< 0.5 s"), rss, hwm)
	ratio := float64(rulesOn.cpu) / float64(max(cpu, time.Millisecond))
	fmt.Fprintf(&out, "same window, play-time rules on (limits, bedtime, HA controls): CPU %v per minute, %.2fx rules off (%s), VmRSS %s, VmHWM %s\n",
		rulesPerMinute.Round(time.Millisecond), ratio, verdict(ratio <= 1.10, "within 10 %"), rulesOn.rss, rulesOn.hwm)
	b.ReportMetric(float64(perMinute)/float64(time.Second), "idle_cpu_s_per_min")
	b.ReportMetric(float64(rulesPerMinute)/float64(time.Second), "idle_rules_cpu_s_per_min")
	// Printed, not logged: the testing package keeps only the first lines
	// of a benchmark's log.
	fmt.Print(out.String())
}

// timeHooks alternates `cabinet version` and a hook that changes the
// screensaver state (on, off, on…), and times each hook's state to the
// broker.
func timeHooks(b *testing.B, r *rig, runs int) (floor, wall, latency stats) {
	b.Helper()
	var fl, wl, lt []time.Duration
	for i := -5; i < runs; i++ { // 5 unmeasured runs warm the caches
		f := spawn(b, r, "version")
		args, want := []string{"hook", "screensaver-start", "dim"}, "ON"
		if (i+5)%2 != 0 { // the first run turns the screensaver on
			args, want = []string{"hook", "screensaver-stop"}, "OFF"
		}
		from := r.obs.Mark()
		start := time.Now()
		w := spawn(b, r, args...)
		m := r.obs.AwaitMsg(from, r.topic("screensaver"), want)
		if i >= 0 {
			fl, wl, lt = append(fl, f), append(wl, w), append(lt, m.At.Sub(start))
		}
	}
	return spreadOf(fl), spreadOf(wl), spreadOf(lt)
}

// initCost says where the floor goes: the package initialisation every
// run of the binary pays before main (GODEBUG=inittrace=1), medians over
// runs, the costliest packages first.
func initCost(b *testing.B, r *rig, runs int) string {
	b.Helper()
	per := map[string][]time.Duration{}
	var totals []time.Duration
	for i := 0; i < runs; i++ {
		cmd := exec.Command(cabinetBin, "version")
		cmd.Env = append(os.Environ(), append(r.env(), "GODEBUG=inittrace=1")...)
		trace, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("cabinet version with inittrace: %v", err)
		}
		var total time.Duration
		for _, l := range strings.Split(string(trace), "\n") {
			// init PKG @0.5 ms, 1.2 ms clock, 100 bytes, 2 allocs
			f := strings.Fields(l)
			if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
				continue
			}
			v, err := strconv.ParseFloat(f[4], 64)
			if err != nil {
				continue
			}
			d := time.Duration(v * float64(time.Millisecond))
			per[f[1]] = append(per[f[1]], d)
			total += d
		}
		totals = append(totals, total)
	}
	type pkg struct {
		name   string
		median time.Duration
	}
	var pkgs []pkg
	for name, ds := range per {
		for len(ds) < runs {
			ds = append(ds, 0)
		}
		pkgs = append(pkgs, pkg{name, spreadOf(ds).median})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].median > pkgs[j].median })
	var s strings.Builder
	fmt.Fprintf(&s, "package init of cabinet version (GODEBUG=inittrace=1, median of %d runs): %s in all; costliest:\n", runs, ms(spreadOf(totals).median))
	for _, p := range pkgs[:min(5, len(pkgs))] {
		fmt.Fprintf(&s, "  %-50s %s\n", p.name, ms(p.median))
	}
	return s.String()
}

// spawn runs the binary once (output discarded, as ES does) and returns
// its wall time from spawn to exit.
func spawn(b *testing.B, r *rig, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(cabinetBin, args...)
	cmd.Env = append(os.Environ(), r.env()...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("cabinet %q: %v", args, err)
	}
	return time.Since(start)
}

// idleDaemon watches the daemon for d without giving it any event and
// returns the CPU time it used (utime+stime) and its resident memory.
func idleDaemon(b *testing.B, r *rig, d time.Duration) (cpu time.Duration, rss, hwm string) {
	b.Helper()
	pid := r.d.pid()
	before := cpuTime(b, pid)
	<-time.After(d) // the measurement window itself, not a synchronisation
	cpu = cpuTime(b, pid) - before
	status := readFile(fmt.Sprintf("/proc/%d/status", pid))
	return cpu, procField(status, "VmRSS:"), procField(status, "VmHWM:")
}

// cpuTime is utime+stime of pid from /proc/<pid>/stat, in clock ticks of
// USER_HZ (100 on Linux).
func cpuTime(b *testing.B, pid int) time.Duration {
	b.Helper()
	s := readFile(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after comm, which may hold spaces
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func procField(status, name string) string {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, name); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// runsOr is CABINET_E2E_BENCH_RUNS when it is a positive number, else def: how many runs a
// benchmark times.
func runsOr(def int) int {
	if v, err := strconv.Atoi(os.Getenv("CABINET_E2E_BENCH_RUNS")); err == nil && v > 0 {
		return v
	}
	return def
}

type stats struct{ median, p95, max time.Duration }

func spreadOf(ds []time.Duration) stats {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return stats{median: s[len(s)/2], p95: s[(len(s)*95+99)/100-1], max: s[len(s)-1]}
}

func verdict(ok bool, target string) string {
	if ok {
		return "met (" + target + ")"
	}
	return "MISSED (" + target + ")"
}

func ms(d time.Duration) string    { return fmt.Sprintf("%.2fms", ms64(d)) }
func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
