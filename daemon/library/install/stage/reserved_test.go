package stage

import (
	"errors"
	"strings"
	"testing"
)

func TestCleanTopName(t *testing.T) {
	for _, tt := range []struct {
		raw, want, refused string // refused: a part of the refusal's reason
	}{
		{raw: "Super Game (USA).sfc", want: "Super Game (USA).sfc"},
		{raw: "Game.list.xml", want: "Game.list.xml"},
		{raw: "my images.zip", want: "my images.zip"},
		{raw: "downloaded.zip", want: "downloaded.zip"},
		{raw: "keys.zip", want: "keys.zip"},
		{raw: "gamelist.xml", refused: "game list"},
		{raw: "GAMELIST.XML", refused: "game list"},
		{raw: " gamelist.xml. ", refused: "game list"},
		{raw: "gamelist\u200b.xml", refused: "game list"},
		{raw: "images", refused: "never lists games in"},
		{raw: "Videos", refused: "never lists games in"},
		{raw: "media", refused: "never lists games in"},
		{raw: "medias", refused: "never lists games in"},
		{raw: "manuals", refused: "never lists games in"},
		{raw: "artwork", refused: "never lists games in"},
		{raw: "bezels", refused: "never lists games in"},
		{raw: "downloaded_videos", refused: "never lists games in"},
		{raw: "Game.sfc.keys", refused: "pad-to-keyboard"},
		{raw: "padto.keys", refused: "pad-to-keyboard"},
		{raw: "Game.sfc.p2k.cfg", refused: "pad-to-keyboard"},
		{raw: "es_systems.cfg", refused: "configuration files"},
		{raw: "es_systems_snes.cfg", refused: "configuration files"},
		{raw: "ES_SETTINGS.CFG", refused: "configuration files"},
		{raw: "_info.txt", refused: "Batocera's note"},
		{raw: ".hidden.sfc", refused: "hidden"},
		{raw: "  .hidden.sfc", refused: "hidden"},
		{raw: "\u202e.cfs.sfc", refused: "hidden"},
		{raw: ".", refused: "hidden"},
		{raw: "..", refused: "climbs out"},
		{raw: "../x.sfc", refused: "climbs out"},
		{raw: `..\x.sfc`, refused: "climbs out"},
		{raw: "", refused: "nothing printable"},
	} {
		got, err := CleanTopName(tt.raw)
		switch {
		case tt.refused == "" && (err != nil || got != tt.want):
			t.Errorf("CleanTopName(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
		case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused) || !errors.Is(err, errBadName)):
			t.Errorf("CleanTopName(%q) = %q, %v; want a refusal saying %q", tt.raw, got, err, tt.refused)
		}
	}
}

func TestListable(t *testing.T) {
	exts := []string{".sfc", ".ZIP", ".7z"}
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"Game.sfc", true},
		{"Game.SFC", true},
		{"Game.zip", true},
		{"Game.tar.7z", true},
		{"Game.sfc.bak", false},
		{"Game", false},
		{"sfc", false},
		{"Game.", false},
		{".sfc", true}, // CleanTopName refuses it first
	} {
		if got := Listable(tt.name, exts); got != tt.want {
			t.Errorf("Listable(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	if Listable("Game.sfc", nil) {
		t.Error("a system without extensions lists a file")
	}
}

// FuzzCleanTopName: whatever the server sends, a name CleanTopName lets through is CleanName's,
// is not one ES or Batocera keep, and is not hidden.
func FuzzCleanTopName(f *testing.F) {
	for _, s := range []string{"gamelist.xml", "images", ".x", "../x", "es_systems.cfg", "a.keys", "Game (USA).sfc", "\u202egamelist.xml", "downloaded_x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CleanTopName(raw)
		if err != nil {
			if !errors.Is(err, errBadName) {
				t.Fatalf("CleanTopName(%q): %v does not wrap errBadName", raw, err)
			}
			return
		}
		clean, err := CleanName(raw)
		if err != nil || clean != got {
			t.Fatalf("CleanTopName(%q) = %q, CleanName gives %q, %v", raw, got, clean, err)
		}
		if why := ReservedReason(got); why != "" || strings.HasPrefix(got, ".") || SkippedFolder(got) {
			t.Fatalf("CleanTopName(%q) let %q through (%s)", raw, got, why)
		}
	})
}
