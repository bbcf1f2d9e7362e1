// Package e2e holds Cabinet's install, upgrade and removal to the programs
// a Batocera cabinet really runs: `cabinet deploy` over a real Dropbear
// into a fake cabinet tree, Batocera's own batocera-services and
// S99userservices (their absolute paths rewritten into the tree, see
// simulator/batocera), the real batocera-settings-get reading back what
// install saved, a real Mosquitto, and an exFAT /userdata through FUSE.
package e2e

import (
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// Two releases to upgrade between: the same sources, stamped apart (the
// installer tells binaries apart by their bytes).
var (
	v1 = &cabinettest.Lazy{Flags: []string{"-ldflags=-X main.version=1.0.0-e2e -X main.commit=e2e1"}}
	v2 = &cabinettest.Lazy{Flags: []string{"-ldflags=-X main.version=2.0.0-e2e -X main.commit=e2e2"}}
)

func TestMain(m *testing.M) {
	binarytest.ClearEnv()
	code := m.Run()
	v1.Close()
	v2.Close()
	os.Exit(code)
}
