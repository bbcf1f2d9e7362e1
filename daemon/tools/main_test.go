package tools

import (
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestMain lets -short run more of the parallel tests at once: the fault
// tests spend their time waiting on a slow fake RomM.
func TestMain(m *testing.M) {
	cabinettest.ShortParallel()
	os.Exit(m.Run())
}
