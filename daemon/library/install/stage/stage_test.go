package stage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBeginWritesStage(t *testing.T) {
	_, sys := newSystem(t)
	meta := []byte(`{"rom_id":123,"name":"Game"}`)
	s, err := Begin(sys, "romm-123", meta)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Dir(), filepath.Join(sys, ".cabinet-install-romm-123"); got != want {
		t.Errorf("Dir() = %s, want %s", got, want)
	}
	if got := readFile(t, filepath.Join(s.Dir(), "install.json")); got != string(meta) {
		t.Errorf("install.json = %q, want %q", got, meta)
	}
	if got, want := join(tree(t, s.Dir())), "files/ install.json"; got != want {
		t.Errorf("stage holds %q, want %q", got, want)
	}
}

func TestBeginRefuses(t *testing.T) {
	_, sys := newSystem(t)
	file := filepath.Join(sys, "file.bin")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	begin(t, sys, "romm-1")
	tests := []struct {
		name, dir, key string
		meta           []byte
		want           error // nil: any error
	}{
		{"empty key", sys, "", nil, nil},
		{"uppercase key", sys, "RomM-1", nil, nil},
		{"slash in key", sys, "romm/1", nil, nil},
		{"dots in key", sys, "..", nil, nil},
		{"long key", sys, strings.Repeat("a", 65), nil, nil},
		{"meta too large", sys, "romm-2", make([]byte, 64<<10+1), nil},
		{"missing system folder", filepath.Join(sys, "nope"), "romm-2", nil, nil},
		{"system folder is a file", file, "romm-2", nil, nil},
		{"stage already there", sys, "romm-1", nil, ErrExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Begin(tt.dir, tt.key, tt.meta)
			if err == nil {
				t.Fatalf("Begin(%s, %q) = %v, want an error", tt.dir, tt.key, s.Dir())
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Begin error = %v, want it to wrap %v", err, tt.want)
			}
		})
	}
	if got, want := join(tree(t, sys)), ".cabinet-install-romm-1/ .cabinet-install-romm-1/files/ .cabinet-install-romm-1/install.json file.bin"; got != want {
		t.Errorf("system folder holds %q after refusals, want %q", got, want)
	}
}

// A system folder that is a symlink is refused: a link there could send
// every write outside the share. Links above it are resolved.
func TestBeginSymlinkedSystemDir(t *testing.T) {
	root, sys := newSystem(t)
	elsewhere := t.TempDir()
	link := filepath.Join(root, "snes")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(link, "romm-1", nil); !errors.Is(err, ErrUnsafe) {
		t.Errorf("Begin(symlinked system folder) error = %v, want ErrUnsafe", err)
	}
	if got := tree(t, elsewhere); len(got) != 0 {
		t.Errorf("link target holds %v, want nothing", got)
	}

	linkedRoot := filepath.Join(t.TempDir(), "roms")
	if err := os.Symlink(root, linkedRoot); err != nil {
		t.Fatal(err)
	}
	s, err := Begin(filepath.Join(linkedRoot, "psx"), "romm-1", nil)
	if err != nil {
		t.Fatalf("Begin below a symlinked roms root: %v", err)
	}
	if s.SystemDir() != sys {
		t.Errorf("SystemDir() = %s, want the resolved %s", s.SystemDir(), sys)
	}
}

func TestPartPath(t *testing.T) {
	_, sys := newSystem(t)
	s := begin(t, sys, "romm-1")
	tests := []struct {
		rel, want string
		wantErr   bool
	}{
		{"game.chd", filepath.Join(s.Dir(), "files", "game.chd.cabinet-part"), false},
		{"disc1/track01.bin", filepath.Join(s.Dir(), "files", "disc1", "track01.bin.cabinet-part"), false},
		{"../escape.bin", "", true},
		{"disc1\\x.bin", "", true}, // not a CleanRelPath result
		{".hidden", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := s.PartPath(tt.rel)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("PartPath(%q) = %q, %v; want %q, error %v", tt.rel, got, err, tt.want, tt.wantErr)
		}
		if err == nil {
			if fi, err := os.Stat(filepath.Dir(got)); err != nil || !fi.IsDir() {
				t.Errorf("PartPath(%q) did not create its folder: %v", tt.rel, err)
			}
		}
	}
}

