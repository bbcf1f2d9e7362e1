// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in .ci/conformance) against a
// server, for tests: it installs the pinned suite with `npm ci` on first use
// and reads back each scenario's checks. Its authorization-server scenarios,
// which 0.1.13 lacks, run from a second pin on Node 22 (auth.go). Test code
// only.
package conformance

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/npmpeer"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// PinnedVersion is the suite version .ci/conformance pins: the newest that
// runs on Node 20 (0.1.14 and later need Node 22).
const PinnedVersion = "0.1.13"

var pinned = npmpeer.Package{Name: "conformance", CIDir: "conformance", Bin: "conformance", Version: PinnedVersion,
	HomeEnv: "CONFORMANCE_HOME", CacheName: "cabinet-conformance", MinNode: 20}

var (
	installOnce sync.Once
	installPath string
	installErr  error
)

// Require returns the suite's command, installing the pinned version on
// first use (once per machine, under a lock, into $CONFORMANCE_HOME, else
// $XDG_CACHE_HOME/cabinet-conformance or ~/.cache/cabinet-conformance). A
// missing node or npm, or a failed install, skips t through
// peertest.RequirePeer (a failure under CABINET_REQUIRE_PEERS=1).
func Require(t testing.TB) string {
	t.Helper()
	installOnce.Do(func() { installPath, installErr = pinned.Install() })
	peertest.RequirePeer(t, installErr)
	return installPath
}

// Check is one check of a scenario's result.
type Check struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	Description  string          `json:"description"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details,omitempty"` // what the suite saw, as it recorded it
	// Scenario is the scenario that recorded the check (from its result
	// folder's name), for runs of several scenarios.
	Scenario string `json:"-"`
}

// Run runs one server scenario against url and returns its checks and the
// suite's output (for failure messages).
func Run(t testing.TB, bin, url, scenario string) ([]Check, string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "server", "--url", url, "--scenario", scenario, "-o", dir)
	out, _ := cmd.CombinedOutput() // a failed scenario exits non-zero: the checks say why
	return readChecks(dir, "server-"), string(out)
}

// readChecks reads every checks.json under dir, the suite's -o folder: one
// folder per scenario, named prefix + scenario + "-" + a 24-character
// timestamp (2026-01-02T03-04-05-678Z).
func readChecks(dir, prefix string) []Check {
	var checks []Check
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) != "checks.json" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var cs []Check
		if json.Unmarshal(b, &cs) == nil {
			sc := strings.TrimPrefix(filepath.Base(filepath.Dir(p)), prefix)
			if len(sc) > 25 {
				sc = sc[:len(sc)-25]
			}
			for i := range cs {
				cs[i].Scenario = sc
			}
			checks = append(checks, cs...)
		}
		return nil
	})
	return checks
}

// Pending runs the suite's pending server scenarios against url with
// baseline as the expected failures: nil when every failure is expected and
// no entry is stale.
func Pending(t testing.TB, bin, url, baseline string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "server", "--url", url, "--suite", "pending", "--expected-failures", baseline, "-o", t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}
