package library

import (
	"strings"
	"testing"
)

func names(games []Game) string {
	var out []string
	for _, g := range games {
		out = append(out, g.Name)
	}
	return strings.Join(out, "|")
}

func TestSync(t *testing.T) {
	l := Captured("")
	added, removed, err := l.Sync("nes", []string{"Plain.nes", "Mario_(USA).nes", "Super Mario Bros. (World).nes",
		"New Game (USA).nes", "sub/Deep.NES", "New Game (USA).nes"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(added), "New Game (USA)|Deep"; got != want {
		t.Errorf("added %s, want %s", got, want)
	}
	if got, want := names(removed), "Tom's $Game"; got != want {
		t.Errorf("removed %s, want %s", got, want)
	}
	// Kept games keep their order, new ones come after them.
	if got, want := names(l.Games("nes")), "Mario_(USA)|Plain Game|Super Mario Bros. (World)|New Game (USA)|Deep"; got != want {
		t.Errorf("games %s, want %s", got, want)
	}
	const deep = "/userdata/roms/nes/sub/Deep.NES"
	g, ok := l.Game("nes", GameID(deep))
	if !ok || g.Path != deep || len(g.MetaKeys()) != 0 {
		t.Errorf("Deep.NES by md5(path): %+v, %v; want path %s and no metadata", g, ok, deep)
	}
	if g, ok := l.GameByPath("/userdata/roms/nes/Plain.nes"); !ok || g.PlayCount() != 3 || g.Name != "Plain Game" {
		t.Errorf("Plain.nes after the sync: %+v, %v; want its name and play statistics kept", g, ok)
	}
	if _, ok := l.GameByPath("/userdata/roms/nes/Tom's $Game.nes"); ok {
		t.Error("removed game still found by path")
	}
	if n := l.Len(); n != 5 {
		t.Errorf("Len = %d, want 5", n)
	}
	for i, g := range l.Games("nes") {
		if got, ok := l.Game("nes", g.ID); !ok || got.Path != g.Path {
			t.Errorf("game %d (%s) not found by id after the sync", i, g.Path)
		}
	}

	if added, removed, err := l.Sync("nes", []string{"Plain.nes", "Mario_(USA).nes", "Super Mario Bros. (World).nes",
		"New Game (USA).nes", "sub/Deep.NES"}); err != nil || added != nil || removed != nil {
		t.Errorf("second sync of the same files: added %v removed %v err %v, want nothing", added, removed, err)
	}
	if _, _, err := l.Sync("psx", nil); err == nil {
		t.Error("sync of an unknown system: no error")
	}
	if _, _, err := l.Sync("nes", []string{"/userdata/roms/nes/Plain.nes"}); err == nil {
		t.Error("sync with an absolute path: no error")
	}
	if _, _, err := l.Sync("nes", nil); err != nil || l.Len() != 0 {
		t.Errorf("sync of an empty folder: err %v, %d games left, want none", err, l.Len())
	}
}

func TestSyncKeepsPinned(t *testing.T) {
	l := Generate(100, 5, 1)
	nes := l.Games("nes")
	if len(nes) == 0 || !nes[0].Pinned() {
		t.Fatal("generated games are not pinned")
	}
	added, removed, err := l.Sync("nes", []string{"Installed.nes"})
	if err != nil || len(added) != 1 || len(removed) != 0 {
		t.Errorf("sync: added %d removed %d err %v, want 1 added and the pinned games kept", len(added), len(removed), err)
	}
	if got := len(l.Games("nes")); got != len(nes)+1 {
		t.Errorf("nes has %d games, want %d", got, len(nes)+1)
	}
	if g, _ := Fixture("").GameByPath("/userdata/roms/nes/Plain.nes"); g.Pinned() {
		t.Error("a fixture game is pinned; the simulator writes the fixture's files")
	}
}

func TestRemoveGame(t *testing.T) {
	l := Captured("")
	tom := GameID("/userdata/roms/nes/Tom's $Game.nes")
	if !l.RemoveGame("nes", tom) {
		t.Fatal("RemoveGame did not find Tom's $Game")
	}
	if l.RemoveGame("nes", tom) || l.RemoveGame("psx", tom) {
		t.Error("RemoveGame of a removed game or unknown system reported true")
	}
	if got, want := names(l.Games("nes")), "Mario_(USA)|Plain Game|Super Mario Bros. (World)"; got != want {
		t.Errorf("games %s, want %s", got, want)
	}
	smb := GameID("/userdata/roms/nes/Super Mario Bros. (World).nes")
	if g, ok := l.Game("nes", smb); !ok || g.Name != "Super Mario Bros. (World)" {
		t.Errorf("the game after the removed one: %+v, %v", g, ok)
	}
	if g, ok := l.GameByPath("/userdata/roms/nes/Super Mario Bros. (World).nes"); !ok || g.ID != smb {
		t.Errorf("the game after the removed one by path: %+v, %v", g, ok)
	}
}

func TestSetMedia(t *testing.T) {
	l := Captured("")
	plain := GameID("/userdata/roms/nes/Plain.nes")
	before, _ := l.Game("nes", plain)
	const cover = "/userdata/roms/nes/images/Plain-image.png"
	g, ok := l.SetMedia("nes", plain, "image", cover)
	if !ok || g.Meta("image") != cover {
		t.Fatalf("SetMedia: %v, image %q, want %q", ok, g.Meta("image"), cover)
	}
	if got, _ := l.Game("nes", plain); got.Meta("image") != cover || got.PlayCount() != 3 {
		t.Errorf("stored game: image %q playcount %d", got.Meta("image"), got.PlayCount())
	}
	if before.Meta("image") != "/userdata/roms/nes/images/plain.png" {
		t.Errorf("an earlier snapshot changed: image %q", before.Meta("image"))
	}
	if _, ok := l.SetMedia("nes", plain, "genre", "x"); ok {
		t.Error("SetMedia took a key that is not path-typed")
	}
	if _, ok := l.SetMedia("nes", "nope", "image", cover); ok {
		t.Error("SetMedia found an unknown game")
	}
}

func TestAccepts(t *testing.T) {
	nes := System{Extensions: []string{".nes", ".ZIP"}}
	for name, want := range map[string]bool{
		"Game.nes": true, "Game.NES": true, "Game.zip": true, "Game.nes.cabinet-part": false,
		"Game": false, "Game.txt": false, "nes": false, ".nes": true,
	} {
		if got := nes.Accepts(name); got != want {
			t.Errorf("Accepts(%q) = %v, want %v", name, got, want)
		}
	}
	if !(System{Extensions: []string{""}}).Accepts("README") {
		t.Error(`a system declaring "" does not accept a name without a dot`)
	}
}
