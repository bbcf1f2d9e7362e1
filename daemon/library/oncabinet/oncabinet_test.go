package oncabinet

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
)

// cabinet is a fake /userdata/roms under a temp root, with the ES games that list its files.
type cabinet struct {
	t     *testing.T
	root  string
	games []Game
}

func newCabinet(t *testing.T) *cabinet { return &cabinet{t: t, root: t.TempDir()} }

// file writes data at the ES path p and, when listed, adds it to ES's games.
func (c *cabinet) file(system, p string, data []byte, listed bool) {
	c.t.Helper()
	real := c.resolve(p)
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(real, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
	if listed {
		c.list(system, p)
	}
}

func (c *cabinet) list(system, p string) {
	sum := md5.Sum([]byte(p))
	c.games = append(c.games, Game{System: system, ID: hex.EncodeToString(sum[:]), Path: p})
}

func (c *cabinet) resolve(p string) string { return filepath.Join(c.root, filepath.FromSlash(p)) }

func (c *cabinet) index(o Options) *Index {
	o.Resolve = c.resolve
	return Build(c.games, o)
}

// romFile is what RomM reports for a plain file holding b.
func romFile(name string, b []byte) CandidateFile {
	m, s := md5.Sum(b), sha1.Sum(b)
	return CandidateFile{Name: name, SizeBytes: int64(len(b)), CRC: fmt.Sprintf("%08x", crc32.ChecksumIEEE(b)),
		MD5: hex.EncodeToString(m[:]), SHA1: hex.EncodeToString(s[:])}
}

func single(folder, name string, b []byte, hashes bool) Candidate {
	f := romFile(name, b)
	if !hashes {
		f.CRC, f.MD5, f.SHA1 = "", "", ""
	}
	return Candidate{Folder: folder, FSName: name, SizeBytes: int64(len(b)), Files: []CandidateFile{f}}
}

func zipOf(t *testing.T, name string, b []byte) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	fw, _ := w.Create(name)
	fw.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFind(t *testing.T) {
	rom := bytes.Repeat([]byte("SNES"), 256)
	other := bytes.Repeat([]byte("NES!"), 300)
	zipped := zipOf(t, "Game.nes", other)
	disc1, disc2 := bytes.Repeat([]byte{1}, 700), bytes.Repeat([]byte{2}, 900)
	m3u := []byte("Disc 1.cue\nDisc 2.cue\n")

	c := newCabinet(t)
	c.file("snes", "/userdata/roms/snes/Foo (USA).sfc", rom, true)
	c.file("snes", "/userdata/roms/snes/USA/Sub Game.sfc", rom, true)
	c.file("snes", "/userdata/roms/snes/case.SFC", rom, true)
	c.file("snes", "/userdata/roms/snes/Renamed.sfc", other, true)
	c.file("snes", "/userdata/roms/snes/Unlisted.sfc", rom, false)
	c.file("nes", "/userdata/roms/nes/Game.nes", other, true)
	c.file("nes", "/userdata/roms/nes/Copy.zip", zipped, true)
	c.file("psx", "/userdata/roms/psx/FF7/FF7.m3u", m3u, true)
	c.file("psx", "/userdata/roms/psx/FF7/Disc 1.cue", disc1, true)
	c.file("psx", "/userdata/roms/psx/FF7/Disc 2.cue", disc2, true)
	c.file("psx", "/userdata/roms/psx/FF8.m3u", []byte("discs/FF8 1.chd\r\n#comment\n"), true)
	c.file("psx", "/userdata/roms/psx/discs/FF8 1.chd", disc1, false)
	c.file("ps3", "/userdata/roms/ps3/God.ps3/PS3_GAME/EBOOT.BIN", disc2, false)
	c.list("ps3", "/userdata/roms/ps3/God.ps3")
	ix := c.index(Options{})

	ff7 := Candidate{Folder: "psx", FSName: "FF7", Multi: true, SizeBytes: int64(len(disc1) + len(disc2) + len(m3u)),
		Files: []CandidateFile{romFile("Disc 1.cue", disc1), romFile("Disc 2.cue", disc2), romFile("FF7.m3u", m3u)}}
	ff7bad := ff7
	ff7bad.Files = []CandidateFile{romFile("Disc 1.cue", disc1), romFile("Disc 2.cue", disc1)}
	member := romhash.Member{Name: "Game.nes", Size: int64(len(other))}
	mf := romFile("Game.nes", other)
	member.CRC, member.MD5, member.SHA1 = mf.CRC, mf.MD5, mf.SHA1
	zipCopy := Candidate{Folder: "nes", FSName: "Other.zip", SizeBytes: int64(len(zipped)), Files: []CandidateFile{{Name: "Other.zip", SizeBytes: int64(len(zipped)), CRC: mf.CRC, MD5: mf.MD5, SHA1: mf.SHA1}}}
	zipROM := Candidate{Folder: "nes", FSName: "Game.zip", SizeBytes: 999, Files: []CandidateFile{{Name: "Game.zip", SizeBytes: 999, CRC: mf.CRC, MD5: mf.MD5, SHA1: mf.SHA1, Members: []romhash.Member{member}}}}

	for _, tc := range []struct {
		name     string
		c        Candidate
		path, by string // path "" = nil
	}{
		{"name+size", single("snes", "Foo (USA).sfc", rom, false), "/userdata/roms/snes/Foo (USA).sfc", ByNameSize},
		{"size mismatch is not on the cabinet by name", single("snes", "Foo (USA).sfc", rom[:100], false), "", ""},
		{"subfolder of the system folder", single("snes", "Sub Game.sfc", rom, false), "/userdata/roms/snes/USA/Sub Game.sfc", ByNameSize},
		{"name differing in case only", single("snes", "Case.sfc", bytes.Repeat([]byte("SNES"), 256), false), "/userdata/roms/snes/case.SFC", ByNameSize},
		{"hash match with a renamed file", single("snes", "Original Name.sfc", other, true), "/userdata/roms/snes/Renamed.sfc", ByHash},
		{"extracted file vs RomM's zip member", zipROM, "/userdata/roms/nes/Game.nes", ByHash},
		{"same zip under another name: its composite is RomM's file hash", zipCopy, "/userdata/roms/nes/Copy.zip", ByHash},
		{"no name match and no hashes", single("nes", "Other.zip", zipped, false), "", ""},
		{"unmapped folder", single("", "Foo (USA).sfc", rom, true), "", ""},
		{"folder ES does not list", single("gba", "Foo (USA).sfc", rom, true), "", ""},
		{"file on disk ES does not list", single("snes", "Unlisted.sfc", append(rom, 'x'), false), "", ""},
		{"multi-disc folder: the playlist stands for it", ff7, "/userdata/roms/psx/FF7/FF7.m3u", ByNameSize},
		{"multi-disc folder with a wrong size", ff7bad, "", ""},
		{"multi-disc as a playlist beside the discs", Candidate{Folder: "psx", FSName: "FF8", Multi: true, Files: []CandidateFile{romFile("FF8 1.chd", disc1)}}, "/userdata/roms/psx/FF8.m3u", ByNameSize},
		{"playlist naming a disc RomM does not have", Candidate{Folder: "psx", FSName: "FF8", Multi: true, Files: []CandidateFile{romFile("Other.chd", disc1)}}, "", ""},
		{"folder listed as a game", Candidate{Folder: "ps3", FSName: "God.ps3", Multi: true, Files: []CandidateFile{romFile("PS3_GAME/EBOOT.BIN", disc2)}}, "/userdata/roms/ps3/God.ps3", ByNameSize},
		{"file name escaping the folder", Candidate{Folder: "ps3", FSName: "God.ps3", Multi: true, Files: []CandidateFile{romFile("../x", disc2)}}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ix.Find(context.Background(), 1, tc.c)
			switch {
			case tc.path == "" && got != nil:
				t.Errorf("got %+v, want nil", got)
			case tc.path != "" && got == nil:
				t.Errorf("got nil, want %s by %s", tc.path, tc.by)
			case got != nil && (got.Path != tc.path || got.By != tc.by || got.System != tc.c.Folder):
				t.Errorf("got %+v, want %s by %s", got, tc.path, tc.by)
			}
		})
	}
	// The copy of the zip found by name once RomM calls it that, and by its composite otherwise.
	if got := ix.Find(context.Background(), 1, single("nes", "Copy.zip", zipped, false)); got == nil || got.By != ByNameSize {
		t.Errorf("copy by name: %+v", got)
	}
}

