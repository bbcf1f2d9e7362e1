package chromium

import (
	"os"
	"path/filepath"
	"testing"
)

// Artifact is where a test keeps a screenshot named name: $CABINET_ARTIFACTS
// (CI keeps that folder) or the test's temporary folder.
func Artifact(t testing.TB, name string) string {
	dir := os.Getenv("CABINET_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	os.MkdirAll(dir, 0o755)
	return filepath.Join(dir, name)
}
