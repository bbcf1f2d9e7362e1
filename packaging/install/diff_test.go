package install

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffMatchesDiffU holds Diff to GNU diff -u (the hunks; the headers
// carry no timestamps here).
func TestDiffMatchesDiffU(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("no diff here")
	}
	long := strings.Repeat("keep\n", 20)
	cases := []struct{ name, old, new string }{
		{"one changed", "a\nb\nc\n", "a\nB\nc\n"},
		{"added at end", "a\nb\n", "a\nb\nc\n"},
		{"from nothing", "", "a\nb\n"},
		{"to nothing", "a\nb\n", ""},
		{"no newline at end", "a\nb", "a\nb\n"},
		{"two hunks", "x\n" + long + "y\n", "X\n" + long + "Y\n"},
		{"close changes merge", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\nII\n3\n4\n5\n6\nVII\n8\n"},
		{"conf append", "# comment\nsystem.hostname=BATOCERA\n", "# comment\nsystem.hostname=BATOCERA\nsystem.services=cabinet\n"},
		{"replaced block", "a\nb\nc\nd\n", "a\nx\ny\nd\n"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			os.WriteFile(a, []byte(tc.old), 0o644)
			os.WriteFile(b, []byte(tc.new), 0o644)
			out, err := exec.Command("diff", "-u", a, b).Output()
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
				t.Fatal(err)
			}
			want := string(out[bytes.Index(out, []byte("\n@@"))+1:])
			got := Diff("f", []byte(tc.old), []byte(tc.new))
			got = got[strings.Index(got, "\n@@")+1:]
			if got != want {
				t.Errorf("Diff:\n%s\ndiff -u:\n%s", got, want)
			}
		})
	}
	if Diff("f", []byte("same\n"), []byte("same\n")) != "" {
		t.Error("equal inputs gave a diff")
	}
}
