package library

import (
	"bytes"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCapturedIDs(t *testing.T) {
	// Ids as recorded from the real ES in es-captures/systems_nes_games.json.
	want := []struct{ id, path, name string }{
		{"0c598aff052e6240ed442843b7d22ba9", "/userdata/roms/nes/Mario_(USA).nes", "Mario_(USA)"},
		{"c4bd586365d2edccc03d52f2441bb64c", "/userdata/roms/nes/Plain.nes", "Plain Game"},
		{"5260c0b07211aabf7521592aafc5f1cc", "/userdata/roms/nes/Tom's $Game.nes", "Tom's $Game"},
		{"dfc0a340a06b614e45b445627708cb05", "/userdata/roms/nes/Super Mario Bros. (World).nes", "Super Mario Bros. (World)"},
	}
	for _, lib := range []*Library{Captured(""), Fixture("")} {
		got := lib.Games("nes")
		if len(got) < len(want) {
			t.Fatalf("nes has %d games, want at least %d", len(got), len(want))
		}
		for i, w := range want {
			if got[i].ID != w.id || got[i].Path != w.path || got[i].Name != w.name {
				t.Errorf("game %d = %+v, want id %s path %s name %s", i, got[i], w.id, w.path, w.name)
			}
		}
	}
	if n := Captured("").Len(); n != 4 {
		t.Errorf("Captured has %d games, want 4", n)
	}
}

func TestPlainMetadata(t *testing.T) {
	g, ok := Captured("").Game("nes", "c4bd586365d2edccc03d52f2441bb64c")
	if !ok {
		t.Fatal("Plain.nes not found by id")
	}
	want := map[string]string{
		"desc": "A test entry.", "genre": "Platform", "image": "/userdata/roms/nes/images/plain.png",
		"rating": "0.8", "releasedate": "19850913T000000", "genres": "7", "players": "1-2",
		"favorite": "true", "hidden": "false", "kidgame": "false", "playcount": "3",
		"lastplayed": "20240101T120000", "gametime": "125", "developer": "",
	}
	for k, v := range want {
		if got := g.Value(k); got != v {
			t.Errorf("Value(%q) = %q, want %q", k, got, v)
		}
	}
	if got, want := strings.Join(g.MetaKeys(), ","), "desc,genre,image,rating,releasedate,genres,players,favorite,playcount,lastplayed,gametime"; got != want {
		t.Errorf("MetaKeys = %s, want %s", got, want)
	}
}

func TestDefaults(t *testing.T) {
	g, _ := Captured("").GameByPath("/userdata/roms/nes/Mario_(USA).nes")
	for k, v := range map[string]string{"rating": "0.000000", "releasedate": "not-a-date-time",
		"favorite": "false", "playcount": "0", "lastplayed": "0", "gametime": "0", "desc": ""} {
		if got := g.Value(k); got != v {
			t.Errorf("default %s = %q, want %q", k, got, v)
		}
		if got := g.Meta(k); got != "" {
			t.Errorf("Meta(%s) = %q, want unset", k, got)
		}
	}
}

func TestRomsRoot(t *testing.T) {
	l := Fixture("/tmp/sim/roms/")
	g := l.Games("snes")[0]
	if !strings.HasPrefix(g.Path, "/tmp/sim/roms/snes/") || g.ID != GameID(g.Path) {
		t.Errorf("game %+v: want path under /tmp/sim/roms/snes and id md5(path)", g)
	}
	if got, want := g.Meta("image"), "/tmp/sim/roms/snes/images/smw.png"; got != want {
		t.Errorf("image = %q, want %q (resolved like a gamelist ./ path)", got, want)
	}
}

func TestStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/userdata/roms/nes/Mario_(USA).nes", "Mario_(USA)"},
		{"/userdata/roms/nes/Super Mario Bros. (World).nes", "Super Mario Bros. (World)"},
		{"/a/b/archive.tar.gz", "archive.tar"},
		{"/a/dir.x/noext", "noext"},
		{"/a/.hidden", ""},
		{"plain", "plain"},
	} {
		if got := Stem(tc.in); got != tc.want {
			t.Errorf("Stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFixtureCoverage(t *testing.T) {
	l := Fixture("")
	var names, paths []string
	for _, g := range l.AllGames() {
		names = append(names, g.Name)
		paths = append(paths, g.Path)
	}
	all := strings.Join(names, "\n")
	for _, want := range []string{"'", "$", "(", "é", "ō", "🌟", "\x1b", "\x07", "\u202E", "\u2066", "\"", "&", "!"} {
		if !strings.Contains(all, want) {
			t.Errorf("no fixture name contains %q", want)
		}
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "\x1b\x07\u202E") {
			t.Errorf("file name %q carries control or bidi characters; keep them to the gamelist name", p)
		}
	}
	seen := map[string]string{}
	dups := 0
	for _, g := range l.AllGames() {
		if s, ok := seen[g.Name]; ok && s != g.System {
			dups++
		}
		seen[g.Name] = g.System
	}
	if dups < 2 {
		t.Errorf("%d titles on two systems, want at least 2", dups)
	}
	long := 0
	for _, g := range l.AllGames() {
		if len(g.Meta("desc")) > 2000 {
			long++
		}
	}
	if long == 0 {
		t.Error("no description longer than 2000 bytes")
	}
	for _, s := range l.Systems() {
		if n := len(l.Games(s.Name)); n < 6 || n > 10 {
			t.Errorf("system %s has %d games, want 6-10", s.Name, n)
		}
		if s.Libretro == (s.Name == "gamecube") {
			t.Errorf("system %s: Libretro = %v", s.Name, s.Libretro)
		}
	}
}

func TestRecordPlay(t *testing.T) {
	start := time.Date(2026, 11, 30, 3, 6, 36, 0, time.UTC)
	const plain = "c4bd586365d2edccc03d52f2441bb64c"
	for _, tc := range []struct {
		name                        string
		exit                        int
		session                     time.Duration
		playcount, gametime, played string
	}{
		{"exit 0 long session", 0, 12 * time.Second, "4", "137", "20261130T030648"},
		{"exit 0 short session", 0, 9*time.Second + 900*time.Millisecond, "4", "125", "20261130T030645"},
		{"exit 0 exactly 10 s", 0, 10 * time.Second, "4", "135", "20261130T030646"},
		{"crash", 1, time.Minute, "3", "125", "20240101T120000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Captured("")
			g, ok := l.RecordPlay("nes", plain, tc.exit, start, start.Add(tc.session))
			if !ok {
				t.Fatal("game not found")
			}
			if g.Value("playcount") != tc.playcount || g.Value("gametime") != tc.gametime || g.Value("lastplayed") != tc.played {
				t.Errorf("got playcount %s gametime %s lastplayed %s, want %s %s %s",
					g.Value("playcount"), g.Value("gametime"), g.Value("lastplayed"), tc.playcount, tc.gametime, tc.played)
			}
			if again, _ := l.Game("nes", plain); again.Value("playcount") != tc.playcount {
				t.Errorf("stored playcount %s, want %s", again.Value("playcount"), tc.playcount)
			}
		})
	}
}

