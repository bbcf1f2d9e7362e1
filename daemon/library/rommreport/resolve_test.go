package rommreport

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/haentities"
)

type lookup struct {
	sha1s       map[string]int
	names       map[string]int
	hashCalls   int
	nameCalls   int
	lastNameArg string
}

func (l *lookup) ByHash(_ context.Context, _, _, sha1 string) (int, error) {
	l.hashCalls++
	if id, ok := l.sha1s[sha1]; ok {
		return id, nil
	}
	return 0, ErrUnknown
}

func (l *lookup) ByName(_ context.Context, folder, name string, size int64) (int, error) {
	l.nameCalls++
	l.lastNameArg = folder + "/" + name
	if id, ok := l.names[folder+"/"+name]; ok {
		return id, nil
	}
	return 0, ErrUnknown
}

func TestFileResolver(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) string {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	hashed := write("userdata/roms/nes/Alpha.nes", "alpha bytes")
	write("userdata/roms/nes/Renamed.nes", "renamed bytes")
	sums, err := romhash.File(hashed, romhash.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	l := &lookup{sha1s: map[string]int{sums.SHA1: 11}, names: map[string]int{"nes/Renamed.nes": 22}}
	f := &FileResolver{Lookup: l, Path: func(p string) string { return filepath.Join(root, p) }}
	for _, tc := range []struct {
		rom   string
		id    int
		known bool
	}{
		{"/userdata/roms/nes/Alpha.nes", 11, true},
		{"/userdata/roms/nes/Renamed.nes", 22, true},
		{"/userdata/roms/nes/Gone.nes", 0, false}, // no file: the name alone, unknown
		{"", 0, false},
	} {
		id, known, err := f.ROMID(context.Background(), haentities.Session{Rom: tc.rom, System: "nes"})
		if err != nil || id != tc.id || known != tc.known {
			t.Errorf("%q: %d, %v, %v; want %d, %v", tc.rom, id, known, err, tc.id, tc.known)
		}
	}
	calls := l.hashCalls + l.nameCalls
	f.ROMID(context.Background(), haentities.Session{Rom: "/userdata/roms/nes/Alpha.nes", System: "nes"})
	if l.hashCalls+l.nameCalls != calls {
		t.Error("a second session of the same game asked RomM again")
	}
}

// TestFileResolverInstalledFirst: a game Cabinet installed is RomM's id from its install record,
// without reading the file or asking RomM.
func TestFileResolverInstalledFirst(t *testing.T) {
	l := &lookup{}
	r := &FileResolver{Lookup: l, Path: func(p string) string { return filepath.Join(t.TempDir(), p) },
		Installed: func(rom string) (int, bool) { return 42, rom == "/userdata/roms/snes/Cosmic Crusade (USA).sfc" }}
	id, known, err := r.ROMID(context.Background(), haentities.Session{Rom: "/userdata/roms/snes/Cosmic Crusade (USA).sfc", System: "snes"})
	if err != nil || !known || id != 42 || l.hashCalls+l.nameCalls != 0 {
		t.Fatalf("installed game: %d %v %v, %d RomM lookups", id, known, err, l.hashCalls+l.nameCalls)
	}
	if _, known, _ := r.ROMID(context.Background(), haentities.Session{Rom: "/userdata/roms/snes/Other.sfc", System: "snes"}); known || l.nameCalls != 1 {
		t.Errorf("another game: known %v, %d name lookups", known, l.nameCalls)
	}
}
