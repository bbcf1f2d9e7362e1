package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/binarytest"
)

// cabinetBin is the binary under test, built once by TestMain; daemonBin
// runs `cabinet serve`: the same binary, or under -race a race-built one.
var cabinetBin, daemonBin string

// TestMain builds cmd/cabinet once, as the installer ships it (a plain
// build: the hook's wall time is part of what is measured), plus, under
// -race, a race-built copy for the daemon; and it clears CABINET_*
// overrides so that only each test's config file speaks to the processes.
func TestMain(m *testing.M) {
	binarytest.ClearEnv()
	dir, err := os.MkdirTemp("", "cabinet-daemon-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := 1
	cabinetBin, err = binarytest.Build(dir, "cabinet")
	daemonBin = cabinetBin
	if err == nil && raceEnabled {
		daemonBin, err = binarytest.Build(dir, "cabinet-race", "-race")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// moduleRoot is the repository root (for .ci/ tools).
func moduleRoot() (string, error) { return binarytest.ModuleRoot() }
