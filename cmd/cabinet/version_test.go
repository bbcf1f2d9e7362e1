package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/hook/store"
)

// TestVersionJSON checks the fields deploy scripts read; the release
// package's test checks that a stamped build reports its stamp here.
func TestVersionJSON(t *testing.T) {
	code, stdout, stderr := runCmd(t, nil, "version", "--json")
	if code != exitOK {
		t.Fatalf("version --json: code %d, stderr %q", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("version --json printed %q: %v", stdout, err)
	}
	want := map[string]any{
		"version":      buildVersion(),
		"commit":       buildCommit(),
		"go":           runtime.Version(),
		"os":           runtime.GOOS,
		"arch":         runtime.GOARCH,
		"store_schema": float64(store.SchemaVersion),
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("version --json has %d fields, want %d: %s", len(got), len(want), stdout)
	}
	// The plain form stays as it was: one line for people.
	_, plain, _ := runCmd(t, nil, "version")
	if strings.Count(plain, "\n") != 1 || !strings.HasPrefix(plain, "cabinet "+buildVersion()+" (commit ") {
		t.Errorf("version: %q", plain)
	}
}
