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

// cabinetBin is the binary under test, built once by TestMain; daemonBin
// runs `cabinet serve`: the same binary, or under -race a race-built one.
var cabinetBin, daemonBin string

// TestMain builds cmd/cabinet once, as the installer ships it (a plain
// build: the hook's wall time is part of what is measured), plus, under
// -race, a race-built copy for the daemon; and it clears CABINET_*
// overrides so that only each test's config file speaks to the processes.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CABINET_") && k != "CABINET_REQUIRE_PEERS" && !strings.HasPrefix(k, "CABINET_E2E_") {
			os.Unsetenv(k)
		}
	}
	dir, err := os.MkdirTemp("", "cabinet-daemon-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := 1
	cabinetBin, err = build(dir, "cabinet")
	daemonBin = cabinetBin
	if err == nil && raceEnabled {
		daemonBin, err = build(dir, "cabinet-race", "-race")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build cabinet:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles ./cmd/cabinet from the module root into dir/name.
func build(dir, name string, flags ...string) (string, error) {
	root, err := moduleRoot()
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
