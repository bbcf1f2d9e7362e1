package stage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestCommitSingleFile(t *testing.T) {
	root, sys := newSystem(t)
	s := begin(t, sys, "romm-1")
	download(t, s, map[string]string{"Game (USA).chd": "disc"})
	got, err := s.Commit(Commit{Files: []string{"Game (USA).chd"}})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(sys, "Game (USA).chd")
	if len(got) != 1 || got[0] != want {
		t.Errorf("Commit = %v, want [%s]", got, want)
	}
	if c := readFile(t, want); c != "disc" {
		t.Errorf("%s holds %q, want %q", want, c, "disc")
	}
	if got, want := join(tree(t, sys)), "Game (USA).chd"; got != want {
		t.Errorf("system folder holds %q, want %q", got, want)
	}
	if l, _ := Leftovers(root); len(l) != 0 {
		t.Errorf("Leftovers after Commit = %+v", l)
	}
	if err := s.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v, want nil", err)
	}
	if c := readFile(t, want); c != "disc" {
		t.Error("Abort after Commit touched the game")
	}
}

func TestCommitFolderWithPlaylist(t *testing.T) {
	_, sys := newSystem(t)
	s := begin(t, sys, "romm-2")
	files := map[string]string{
		"Disc 1/Game (Disc 1).cue": "FILE \"Game (Disc 1).bin\" BINARY",
		"Disc 1/Game (Disc 1).bin": "one",
		"Game (Disc 2).chd":        "two",
		"Extras/Manual/manual.pdf": "pdf",
	}
	download(t, s, files)
	c := Commit{
		Files:  []string{"Disc 1/Game (Disc 1).cue", "Disc 1/Game (Disc 1).bin", "Game (Disc 2).chd", "Extras/Manual/manual.pdf"},
		Folder: "Game",
		Playlist: &Playlist{
			Name:  "Game.m3u",
			Lines: []string{"Game/Disc 1/Game (Disc 1).cue", "Game/Game (Disc 2).chd"},
		},
	}
	got, err := s.Commit(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(sys, "Game", "Disc 1", "Game (Disc 1).cue"),
		filepath.Join(sys, "Game", "Disc 1", "Game (Disc 1).bin"),
		filepath.Join(sys, "Game", "Game (Disc 2).chd"),
		filepath.Join(sys, "Game", "Extras", "Manual", "manual.pdf"),
		filepath.Join(sys, "Game.m3u"),
	}
	if join(got) != join(want) {
		t.Errorf("Commit = %q, want %q", got, want)
	}
	if m3u, want := readFile(t, filepath.Join(sys, "Game.m3u")), "Game/Disc 1/Game (Disc 1).cue\nGame/Game (Disc 2).chd\n"; m3u != want {
		t.Errorf("Game.m3u = %q, want %q", m3u, want)
	}
	wantTree := "Game.m3u Game/ Game/Disc 1/ Game/Disc 1/Game (Disc 1).bin Game/Disc 1/Game (Disc 1).cue Game/Extras/ Game/Extras/Manual/ Game/Extras/Manual/manual.pdf Game/Game (Disc 2).chd"
	if got := join(tree(t, sys)); got != wantTree {
		t.Errorf("system folder holds\n %q\nwant\n %q", got, wantTree)
	}
	for rel, data := range files {
		if got := readFile(t, filepath.Join(sys, "Game", filepath.FromSlash(rel))); got != data {
			t.Errorf("%s holds %q, want %q", rel, got, data)
		}
	}
}

// TestCommitAllOrNothing lists the system folder while commits run and
// checks that no game folder is ever seen without all of its files, and no
// playlist ever names a missing file.
func TestCommitAllOrNothing(t *testing.T) {
	_, sys := newSystem(t)
	files := map[string]string{"disc1/track01.bin": "t1", "disc1/track02.bin": "t2", "disc2.chd": "d2", "readme.txt": "r"}
	var (
		stop      = make(chan struct{})
		done      = make(chan struct{})
		sawFolder atomic.Int64
		listings  atomic.Int64
	)
	stopLister := sync.OnceFunc(func() { close(stop); <-done })
	defer stopLister() // a t.Fatalf below must not leave it calling t.Errorf
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			listings.Add(1)
			entries, err := os.ReadDir(sys)
			if err != nil {
				t.Errorf("list: %v", err)
				return
			}
			for _, e := range entries {
				name := e.Name()
				switch {
				case strings.HasPrefix(name, "."):
				case strings.HasSuffix(name, partSuffix):
					t.Errorf("saw a part in the system folder: %s", name)
				case e.IsDir():
					sawFolder.Add(1)
					for rel, data := range files {
						b, err := os.ReadFile(filepath.Join(sys, name, filepath.FromSlash(rel)))
						if err != nil || string(b) != data {
							t.Errorf("saw %s without a complete %s: %q, %v", name, rel, b, err)
						}
					}
				case strings.HasSuffix(name, ".m3u"):
					b, err := os.ReadFile(filepath.Join(sys, name))
					if err != nil {
						continue // removed between the listing and the read is fine
					}
					for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
						if _, err := os.Stat(filepath.Join(sys, filepath.FromSlash(l))); err != nil {
							t.Errorf("saw %s naming %s, missing: %v", name, l, err)
						}
					}
				}
			}
		}
	}()
	const commits = 200
	for i := range commits {
		s := begin(t, sys, fmt.Sprintf("romm-%d", i))
		download(t, s, files)
		game := fmt.Sprintf("Game %03d", i)
		_, err := s.Commit(Commit{
			Files:    keys(files),
			Folder:   game,
			Playlist: &Playlist{Name: game + ".m3u", Lines: []string{game + "/disc1/track01.bin", game + "/disc2.chd"}},
		})
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	// Let the lister see the finished folders once more, without sleeping.
	n := listings.Load()
	cabinettest.Await(t, "the lister to list twice more", nil, func() bool { return listings.Load() >= n+2 })
	stopLister()
	if sawFolder.Load() == 0 {
		t.Error("the lister never saw a game folder; the test checked nothing")
	}
	if entries, _ := os.ReadDir(sys); len(entries) != 2*commits {
		t.Errorf("system folder holds %d entries, want %d", len(entries), 2*commits)
	}
}
