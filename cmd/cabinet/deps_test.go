package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging/release"
)

const module = "github.com/batocera-cabinet/cabinet"

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// daemonMayUse is what the daemon may import of hook/: the shared event
// path (tracking, argv parsing, the journal with its queues, the store, the
// socket protocol, the file layout, the boot clock, play time today).
// Anything else under hook/ is the hook command's own.
var daemonMayUse = []string{"hook/tracker", "hook/argv", "hook/journal", "hook/store", "hook/socket", "hook/paths", "hook/bootclock", "hook/playday"}

// hookMayLink is every package of ours that the hook path (hook/...) may
// link: itself (its store included), Home Assistant's payloads and the MQTT link,
// and batocera.conf's reader (an achievement's hardcore setting; stdlib only).
// A new dependency of the path every ES event runs must be added here on
// purpose.
var hookMayLink = []string{"hook", "haentities", "haentities/mqttlink", "haentities/untrusted", "packaging/batoconf"}

// TestProductionDependencies keeps test machinery (testing, httptest, the
// test kits, anything under simulator/testpeers) out of the binary that
// runs on every ES event, keeps hook and daemon apart (the daemon uses only
// the shared event path of hook/), keeps the hook path to an explicit list,
// and keeps configuration at cmd/: no package below it, tests included,
// imports cmd/....
func TestProductionDependencies(t *testing.T) {
	deps := goList(t, "-deps", ".")
	for _, d := range deps {
		switch {
		case d == "testing", d == "net/http/httptest", strings.HasPrefix(d, "testing/"):
			t.Errorf("the cabinet binary links %s", d)
		case strings.HasSuffix(d, "/peertest"), strings.HasSuffix(d, "/cabinettest"), strings.HasSuffix(d, "/binarytest"):
			t.Errorf("the cabinet binary links test helper %s", d)
		case strings.HasPrefix(d, module+"/simulator/testpeers/"):
			t.Errorf("the cabinet binary links %s: simulator/testpeers holds the real peers' launchers and the test kits, for tests only", d)
		}
	}
	ours := func(d string) (string, bool) {
		if d == module {
			return "", true
		}
		rel, ok := strings.CutPrefix(d, module+"/")
		return rel, ok
	}
	within := func(rel string, list []string) bool {
		for _, p := range list {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				return true
			}
		}
		return false
	}
	for _, d := range goList(t, "-deps", module+"/daemon/...") {
		if rel, ok := ours(d); ok && within(rel, []string{"hook"}) && !within(rel, daemonMayUse) {
			t.Errorf("daemon/... imports %s (allowed of hook/: %v)", d, daemonMayUse)
		}
	}
	for _, d := range goList(t, "-deps", module+"/hook/...") {
		if rel, ok := ours(d); ok && !within(rel, hookMayLink) {
			t.Errorf("the hook path links %s (allowed: %v)", d, hookMayLink)
		}
	}
	var below []string
	for _, p := range goList(t, module+"/...") {
		if rel, _ := ours(p); !strings.HasPrefix(rel, "cmd/") {
			below = append(below, p)
		}
	}
	for _, d := range goList(t, append([]string{"-deps", "-test"}, below...)...) {
		if rel, ok := ours(d); ok && strings.HasPrefix(rel, "cmd/") {
			t.Errorf("a package below cmd/ (or its tests) imports %s: map the configuration in cmd/cabinet instead", d)
		}
	}
}

// TestReleaseDependencies keeps out of a release build (-tags release, as
// packaging/release builds it) what only `cabinet demo` and `cabinet
// simulate` need: the simulator and its fakes, and the demo's embedded MQTT
// broker.
func TestReleaseDependencies(t *testing.T) {
	for _, d := range goList(t, "-deps", "-tags", release.Tags, ".") {
		if d == module+"/simulator" || strings.HasPrefix(d, module+"/simulator/") || strings.HasPrefix(d, "github.com/mochi-mqtt/") {
			t.Errorf("the release binary (-tags %s) links %s, which only demo and simulate need (checkout_release.go stubs them there)", release.Tags, d)
		}
	}
}

// TestStartupCost runs the built binary and reports (not asserts: timing is for
// benchmarks) its start time and the heaviest package inits, and fails if
// one of our own packages does measurable work at init.
func TestStartupCost(t *testing.T) {
	bin := cabinetBinary(t)
	var runs []time.Duration
	for i := 0; i < 15; i++ {
		start := time.Now()
		if err := exec.Command(bin, "version").Run(); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, time.Since(start))
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
	t.Logf("cabinet version: median %v, min %v over %d runs", runs[len(runs)/2], runs[0], len(runs))

	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	// init internal/bytealg @0.004 ms, 0.002 ms clock, 0 bytes, 0 allocs
	re := regexp.MustCompile(`^init (\S+) @\S+ ms, (\S+) ms clock, (\d+) bytes, (\d+) allocs`)
	type initCost struct {
		pkg    string
		ms     float64
		allocs int
	}
	var costs []initCost
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ms, _ := strconv.ParseFloat(m[2], 64)
		allocs, _ := strconv.Atoi(m[4])
		costs = append(costs, initCost{m[1], ms, allocs})
		// Our packages may hold a few sentinel errors; anything more is
		// work every hook run would pay for. (Counted in allocations, not
		// milliseconds: tests never fail on timing.)
		if (strings.HasPrefix(m[1], module) || m[1] == "main") && allocs > 10 {
			t.Errorf("%s does work at init (%.3f ms, %d allocs): keep package-level state lazy", m[1], ms, allocs)
		}
	}
	sort.Slice(costs, func(i, j int) bool { return costs[i].ms > costs[j].ms })
	var total float64
	for _, c := range costs {
		total += c.ms
	}
	t.Logf("package inits: %.2f ms in all; heaviest:", total)
	for i := 0; i < len(costs) && i < 8; i++ {
		t.Logf("  %-60s %.3f ms, %d allocs", costs[i].pkg, costs[i].ms, costs[i].allocs)
	}
}
