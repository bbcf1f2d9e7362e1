package install

import (
	"math"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
)

// TestPlanEntryPoint: what ES is to list is decided from the system's extensions before any
// download: the playlist only where the system lists .m3u, a folder named like a game as the
// game itself, a listable file in a sub-folder ES looks into, and a refusal when ES would list
// nothing.
func TestPlanEntryPoint(t *testing.T) {
	folder := func(fsName string, names ...string) romm.ROM {
		r := romm.ROM{Name: "Game", FSName: fsName, HasMultipleFiles: true}
		for i, n := range names {
			dir, base := "", n
			if j := strings.LastIndex(n, "/"); j >= 0 {
				dir, base = n[:j], n[j+1:]
			}
			r.Files = append(r.Files, romm.File{ID: i + 1, Name: base, Dir: dir, SizeBytes: 10})
		}
		return r
	}
	for _, tt := range []struct {
		name     string
		rom      romm.ROM
		exts     []string
		want     string // gamePath; "" for a refusal
		playlist bool
		refused  string
	}{
		{name: "discs get a playlist", rom: folder("Game", "Game (Disc 1).cue", "Game (Disc 2).cue", "Game (Disc 1).bin", "Game (Disc 2).bin"),
			exts: []string{".cue", ".m3u"}, want: "Game.m3u", playlist: true},
		{name: "no playlist where the system has no .m3u", rom: folder("Game", "Game (Disc 1).cue", "Game (Disc 2).cue"),
			exts: []string{".cue"}, want: "Game/Game (Disc 1).cue"},
		{name: "RomM's own playlist", rom: folder("Game", "Game.m3u", "Game (Disc 1).chd", "Game (Disc 2).chd"),
			exts: []string{".chd", ".m3u"}, want: "Game/Game.m3u"},
		{name: "a kind the system does not list is passed over", rom: folder("Game", "Game.cue", "Game.chd"),
			exts: []string{".chd"}, want: "Game/Game.chd"},
		{name: "a folder named like a game", rom: folder("Game.ps3", "PS3_GAME/USRDIR/EBOOT.BIN", "PS3_DISC.SFB"),
			exts: []string{".ps3", ".squashfs"}, want: "Game.ps3"},
		{name: "a listable file in a sub-folder", rom: folder("Game", "readme.txt", "data/game.exe"),
			exts: []string{".exe"}, want: "Game/data/game.exe"},
		{name: "not in a folder ES skips", rom: folder("Game", "readme.txt", "images/cover.exe"),
			exts: []string{".exe"}, refused: "no file of Game ends in an extension this system takes (.exe)"},
		{name: "nothing listable", rom: folder("Game", "Game.iso", "readme.txt"),
			exts: []string{".cue", ".m3u"}, refused: "EmulationStation would never list the game"},
		{name: "a playlist name ES keeps", rom: folder("Images", "a.cue", "b.cue"),
			exts: []string{".cue", ".m3u"}, refused: "images is a folder EmulationStation keeps"},
		{name: "one file without the extension", rom: romm.ROM{Name: "Game", Files: []romm.File{{ID: 1, Name: "Game.bin", SizeBytes: 1}}},
			exts: []string{".sfc"}, refused: "does not end in an extension this system takes (.sfc)"},
		{name: "sizes at the int64 limit add up", rom: romm.ROM{Name: "Game", Files: []romm.File{{ID: 1, Name: "Game.sfc", SizeBytes: math.MaxInt64}}},
			exts: []string{".sfc"}, want: "Game.sfc"},
		{name: "sizes past the int64 limit", rom: romm.ROM{Name: "Game", FSName: "Game", HasMultipleFiles: true,
			Files: []romm.File{{ID: 1, Name: "a.sfc", SizeBytes: math.MaxInt64}, {ID: 2, Name: "b.sfc", SizeBytes: 1}}},
			exts: []string{".sfc"}, refused: "add up to more than any disk holds"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := planFiles(tt.rom, tt.exts)
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("plan %+v, error %v; want a refusal saying %q", p, err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.gamePath != tt.want || (p.playlist != nil) != tt.playlist {
				t.Errorf("game path %q (playlist %v), want %q (playlist %v)", p.gamePath, p.playlist != nil, tt.want, tt.playlist)
			}
		})
	}
}