// A symlink planted inside the stage is not followed by PartPath.
func TestPartPathRefusesSymlinkInStage(t *testing.T) {
	_, sys := newSystem(t)
	outside := t.TempDir()
	s := begin(t, sys, "romm-1")
	if err := os.Symlink(outside, filepath.Join(s.Dir(), "files", "disc1")); err != nil {
		t.Fatal(err)
	}
	if p, err := s.PartPath("disc1/track01.bin"); !errors.Is(err, ErrUnsafe) {
		t.Errorf("PartPath through a symlink = %q, %v; want ErrUnsafe", p, err)
	}
	if got := tree(t, outside); len(got) != 0 {
		t.Errorf("outside holds %v, want nothing", got)
	}
}

func TestAbort(t *testing.T) {
	_, sys := newSystem(t)
	s := begin(t, sys, "romm-1")
	download(t, s, map[string]string{"disc1/a.bin": "aaa", "b.bin": "bb"})
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, sys); len(got) != 0 {
		t.Errorf("system folder holds %v after Abort, want nothing", got)
	}
	if err := s.Abort(); err != nil {
		t.Errorf("second Abort: %v, want nil", err)
	}
	if _, err := s.PartPath("c.bin"); err == nil {
		t.Error("PartPath after Abort succeeded, want an error")
	}
	if _, err := s.Commit(Commit{Files: []string{"b.bin"}}); err == nil {
		t.Error("Commit after Abort succeeded, want an error")
	}
}

func TestLeftovers(t *testing.T) {
	root, sys := newSystem(t)
	// A crash: Begin and a part, no Commit.
	s := begin(t, sys, "romm-123")
	download(t, s, map[string]string{"disc1/track01.bin": "0123456789", "game.cue": "FILE"})
	// Things that are not leftovers.
	for _, p := range []string{filepath.Join(sys, ".cabinet-install-file"), filepath.Join(root, "loose-file")} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(sys, ".cabinet-install-BAD"), filepath.Join(sys, ".other"), filepath.Join(root, "snes")} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	got, err := Leftovers(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("Leftovers = %+v, want one", got)
	}
	l := got[0]
	if l.System != "psx" || l.Key != "romm-123" || l.Dir != s.Dir() {
		t.Errorf("Leftover = %s %s %s, want psx romm-123 %s", l.System, l.Key, l.Dir, s.Dir())
	}
	if string(l.Meta) != `{"rom_id":123}` {
		t.Errorf("Meta = %q", l.Meta)
	}
	if l.Bytes != 14 {
		t.Errorf("Bytes = %d, want 14", l.Bytes)
	}
	if l.ModTime.IsZero() {
		t.Error("ModTime is zero")
	}
	if err := l.Remove(); err != nil {
		t.Fatal(err)
	}
	if got, _ := Leftovers(root); len(got) != 0 {
		t.Errorf("Leftovers after Remove = %+v, want none", got)
	}
	if err := l.Remove(); err != nil {
		t.Errorf("second Remove: %v, want nil", err)
	}
	if err := (Leftover{Dir: filepath.Join(sys, "Game")}).Remove(); err == nil {
		t.Error("Remove of a folder that is not a stage succeeded")
	}
}

func TestInside(t *testing.T) {
	tests := []struct {
		root, p string
		want    bool
	}{
		{"/userdata/roms/psx", "/userdata/roms/psx", true},
		{"/userdata/roms/psx", "/userdata/roms/psx/Game/a.bin", true},
		{"/userdata/roms/psx", "/userdata/roms/psx/../snes", false},
		{"/userdata/roms/psx", "/userdata/roms/psx2", false},
		{"/userdata/roms/psx", "/userdata/roms", false},
		{"/userdata/roms/psx", "/etc/passwd", false},
		{"/userdata/roms/psx", "/userdata/roms/psx/..foo", true},
		{"/userdata/roms/psx", "psx/a", false},
		{"/userdata/roms/psx/", "/userdata/roms/psx/a", true},
	}
	for _, tt := range tests {
		if got := inside(tt.root, tt.p); got != tt.want {
			t.Errorf("inside(%q, %q) = %v, want %v", tt.root, tt.p, got, tt.want)
		}
	}
}
