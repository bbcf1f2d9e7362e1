package cabinettest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ValidateCapture runs the strict Home Assistant discovery validator
// (haentities/testdata/validate_discovery.py, a copy of
// ../shared/tools/validate_discovery.py) over a capture in `mosquitto_sub
// -V 5 --retain-as-published -F '%r %t %p'` form, and fails t with its
// report unless it passes.
func ValidateCapture(t testing.TB, what string, capture []byte) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for validate_discovery.py: %v", err)
	}
	if !bytes.Contains(capture, []byte("homeassistant/")) {
		t.Fatalf("capture holds no discovery config:\n%s", capture)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(TempDir(t, "validate"), "capture.txt")
	if err := os.WriteFile(f, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "haentities", "testdata", "validate_discovery.py")
	out, err := exec.Command(py, script, "--strict", "--format", "rtp", f).CombinedOutput()
	if err != nil {
		t.Fatalf("validate_discovery.py --strict --format rtp (%s, %d lines): %v\n%s", what, bytes.Count(capture, []byte("\n")), err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("validate_discovery.py (%s): %s", what, lines[len(lines)-1])
}
