package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realmosquitto"
)

// benchRuns is how many processes each row of BenchmarkHookStartup times
// (CABINET_E2E_BENCH_RUNS overrides it).
const benchRuns = 200

// BenchmarkHookStartup prints what every ES event pays: the wall time of
// one process from spawn to exit, median and p95 over 200 runs, for
// `cabinet version` (the floor: runtime start and package inits), `cabinet
// hook` against a broker that is up (embedded and real Mosquitto), one that
// refuses connections and one that accepts TCP and never answers, and
// `python3 -S -c pass` for scale. Targets (not asserted): broker up p95 <=
// floor + 10 ms, refused <= floor + 5 ms, never more than 300 ms.
//
//	go test -run '^$' -bench HookStartup ./hook/e2e/
func BenchmarkHookStartup(b *testing.B) {
	runs := benchRuns
	if v, err := strconv.Atoi(os.Getenv("CABINET_E2E_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	var specs []benchSpec
	add := func(name string, args, env []string) {
		specs = append(specs, benchSpec{name: name, args: args, env: env})
	}
	add("cabinet version (floor)", []string{cabinetBin, "version"}, nil)

	emb, err := mqttbroker.Start(mqttbroker.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	add("hook, embedded broker up", hookArgs(), benchCabinet(b, "up", emb.URL()))
	if realmosquitto.Available() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		mos, err := realmosquitto.Start(ctx, cabinettest.TempDir(b, "bench-mosquitto"), realmosquitto.Options{})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		defer mos.Close()
		add("hook, Mosquitto up", hookArgs(), benchCabinet(b, "mosquitto", mos.URL()))
	}
	add("hook, broker refuses", hookArgs(), benchCabinet(b, "refused", "tcp://"+cabinettest.ClosedAddr(b, "tcp")))
	add("hook, broker silent", hookArgs(), benchCabinet(b, "silent", "tcp://"+silentListener(b)))
	add("hook, MQTT off", hookArgs(), benchCabinet(b, "off", "-"))
	if py := realPython(); py != "" {
		add("python3 -S -c pass", []string{py, "-S", "-c", "pass"}, nil)
	}
	rows := timeProcesses(b, specs, runs)
	floor := rows[0]

	var out strings.Builder
	fmt.Fprintf(&out, "%d runs each, spawn to exit\n", runs)
	fmt.Fprintf(&out, "%-26s %9s %9s %9s %11s %11s\n", "process", "median", "p95", "max", "median/floor", "p95-floor")
	for _, r := range rows {
		fmt.Fprintf(&out, "%-26s %9s %9s %9s %11.2fx %11s\n", r.name, ms(r.median), ms(r.p95), ms(r.max),
			float64(r.median)/float64(floor.median), ms(r.p95-floor.p95))
	}
	b.Logf("\n%s", out.String())
	for _, r := range rows {
		b.ReportMetric(float64(r.p95)/float64(time.Millisecond), strings.NewReplacer(" ", "_", ",", "", "(", "", ")", "").Replace(r.name)+"_p95_ms")
	}
}

// hookArgs alternates the screensaver on and off, so every run changes
// three retained states and publishes them (QoS 1).
func hookArgs() []string { return []string{cabinetBin, "hook", "screensaver-start", "dim"} }

// benchCabinet writes a config for a fresh root and returns the env to run
// the hook with.
func benchCabinet(b *testing.B, name, broker string) []string {
	b.Helper()
	root := cabinettest.TempDir(b, "bench-"+name)
	conf := writeConf(b, root, "bench_"+name, "batocera.conf", cabinetOptions{Broker: broker, MinSessionSeconds: 60, LogLevel: "info"})
	return []string{"CABINET_CONFIG=" + conf}
}

// benchSpec is one process to time.
type benchSpec struct {
	name      string
	args, env []string
}

type benchRow struct {
	name             string
	median, p95, max time.Duration
}

// timeProcesses runs every spec n times, round-robin so that a change of
// load on the machine weighs on every row alike, after 3 unmeasured rounds
// (which create the stores and publish discovery), and returns the spread
// of spawn-to-exit times per spec. Hook runs alternate screensaver-start and
// screensaver-stop.
func timeProcesses(b *testing.B, specs []benchSpec, n int) []benchRow {
	b.Helper()
	took := make([][]time.Duration, len(specs))
	for i := -3; i < n; i++ {
		for j, sp := range specs {
			a := sp.args
			if len(a) > 2 && a[1] == "hook" && i%2 != 0 {
				a = []string{a[0], "hook", "screensaver-stop"}
			}
			cmd := exec.Command(a[0], a[1:]...)
			cmd.Env = append(os.Environ(), sp.env...)
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v", sp.name, err)
			}
			if i >= 0 {
				took[j] = append(took[j], time.Since(start))
			}
		}
	}
	rows := make([]benchRow, len(specs))
	for j, t := range took {
		sort.Slice(t, func(x, y int) bool { return t[x] < t[y] })
		rows[j] = benchRow{name: specs[j].name, median: t[len(t)/2], p95: t[(len(t)*95+99)/100-1], max: t[len(t)-1]}
	}
	return rows
}

// realPython is the python3 interpreter itself, not a wrapper such as a
// pyenv shim (a shell script that would be timed instead).
func realPython() string {
	out, err := exec.Command("python3", "-S", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
