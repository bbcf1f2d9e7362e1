package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realmosquitto"
)

// BenchmarkWrappers prints one table: what an ES event costs ES, and the
// configgen script Batocera's launcher, with the daemon up (the hand-over
// into its inbox, in sh) and down (the binary), against what a process
// costs at all — `sh -c true`, a static Go program that only exits, and
// `cabinet version` — and the event's way to a subscriber. Every row's
// runs are interleaved with the others' (round robin), so all meet the
// same load; 500 runs each (CABINET_E2E_BENCH_RUNS). Targets (printed, not
// asserted): wrapper and configgen script with the daemon up median <= sh
// median + 1.5 ms and p95 <= sh p95 + 3 ms; event -> retained state p95 <=
// 10 ms; the standalone path no slower than today's wrapper (the same
// without the hand-over).
//
//	go test -run '^$' -bench Wrappers -benchtime 1x ./daemon/e2e/
func BenchmarkWrappers(b *testing.B) {
	runs := runsOr(benchRuns)
	if raceEnabled {
		b.Log("under -race the daemon is race-built: its figures are not the shipped binary's")
	}
	exitOnly := buildExitOnly(b)
	var out strings.Builder
	kinds := []cabinettest.Kind{cabinettest.Embedded}
	if realmosquitto.Available() == nil {
		kinds = append(kinds, cabinettest.Mosquitto)
	}
	for _, kind := range kinds {
		tb := startBroker(b, kind)
		tb.subscribe = true
		r := newRig(b, tb, "cabinet.log.level=debug", "global.retroachievements=1") // the unlock rows' entities
		scripts := r.cab.Path("/userdata/system/configs/emulationstation/scripts")
		ssStop := filepath.Join(scripts, "screensaver-stop", "cabinet")
		ssStart := filepath.Join(scripts, "screensaver-start", "cabinet")
		configgen := r.cab.Path("/userdata/system/scripts/cabinet.sh")
		achievements := filepath.Join(scripts, "achievements", "cabinet")
		_, today := screensaverStopWrappers(b, r, cabinetBin)
		d := r.startOnline()
		sh := func(script string, args ...string) func() time.Duration {
			return func() time.Duration { return timeCmd(b, r, "/bin/sh", append([]string{script}, args...)...) }
		}
		game := func(ev string) func() time.Duration {
			return func() time.Duration {
				return timeCmd(b, r, "/bin/sh", configgen, ev, "nes", "libretro", "nestopia", "/userdata/roms/nes/a.nes")
			}
		}
		rows := []benchRow{
			{name: "sh -c true", run: func() time.Duration { return timeCmd(b, r, "/bin/sh", "-c", "true") }},
			{name: "static Go program, exit only", run: func() time.Duration { return timeCmd(b, r, exitOnly) }},
			{name: "cabinet version", run: func() time.Duration { return timeCmd(b, r, cabinetBin, "version") }},
			// Within a round: a game starts and stops (a screensaver would
			// not start while it runs), the screensaver stops, then starts.
			{name: "configgen script gameStart, daemon up", run: game("gameStart")},
			{name: "configgen script gameStop, daemon up", run: game("gameStop")},
			{name: "screensaver-stop wrapper, daemon up", run: sh(ssStop)},
			{name: "event -> retained state, daemon up", run: latency(b, r, ssStart, ssStop)}, // after the stop row
			// RetroArch's frame waits for this one (system(), no timeout).
			{name: "achievements wrapper, daemon up", run: sh(achievements, "12345", `Say "Hi" $HOME`, "Defeat the first boss")},
			{name: "event -> unlocked event, daemon up", run: unlockLatency(b, r, achievements)},
		}
		upRows := len(rows)
		measure(rows, runs, false)
		// Wrappers that could not hand over ran the binary, which, through
		// the daemon's socket, logs (debug) "hook handed to the daemon".
		fellBack := strings.Count(readFile(filepath.Join(r.state, "cabinet.log")), `"cmd":"hook"`)
		d.term()
		// The standalone path: the same scripts with no daemon, against
		// today's wrapper (the same without the hand-over); and what the
		// hand-over adds alone, both execing a program that exits at once.
		// The pair first, on its own: the binary's rows leave background
		// work behind (delayed flushers, the flag's linger) that would
		// weigh on whichever row follows them.
		oursStub, todayStub := screensaverStopWrappers(b, r, exitOnly)
		pair := []benchRow{
			{name: "sh -c true", run: func() time.Duration { return timeCmd(b, r, "/bin/sh", "-c", "true") }},
			{name: "wrapper, daemon down, exit-only binary", run: sh(oursStub)},
			{name: "  today's wrapper, exit-only binary", run: sh(todayStub)},
		}
		measure(pair, runs, true)
		down := []benchRow{
			{name: "screensaver-stop wrapper, daemon down", run: sh(ssStop)},
			{name: "  today's wrapper, daemon down", run: sh(today)},
			{name: "configgen script gameStart, daemon down", run: game("gameStart")},
			{name: "configgen script gameStop, daemon down", run: game("gameStop")},
			{name: "achievements wrapper, daemon down", run: sh(achievements, "12345", `Say "Hi" $HOME`, "Defeat the first boss")},
		}
		measure(down, max(runs/5, 20), true) // a binary start each: fewer runs
		rows = append(append(rows, pair...), down...)

		shUp, shDown := rows[0].stats, rows[upRows].stats
		fmt.Fprintf(&out, "\n%s broker, %d runs per row (interleaved), %d for the rows that start the binary\n", kind, runs, max(runs/5, 20))
		fmt.Fprintf(&out, "  %-44s %9s %9s %9s %9s %s\n", "", "median", "p95", "max", "/sh", "target")
		for j, row := range rows {
			base := shUp
			if j >= upRows {
				base = shDown
			}
			target := ""
			switch {
			case strings.Contains(row.name, "daemon up") && !strings.HasPrefix(row.name, "event"):
				target = verdict(row.stats.median <= base.median+1500*time.Microsecond && row.stats.p95 <= base.p95+3*time.Millisecond,
					"median <= sh+1.5ms, p95 <= sh p95+3ms")
			case strings.HasPrefix(row.name, "event"):
				target = verdict(row.stats.p95 <= 10*time.Millisecond, "p95 <= 10ms")
			case row.name == "wrapper, daemon down, exit-only binary":
				target = verdict(row.stats.median <= rows[j+1].stats.median+500*time.Microsecond, "median <= today's + 0.5ms")
			}
			fmt.Fprintf(&out, "  %-44s %9s %9s %9s %8.2fx %s\n", row.name, ms(row.stats.median), ms(row.stats.p95), ms(row.stats.max),
				float64(row.stats.median)/float64(base.median), target)
			b.ReportMetric(ms64(row.stats.median), fmt.Sprintf("%s_%d_median_ms", kind, j))
		}
		fmt.Fprintf(&out, "  (daemon up: %d hook log line(s), i.e. wrappers that fell back to the binary and logged)\n", fellBack)
	}
	fmt.Print(out.String())
}

