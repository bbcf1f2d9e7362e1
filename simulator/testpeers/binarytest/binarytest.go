// Package binarytest builds the cabinet binary for end-to-end tests that run
// it the way EmulationStation, Batocera and users do (as a process), and
// clears the CABINET_* environment so only each test's config file speaks to
// those processes. Test code only: the production binary never links it.
package binarytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ClearEnv unsets CABINET_* overrides, keeping CABINET_REQUIRE_PEERS,
// CABINET_ARTIFACTS (where screenshots are kept), the
// test switches (CABINET_E2E_*) and where the real peers are
// (CABINET_REAL_*).
func ClearEnv() {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CABINET_") && k != "CABINET_REQUIRE_PEERS" && k != "CABINET_ARTIFACTS" && !strings.HasPrefix(k, "CABINET_E2E_") && !strings.HasPrefix(k, "CABINET_REAL_") {
			os.Unsetenv(k)
		}
	}
}

// Build compiles ./cmd/cabinet from the module root into dir/name, with
// extra go build flags (such as -race).
func Build(dir, name string, flags ...string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command(goBin, append(append([]string{"build"}, flags...), "-o", out, "./cmd/cabinet")...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build cabinet: %v: %s", err, b)
	}
	return out, nil
}

// ModuleRoot walks up from the working directory to go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}