func TestSnapshotsDoNotChange(t *testing.T) {
	l := Captured("")
	before, _ := l.Game("nes", "c4bd586365d2edccc03d52f2441bb64c")
	l.RecordPlay("nes", before.ID, 0, time.Unix(0, 0), time.Unix(100, 0))
	if before.Value("playcount") != "3" {
		t.Errorf("old snapshot playcount = %s, want 3", before.Value("playcount"))
	}
}

func TestSetMeta(t *testing.T) {
	const plain = "c4bd586365d2edccc03d52f2441bb64c"
	for _, tc := range []struct {
		name          string
		values        map[string]string
		changed, keep bool
	}{
		{"same values", map[string]string{"genre": "Platform", "playcount": "3"}, false, true},
		{"default value equals", map[string]string{"kidgame": "false"}, false, true},
		{"path keys ignored", map[string]string{"image": "/x.png"}, false, true},
		{"unknown keys ignored", map[string]string{"bogus": "1"}, false, true},
		{"change", map[string]string{"favorite": "false", "playcount": "7", "scraperId": "1234"}, true, true},
		{"rename", map[string]string{"name": "Renamed"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Captured("")
			changed, found := l.SetMeta("nes", plain, tc.values)
			if changed != tc.changed || !found {
				t.Fatalf("SetMeta = %v,%v, want %v,true", changed, found, tc.changed)
			}
			g, _ := l.Game("nes", plain)
			for k, v := range tc.values {
				if k == "bogus" || k == "image" {
					continue
				}
				if got := g.Value(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	if _, found := Captured("").SetMeta("nes", "nope", map[string]string{"genre": "x"}); found {
		t.Error("SetMeta found an unknown id")
	}
}

func TestAddGameErrors(t *testing.T) {
	l := New("")
	if _, err := l.AddGame("nes", "a.nes", "", nil); err == nil {
		t.Error("AddGame to an unknown system succeeded")
	}
	if err := l.AddSystem(System{Name: "nes"}); err != nil {
		t.Fatal(err)
	}
	if err := l.AddSystem(System{Name: "nes"}); err == nil {
		t.Error("duplicate AddSystem succeeded")
	}
	if _, err := l.AddGame("nes", "a.nes", "", map[string]string{"nonsense": "1"}); err == nil {
		t.Error("AddGame with an unknown key succeeded")
	}
	if _, err := l.AddGame("nes", "a.nes", "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AddGame("nes", "a.nes", "", nil); err == nil {
		t.Error("duplicate path succeeded")
	}
}

func TestConcurrentUse(t *testing.T) {
	l := Fixture("")
	g := l.Games("snes")[0]
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				l.RecordPlay("snes", g.ID, 0, time.Unix(0, 0), time.Unix(20, 0))
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				for _, x := range l.AllGames() {
					_ = x.Value("playcount")
				}
			}
		}()
	}
	wg.Wait()
	got, _ := l.Game("snes", g.ID)
	if want := g.PlayCount() + 400; got.PlayCount() != want {
		t.Errorf("playcount = %d, want %d", got.PlayCount(), want)
	}
}

// TestMediaFiles: the fixture's pictures are real where they should be and
// hostile where the name says so, each refused for its own reason by the
// standard decoders.
func TestMediaFiles(t *testing.T) {
	files := Fixture("/userdata/roms").MediaFiles()
	byName := map[string]MediaFile{}
	for _, f := range files {
		byName[path.Base(f.Path)] = f
	}
	if _, ok := byName["Chrono Trigger (USA)-missing.png"]; ok {
		t.Error("a -missing picture is laid out")
	}
	zelda, ok := byName["The Legend of Zelda (USA)-image.png"]
	if !ok || zelda.Path != "/userdata/roms/nes/images/The Legend of Zelda (USA)-image.png" {
		t.Fatalf("Zelda's image: %+v", zelda.Path)
	}
	for _, c := range []struct {
		name   string
		decode bool
	}{
		{"The Legend of Zelda (USA)-image.png", true}, {"sf2-marquee.png", true},
		{"Sonic The Hedgehog (USA, Europe)-thumb.jpg", true},
		{"Tetris (USA)-truncated.jpg", false}, {"Contra (USA)-text.png", false}, {"Balloon Fight (USA).svg", false},
	} {
		f, ok := byName[c.name]
		if !ok {
			t.Errorf("%s not laid out", c.name)
			continue
		}
		_, _, err := image.Decode(bytes.NewReader(f.Data))
		if (err == nil) != c.decode {
			t.Errorf("%s: decode error %v, want decodable %v", c.name, err, c.decode)
		}
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(byName["Contra (USA)-bomb.png"].Data))
	if err != nil || cfg.Width != 100_000 || cfg.Height != 100_000 {
		t.Errorf("bomb PNG header: %+v, %v", cfg, err)
	}
	if f := byName["Duck Hunt (World)-huge.png"]; f.Size != hugeMediaBytes {
		t.Errorf("huge picture size %d", f.Size)
	}
	if bytes.Equal(byName["sf2-thumb.png"].Data, zelda.Data) {
		t.Error("two games share the same art")
	}
}