type benchRow struct {
	name  string
	run   func() time.Duration
	stats stats
}

// measure runs every row runs times, round robin after a few warm-up
// rounds, and fills in their figures. With rotate each round starts one
// row further on, so no row always runs first after the previous round's
// (the standalone rows, whose order does not matter); without it the order
// is kept, for rows that depend on the ones before (a game's start and
// stop, the screensaver's stop and start).
func measure(rows []benchRow, runs int, rotate bool) {
	times := make([][]time.Duration, len(rows))
	for i := -5; i < runs; i++ {
		for k := range rows {
			j := k
			if rotate {
				j = (k + max(i, 0)) % len(rows)
			}
			d := rows[j].run()
			if i >= 0 {
				times[j] = append(times[j], d)
			}
		}
	}
	for j := range rows {
		rows[j].stats = spreadOf(times[j])
	}
}

// latency times the screensaver-start wrapper spawned until a subscriber
// has the state it sets. The round's screensaver-stop row turns it off
// again before the next round; the row waits until the broker has that
// OFF first: a daemon that takes the round's events in one apply (a game's
// start and end, the stop and this start, within a few milliseconds)
// publishes only the state they end in, ON again, which is no change.
func latency(b *testing.B, r *rig, on, _ string) func() time.Duration {
	return func() time.Duration {
		r.obs.AwaitLatest(r.topic("screensaver"), "OFF")
		from := r.obs.Mark()
		start := time.Now()
		timeCmd(b, r, "/bin/sh", on, "dim")
		m := r.obs.AwaitMsg(from, r.topic("screensaver"), "ON")
		return m.At.Sub(start)
	}
}

// unlockLatency times the achievements wrapper spawned until a subscriber
// has its unlocked event. Each run unlocks another id: the same one again
// within seconds is announced once.
func unlockLatency(b *testing.B, r *rig, wrapper string) func() time.Duration {
	id := 100000
	return func() time.Duration {
		id++
		from := r.obs.Mark()
		start := time.Now()
		timeCmd(b, r, "/bin/sh", wrapper, strconv.Itoa(id), "Latency", "One more")
		key := fmt.Sprintf(`"id":%d,`, id)
		var at time.Time
		cabinettest.Await(b, "unlock "+key, r.obs.Changed, func() (bool, string) {
			for _, m := range r.obs.Since(from) {
				if m.Topic == r.topic("achievement") && strings.Contains(m.Payload, key) {
					at = m.At
					return true, ""
				}
			}
			return false, "not yet"
		})
		return at.Sub(start)
	}
}

// timeCmd runs a command as ES runs a hook (output discarded) and returns
// its wall time from spawn to exit.
func timeCmd(b *testing.B, r *rig, name string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), r.env()...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %q: %v", name, args, err)
	}
	return time.Since(start)
}

// buildExitOnly builds the smallest static Go program: what any Go binary
// costs to start, whatever it does.
func buildExitOnly(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module exitonly\n\ngo 1.22\n"), 0o644)
	bin := filepath.Join(dir, "exitonly")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the exit-only program: %v\n%s", err, out)
	}
	return bin
}

// screensaverStopWrappers renders the screensaver-stop wrapper execing bin,
// and today's — the same without the hand-over, as it was before it — with
// the rig's run dir.
func screensaverStopWrappers(b *testing.B, r *rig, bin string) (ours, today string) {
	b.Helper()
	l := packaging.DefaultLayout()
	l.Binary, l.RunDir = bin, r.cab.Path("/var/run/cabinet")
	l.ESScripts, l.UserScripts = b.TempDir(), b.TempDir()
	dir := b.TempDir()
	ours, today = filepath.Join(dir, "ours"), filepath.Join(dir, "today")
	for _, f := range l.ESScriptFiles() {
		if strings.HasSuffix(f.Path, "/screensaver-stop/cabinet") {
			i := strings.Index(f.Content, "# While cabinet serve runs")
			j := i + strings.Index(f.Content[i:], "\nfi\n") + len("\nfi\n")
			os.WriteFile(ours, []byte(f.Content), 0o755)
			os.WriteFile(today, []byte(f.Content[:i]+f.Content[j:]), 0o755)
		}
	}
	return ours, today
}
