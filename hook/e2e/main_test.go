package e2e

import (
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// cabinetBin is the binary under test, set by TestMain.
var cabinetBin string

// TestMain builds cmd/cabinet once for the whole run (shared with the other
// test packages of the run), like the installer ships it: a plain build,
// not the race-instrumented test binary.
func TestMain(m *testing.M) {
	os.Exit(cabinettest.Main(m, cabinettest.Build{Path: &cabinetBin}))
}
