package e2e

import (
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// cabinetBin is the binary under test, set by TestMain; daemonBin runs
// `cabinet serve`: the same binary, or under -race a race-built one.
var cabinetBin, daemonBin string

// TestMain builds cmd/cabinet once for the whole run (shared with the other
// test packages of the run), as the installer ships it (a plain build: the
// hook's wall time is part of what is measured), plus, under -race, a
// race-built copy for the daemon.
func TestMain(m *testing.M) {
	var daemonFlags []string
	if raceEnabled {
		daemonFlags = []string{"-race"}
	}
	os.Exit(cabinettest.Main(m, cabinettest.Build{Path: &cabinetBin}, cabinettest.Build{Path: &daemonBin, Flags: daemonFlags}))
}
