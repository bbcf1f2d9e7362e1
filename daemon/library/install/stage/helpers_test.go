package stage

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// newSystem returns a roms root holding one empty system folder "psx",
// both resolved so paths compare equal to what a Stage returns.
func newSystem(t *testing.T) (root, sys string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sys = filepath.Join(root, "psx")
	if err := os.Mkdir(sys, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, sys
}

func begin(t *testing.T, sys, key string) *Stage {
	t.Helper()
	s, err := Begin(sys, key, []byte(`{"rom_id":123}`))
	if err != nil {
		t.Fatalf("Begin(%s, %s): %v", sys, key, err)
	}
	return s
}

// download writes each rel's content to its part path, as the installer
// does.
func download(t *testing.T, s *Stage, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p, err := s.PartPath(rel)
		if err != nil {
			t.Fatalf("PartPath(%q): %v", rel, err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tree lists every path below dir (slash-separated, sorted), with "/" after
// folders and "@" after symlinks.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			rel += "@"
		case fi.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func join(xs []string) string { return strings.Join(xs, " ") }