func TestInstallRecord(t *testing.T) {
	c := newCabinet(t)
	c.file("snes", "/userdata/roms/snes/Installed.sfc", []byte("x"), true)
	rec := map[int]Game{
		7: {System: "snes", Path: "/userdata/roms/snes/Installed.sfc"},
		8: {System: "snes", Path: "/userdata/roms/snes/Gone.sfc"},
	}
	ix := c.index(Options{Installed: func(id int) (Game, bool) { g, ok := rec[id]; return g, ok }})
	if got := ix.Find(context.Background(), 7, Candidate{}); got == nil || got.By != ByInstall || got.GameID != c.games[0].ID {
		t.Errorf("installed: %+v", got)
	}
	if got := ix.Find(context.Background(), 8, Candidate{}); got != nil {
		t.Errorf("record ES no longer lists: %+v, want nil", got)
	}
}

func TestHostileNames(t *testing.T) {
	c := newCabinet(t)
	long := strings.Repeat("Ü", 120) + ".sfc" // 244 bytes, under NAME_MAX
	evil := "Evil\x1b[31m\u202e.sfc"
	c.file("snes", "/userdata/roms/snes/"+evil, []byte("e"), true)
	c.file("snes", "/userdata/roms/snes/"+long, []byte("l"), true)
	// A path ES reports that is longer than any path on disk: Resolve (the seam) maps it to a
	// real file, so the cap of the returned path is exercised.
	deep := "/userdata/roms/snes" + strings.Repeat("/"+strings.Repeat("d", 200), 30) + "/Deep.sfc"
	c.list("snes", deep)
	c.file("snes", "/deep.sfc", []byte("d"), false)
	ix := Build(c.games, Options{Resolve: func(p string) string {
		if p == deep {
			return c.resolve("/deep.sfc")
		}
		return c.resolve(p)
	}})
	got := ix.Find(context.Background(), 1, single("snes", evil, []byte("e"), false))
	if got == nil {
		t.Fatal("hostile name not found")
	}
	if strings.ContainsAny(got.Path, "\x1b\u202e") || !utf8.ValidString(got.Path) {
		t.Errorf("path not cleaned: %q", got.Path)
	}
	if got := ix.Find(context.Background(), 1, single("snes", long, []byte("l"), false)); got == nil || !strings.HasSuffix(got.Path, long) {
		t.Errorf("long name: %+v", got)
	}
	got = ix.Find(context.Background(), 1, single("snes", "Deep.sfc", []byte("d"), false))
	if got == nil || utf8.RuneCountInString(got.Path) > maxPathRunes {
		t.Errorf("deep path: %+v, want a match capped at %d runes", got, maxPathRunes)
	}
	for _, name := range []string{"", "..", "a/b.sfc", "nul\x00.sfc", strings.Repeat("x", 5000)} {
		if got := ix.Find(context.Background(), 1, single("snes", name, []byte("e"), true)); got != nil {
			t.Errorf("%.20q: %+v, want nil", name, got)
		}
	}
}

