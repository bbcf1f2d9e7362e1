package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/binarytest"
)

// cabinetBin is the binary under test, built once by TestMain.
var cabinetBin string

// TestMain builds cmd/cabinet once for the whole run, like the installer
// ships it (a plain build, not the race-instrumented test binary), and
// clears CABINET_* overrides from the environment so that only each test's
// config file speaks to the hooks.
func TestMain(m *testing.M) {
	binarytest.ClearEnv()
	dir, err := os.MkdirTemp("", "cabinet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := 1
	if cabinetBin, err = binarytest.Build(dir, "cabinet"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// moduleRoot is the repository root (for the validator in testdata).
func moduleRoot() (string, error) { return binarytest.ModuleRoot() }
