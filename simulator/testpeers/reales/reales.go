// Package reales runs Batocera's real EmulationStation (built from upstream,
// ../shared/peers/real-es) headless under Xvfb for an end-to-end test: a
// fresh HOME with a small es_systems.cfg and es_settings.cfg, the scripts
// folder where the test installs Cabinet's wrappers, an emulator that plays
// Batocera's launcher (the configgen user scripts around a game that
// sleeps), and recording stubs for shutdown, reboot, poweroff and
// batocera-es-swissknife first in ES's PATH, so nothing ES runs can take
// the machine down. Stop fails the test if a stub ever ran.
//
// ES's web API port is fixed at 1234, so one ES runs at a time on the
// machine: Start takes an flock in os.TempDir() for the ES's whole life and
// refuses a port someone else holds.
//
// Test code only: the production binary never links it.
package reales

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// The switches .ci/run sets: BinaryEnv names the emulationstation binary
// (default: ../shared/peers/real-es/emulationstation from the module root);
// AbsentEnv=1 says CI's checkout has no peers folder at all, so the tests
// skip, even under CABINET_REQUIRE_PEERS=1.
const (
	BinaryEnv = "CABINET_REAL_ES"
	AbsentEnv = "CABINET_REAL_ES_ABSENT"
)

// peerDir is where the peer lives relative to the module root.
const peerDir = "../shared/peers/real-es"

// runtimePackages are the Debian packages ES needs (run-headless.sh).
const runtimePackages = "xvfb xauth libsdl2-2.0-0 libsdl2-mixer-2.0-0 libfreeimage3 libfreetype6 libcurl4 libvlc5 libvlccore9 libgl1 libgl1-mesa-dri libasound2 libudev1"

// Find returns the emulationstation binary and checks what it needs to
// run headless (xvfb-run, its shared libraries), or says what is missing.
func Find() (string, error) {
	bin := os.Getenv(BinaryEnv)
	if bin == "" {
		root, err := binarytest.ModuleRoot()
		if err != nil {
			return "", err
		}
		bin = filepath.Join(root, peerDir, "emulationstation")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("no real EmulationStation binary at %s (set %s to its path)", abs, BinaryEnv)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real // Stop finds ES by /proc/PID/exe
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(abs), "resources")); err != nil {
		return "", fmt.Errorf("real EmulationStation at %s has no resources folder beside it", abs)
	}
	if _, err := exec.LookPath("xvfb-run"); err != nil {
		return "", fmt.Errorf("xvfb-run not found: install the Debian packages %s", runtimePackages)
	}
	out, err := exec.Command("ldd", abs).CombinedOutput()
	if err == nil && strings.Contains(string(out), "not found") {
		var missing []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "not found") {
				missing = append(missing, strings.TrimSpace(strings.SplitN(l, "=>", 2)[0]))
			}
		}
		return "", fmt.Errorf("real EmulationStation lacks %s: install the Debian packages %s", strings.Join(missing, ", "), runtimePackages)
	}
	return abs, nil
}

// Require skips t when the peer cannot run here (or fails it under
// CABINET_REQUIRE_PEERS=1; it only skips when CABINET_REAL_ES_ABSENT=1),
// and returns the binary. New calls it; call it first to skip before
// building anything else.
func Require(t testing.TB) string {
	t.Helper()
	bin, err := Find()
	if err != nil && os.Getenv(AbsentEnv) == "1" {
		t.Skipf("real EmulationStation peer not in this checkout (%s=1, set by .ci/run): skipping: %v", AbsentEnv, err)
	}
	peertest.RequirePeer(t, err)
	return bin
}

// Options configure one real ES.
type Options struct {
	// Dir holds HOME, the ROMs, the emulator and the stubs. Its path must
	// have no shell characters (ES pastes paths unquoted into sh command
	// lines): use cabinettest.TempDir.
	Dir string
	// ScreensaverTime is ES's ScreenSaverTime; 0 keeps the screensaver off.
	ScreensaverTime time.Duration
	// ScreensaverBehavior is ES's ScreenSaverBehavior (default "dim", which
	// also fires sleep; never "suspend", which runs batocera-shutdown).
	ScreensaverBehavior string
	// PlayTime ends every game by itself after this long; 0: a game runs
	// until EndGame (or 10 minutes). SetPlayTime changes it for the next
	// launches.
	PlayTime time.Duration
	// Env is added to ES's environment, so to every script it runs
	// (CABINET_CONFIG for the installed wrappers).
	Env []string
	// StartTimeout bounds Start (default 60 s).
	StartTimeout time.Duration
}
