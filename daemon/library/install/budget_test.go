package install

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// lie has the rig's fake RomM answer for rom with its own answer altered by edit, and serve its
// files' downloads from content (by the position of the file in the answer's "files").
func lie(t *testing.T, r *rig, rom fakeromm.ROM, edit func(m map[string]any), content ...fakeromm.HostileContent) {
	t.Helper()
	m, err := r.cab.RomM.ROMJSON(rom.ID)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	h := fakeromm.Hostile{ROMID: rom.ID, ROM: body, Content: map[int]fakeromm.HostileContent{}}
	for i, f := range rom.Files {
		if i < len(content) {
			h.Content[f.ID] = content[i]
		}
	}
	r.cab.RomM.SetHostile(h)
	t.Cleanup(func() { r.cab.RomM.SetHostile(fakeromm.Hostile{}) })
}

// sizes sets each file's file_size_bytes, and the ROM's fs_size_bytes to their sum wrapped as
// an int64 would (0 where that is negative: a negative size is refused on its own).
func sizes(n ...int64) func(m map[string]any) {
	return func(m map[string]any) {
		var total int64
		for i, f := range m["files"].([]any) {
			f.(map[string]any)["file_size_bytes"] = n[i]
			total += n[i]
		}
		m["fs_size_bytes"] = max(total, 0)
	}
}

// TestInstallBudget: no number from RomM sizes what reaches the disk. Sizes that overflow, a
// listed size over cabinet.library.max_install_bytes, a body without a size that never ends,
// and a Content-Length over the budget are each refused, before a byte or at the budget, with
// the reason; nothing is left behind.
func TestInstallBudget(t *testing.T) {
	r := newRig(t)
	const budget = 4 << 20
	r.in.MaxBytes = budget
	one := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Budget One",
		Files: []fakeromm.FileSpec{{Name: "Budget One (USA).sfc", Data: romBytes("budget", 4096)}}})
	var four []fakeromm.FileSpec
	for _, n := range []string{"Disc 1", "Disc 2", "Disc 3", "Disc 4"} {
		four = append(four, fakeromm.FileSpec{Name: "Budget Four (" + n + ").cue", Data: cueSheet("x.bin")})
	}
	multi := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformPSX, Name: "Budget Four", FSName: "Budget Four", Folder: true, Files: four})

	for _, tt := range []struct {
		name     string
		rom      fakeromm.ROM
		system   string
		edit     func(m map[string]any)
		content  []fakeromm.HostileContent
		want     []string
		maxBytes int64 // the most the download may have written
		asked    bool  // RomM was asked for the file (else it was refused before)
	}{
		{name: "sizes that wrap to zero", rom: multi, system: "psx", edit: sizes(1<<62, 1<<62, 1<<62, 1<<62),
			want: []string{"add up to more than any disk holds", "rescan the platform in RomM"}},
		{name: "sizes that wrap negative", rom: multi, system: "psx", edit: sizes(1<<62, 1<<62, 1<<62, 1<<62-1),
			want: []string{"add up to more than any disk holds"}},
		{name: "a size over the cap", rom: one, system: "snes", edit: sizes(budget + 1),
			want: []string{"RomM lists 4.0 MiB for Budget One, more than the 4.0 MiB an install may write (cabinet.library.max_install_bytes)"}},
		{name: "a size no disk has", rom: one, system: "snes", edit: sizes(1<<63 - 1),
			want: []string{"more than the 4.0 MiB an install may write"}},
		{name: "no size and a body without end", rom: one, system: "snes", edit: sizes(0),
			content: []fakeromm.HostileContent{{Endless: true}},
			want:    []string{"RomM sent more than the 4194304 bytes this download may write", "cabinet.library.max_install_bytes (4.0 MiB)", "nothing of the game is kept"}, maxBytes: budget, asked: true},
		{name: "no size and a Content-Length over the budget", rom: one, system: "snes", edit: sizes(0),
			content: []fakeromm.HostileContent{{Endless: true, Length: 1 << 40}},
			want:    []string{"RomM lists 1099511627776 bytes for Budget One (USA).sfc, more than the 4194304 this download may write"}, asked: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lie(t, r, tt.rom, tt.edit, tt.content...)
			games := listed(t, r, tt.system)
			before := snapshot(t, r)
			var most atomic.Int64
			_, err := r.in.Install(context.Background(), Request{ROMID: tt.rom.ID}, func(p Progress) {
				if p.Phase == "" && p.Done > most.Load() {
					most.Store(p.Done)
				}
			})
			if err == nil {
				t.Fatal("installed")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %v\nwant it to say %q", err, w)
				}
			}
			if got := most.Load(); got > tt.maxBytes {
				t.Errorf("the download wrote %d bytes, want at most %d", got, tt.maxBytes)
			}
			if q := contentRequests(r, tt.rom.ID); !tt.asked && len(q) > 0 {
				t.Errorf("%d downloads asked of RomM, want the install refused before any", len(q))
			}
			assertNothingLeft(t, r, before, tt.system, games)
		})
	}
}
