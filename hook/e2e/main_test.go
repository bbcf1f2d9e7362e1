package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// cabinetBin is the binary under test, built once by TestMain.
var cabinetBin string

// TestMain builds cmd/cabinet once for the whole run, like the installer
// ships it (a plain build, not the race-instrumented test binary), and
// clears CABINET_* overrides from the environment so that only each test's
// config file speaks to the hooks.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CABINET_") && k != "CABINET_REQUIRE_PEERS" && !strings.HasPrefix(k, "CABINET_E2E_") {
			os.Unsetenv(k)
		}
	}
	dir, err := os.MkdirTemp("", "cabinet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := 1
	if cabinetBin, err = build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build cabinet:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles ./cmd/cabinet from the module root into dir.
func build(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, "cabinet")
	cmd := exec.Command(goBin, "build", "-o", out, "./cmd/cabinet")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %s", err, b)
	}
	return out, nil
}

// moduleRoot walks up from the package directory to go.mod.
func moduleRoot() (string, error) {
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
			return "", fmt.Errorf("no go.mod above the test directory")
		}
		dir = parent
	}
}