func TestHashCacheAndCancel(t *testing.T) {
	data := bytes.Repeat([]byte("data"), 1000)
	c := newCabinet(t)
	c.file("gb", "/userdata/roms/gb/Renamed.gb", data, true)
	h := NewHasher(0)
	cand := single("gb", "Original.gb", data, true)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if got := c.index(Options{Hasher: h}).Find(cancelled, 1, cand); got != nil || h.hashes != 0 {
		t.Errorf("cancelled: %+v after %d hashes, want nil and none", got, h.hashes)
	}
	if _, err := h.Sums(cancelled, c.resolve(c.games[0].Path), romhash.Limits{}); err == nil || h.Len() != 0 {
		t.Errorf("cancelled hash: err %v, %d cached; want an error and nothing cached", err, h.Len())
	}
	h.hashes = 0
	for i := 0; i < 2; i++ { // a rebuilt index reuses the cache
		if got := c.index(Options{Hasher: h}).Find(context.Background(), 1, cand); got == nil || got.By != ByHash {
			t.Fatalf("build %d: %+v", i, got)
		}
	}
	if h.hashes != 1 {
		t.Errorf("hashed %d times over two builds, want 1", h.hashes)
	}
	c.file("gb", "/userdata/roms/gb/Renamed.gb", append(data, '!'), false) // size changes: a new key
	if got := c.index(Options{Hasher: h}).Find(context.Background(), 1, cand); got != nil {
		t.Errorf("changed file still matched: %+v", got)
	}
	if got := c.index(Options{Hasher: h, MaxHashBytes: 10}).Find(context.Background(), 1, single("gb", "X.gb", append(data, '!'), true)); got != nil {
		t.Errorf("file over MaxHashBytes matched: %+v", got)
	}
	if got := c.index(Options{Hasher: h}).Mark(cancelled, []Item{{ROMID: 1, Candidate: cand}}); got[0] != nil {
		t.Errorf("Mark with a cancelled context: %+v", got[0])
	}
}

func TestHasherBound(t *testing.T) {
	dir := t.TempDir()
	h := NewHasher(2)
	for i := 0; i < 5; i++ {
		p := filepath.Join(dir, fmt.Sprint(i))
		os.WriteFile(p, []byte{byte(i)}, 0o644)
		if _, err := h.Sums(context.Background(), p, romhash.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	if h.Len() != 2 {
		t.Errorf("len = %d, want 2", h.Len())
	}
}
