package bounded

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, c := range []struct {
		size    int
		max     int64
		tooBig  bool
		message string
	}{
		{0, 10, false, ""},
		{10, 10, false, ""},
		{11, 10, true, "larger than 10 bytes"},
		{2048, 1024, true, "larger than 1 KiB"},
		{3 << 20, 2 << 20, true, "larger than 2 MiB"},
	} {
		if err := os.WriteFile(p, make([]byte, c.size), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := ReadFile(p, c.max)
		if c.tooBig != errors.Is(err, ErrTooLarge) || !c.tooBig && (err != nil || len(b) != c.size) {
			t.Errorf("%d bytes, bound %d: %d bytes, %v", c.size, c.max, len(b), err)
		}
		if c.tooBig && !strings.Contains(err.Error(), c.message) {
			t.Errorf("error %q, want it to say %q", err, c.message)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
