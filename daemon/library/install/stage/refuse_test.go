package stage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// On an existing target Commit moves nothing, leaves the stage as it was,
// and wraps ErrExists; once the conflict is gone the same stage commits.
func TestCommitRefusesExisting(t *testing.T) {
	tests := []struct {
		name     string
		existing func(sys string) error
		commit   Commit
	}{
		{"file", func(sys string) error { return os.WriteFile(filepath.Join(sys, "Game.chd"), []byte("mine"), 0o644) },
			Commit{Files: []string{"Game.chd"}}},
		{"folder", func(sys string) error { return os.Mkdir(filepath.Join(sys, "Game"), 0o755) },
			Commit{Files: []string{"Game.chd"}, Folder: "Game"}},
		{"playlist", func(sys string) error { return os.WriteFile(filepath.Join(sys, "Game.m3u"), []byte("mine"), 0o644) },
			Commit{Files: []string{"Game.chd"}, Folder: "Game", Playlist: &Playlist{Name: "Game.m3u", Lines: []string{"Game/Game.chd"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sys := newSystem(t)
			s := begin(t, sys, "romm-1")
			download(t, s, map[string]string{"Game.chd": "disc"})
			if err := tt.existing(sys); err != nil {
				t.Fatal(err)
			}
			before := join(tree(t, sys))
			_, err := s.Commit(tt.commit)
			if !errors.Is(err, ErrExists) {
				t.Fatalf("Commit error = %v, want ErrExists", err)
			}
			if after := join(tree(t, sys)); after != before {
				t.Errorf("Commit moved things:\n before %q\n after  %q", before, after)
			}
			for _, p := range []string{filepath.Join(sys, "Game.chd"), filepath.Join(sys, "Game.m3u")} {
				if b, err := os.ReadFile(p); err == nil && string(b) != "mine" {
					t.Errorf("%s was overwritten: %q", p, b)
				}
			}
			for _, name := range []string{"Game.chd", "Game", "Game.m3u"} {
				if err := os.RemoveAll(filepath.Join(sys, name)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Commit(tt.commit); err != nil {
				t.Errorf("Commit once the conflict is gone: %v", err)
			}
		})
	}
}

// A symlink planted in the system folder is never followed: Commit refuses
// with ErrUnsafe and nothing reaches the link's target.
func TestCommitRefusesSymlinkTarget(t *testing.T) {
	tests := []struct {
		name   string
		link   string
		commit Commit
	}{
		{"folder", "Game", Commit{Files: []string{"disc1/track01.bin"}, Folder: "Game"}},
		{"single file", "track01.bin", Commit{Files: []string{"track01.bin"}}},
		{"playlist", "Game.m3u", Commit{Files: []string{"track01.bin"}, Folder: "Game", Playlist: &Playlist{Name: "Game.m3u", Lines: []string{"Game/track01.bin"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sys := newSystem(t)
			outside := filepath.Join(t.TempDir(), "outside")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(sys, tt.link)); err != nil {
				t.Fatal(err)
			}
			s := begin(t, sys, "romm-1")
			download(t, s, map[string]string{tt.commit.Files[0]: "data"})
			if _, err := s.Commit(tt.commit); !errors.Is(err, ErrUnsafe) {
				t.Fatalf("Commit error = %v, want ErrUnsafe", err)
			}
			if got := tree(t, outside); len(got) != 0 {
				t.Errorf("outside holds %v, want nothing", got)
			}
			if fi, err := os.Lstat(filepath.Join(sys, tt.link)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v", err)
			}
			if _, err := os.Stat(filepath.Join(s.Dir(), "files", filepath.FromSlash(tt.commit.Files[0])+partSuffix)); err != nil {
				t.Errorf("the part was moved: %v", err)
			}
		})
	}
}

func TestCommitRefusesBadCommit(t *testing.T) {
	staged := map[string]string{"a.bin": "a", "d/b.bin": "b"}
	tests := []struct {
		name   string
		commit Commit
		stray  string // an extra part downloaded but not listed
	}{
		{"no files", Commit{}, ""},
		{"two files without folder", Commit{Files: []string{"a.bin", "d/b.bin"}}, ""},
		{"nested file without folder", Commit{Files: []string{"d/b.bin"}}, ""},
		{"unclean file", Commit{Files: []string{"./a.bin"}, Folder: "G"}, ""},
		{"listed twice", Commit{Files: []string{"a.bin", "a.bin"}, Folder: "G"}, ""},
		{"missing part", Commit{Files: []string{"a.bin", "d/c.bin"}, Folder: "G"}, ""},
		{"file is a folder of another", Commit{Files: []string{"d", "d/b.bin"}, Folder: "G"}, ""},
		{"unclean folder", Commit{Files: []string{"a.bin"}, Folder: "../G"}, ""},
		{"folder with a slash", Commit{Files: []string{"a.bin"}, Folder: "x/G"}, ""},
		{"stray part in a folder commit", Commit{Files: []string{"a.bin", "d/b.bin"}, Folder: "G"}, "extra.bin"},
		{"playlist not .m3u", Commit{Files: []string{"a.bin"}, Folder: "G", Playlist: &Playlist{Name: "G.txt", Lines: []string{"G/a.bin"}}}, ""},
		{"playlist unclean", Commit{Files: []string{"a.bin"}, Folder: "G", Playlist: &Playlist{Name: ".G.m3u", Lines: []string{"G/a.bin"}}}, ""},
		{"playlist named like the folder", Commit{Files: []string{"a.bin"}, Folder: "G.m3u", Playlist: &Playlist{Name: "G.m3u", Lines: []string{"G.m3u/a.bin"}}}, ""},
		{"playlist without lines", Commit{Files: []string{"a.bin"}, Folder: "G", Playlist: &Playlist{Name: "G.m3u"}}, ""},
		{"playlist line outside the commit", Commit{Files: []string{"a.bin"}, Folder: "G", Playlist: &Playlist{Name: "G.m3u", Lines: []string{"G/../../etc/passwd"}}}, ""},
		{"playlist line absolute", Commit{Files: []string{"a.bin"}, Folder: "G", Playlist: &Playlist{Name: "G.m3u", Lines: []string{"/userdata/roms/psx/G/a.bin"}}}, ""},
		{"playlist line read as a comment", Commit{Files: []string{"a.bin"}, Folder: "#1", Playlist: &Playlist{Name: "G.m3u", Lines: []string{"#1/a.bin"}}}, ""},
		{"playlist line without folder", Commit{Files: []string{"a.bin"}, Folder: "G", Playlist: &Playlist{Name: "G.m3u", Lines: []string{"a.bin"}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sys := newSystem(t)
			s := begin(t, sys, "romm-1")
			download(t, s, staged)
			if tt.stray != "" {
				download(t, s, map[string]string{tt.stray: "x"})
			}
			before := join(tree(t, sys))
			if got, err := s.Commit(tt.commit); err == nil {
				t.Fatalf("Commit = %v, want an error", got)
			}
			if after := join(tree(t, sys)); after != before {
				t.Errorf("a refused Commit changed the system folder:\n before %q\n after  %q", before, after)
			}
		})
	}
}

// When a step after the move into place fails, Commit renames everything
// back so the stage is as before and can be committed again.
func TestCommitUndoes(t *testing.T) {
	tests := []struct {
		name   string
		failOn string // base name of the rename target that fails
	}{
		{"playlist move fails", "Game.m3u"},
		{"folder move fails", "Game"},
		{"part rename fails", "b.bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sys := newSystem(t)
			s := begin(t, sys, "romm-1")
			download(t, s, map[string]string{"a.bin": "a", "d/b.bin": "b"})
			before := join(tree(t, sys))
			var mu sync.Mutex
			s.rename = func(from, to string) error {
				mu.Lock()
				defer mu.Unlock()
				if filepath.Base(to) == tt.failOn {
					return fmt.Errorf("injected failure renaming to %s", to)
				}
				return renameNoReplace(from, to)
			}
			c := Commit{Files: []string{"a.bin", "d/b.bin"}, Folder: "Game", Playlist: &Playlist{Name: "Game.m3u", Lines: []string{"Game/a.bin", "Game/d/b.bin"}}}
			if _, err := s.Commit(c); err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("Commit error = %v, want the injected failure", err)
			}
			if after := join(tree(t, sys)); after != before {
				t.Errorf("Commit did not undo:\n before %q\n after  %q", before, after)
			}
			s.rename = renameNoReplace
			if _, err := s.Commit(c); err != nil {
				t.Errorf("Commit after the undo: %v", err)
			}
		})
	}
}

// renameNoReplace never replaces a file or an empty folder.
func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	for _, mk := range []func() error{
		func() error { return os.WriteFile(dst, []byte("keep"), 0o644) },
		func() error { return os.Mkdir(dst, 0o755) },
	} {
		if err := os.WriteFile(src, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := mk(); err != nil {
			t.Fatal(err)
		}
		if err := renameNoReplace(src, dst); !errors.Is(err, ErrExists) {
			t.Errorf("renameNoReplace onto an existing target = %v, want ErrExists", err)
		}
		if _, err := os.Stat(src); err != nil {
			t.Errorf("source gone after a refused rename: %v", err)
		}
		os.RemoveAll(dst)
	}
	if err := renameNoReplace(src, dst); err != nil {
		t.Errorf("renameNoReplace onto nothing: %v", err)
	}
}
