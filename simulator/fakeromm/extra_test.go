package fakeromm

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// romJSON is the part of DetailedRomSchema the AddROM tests read.
type romJSON struct {
	ID               int    `json:"id"`
	Name             string `json:"name"`
	FSName           string `json:"fs_name"`
	PlatformID       int    `json:"platform_id"`
	PlatformSlug     string `json:"platform_slug"`
	PlatformFSSlug   string `json:"platform_fs_slug"`
	HasMultipleFiles bool   `json:"has_multiple_files"`
	SHA1Hash         string `json:"sha1_hash"`
	Files            []struct {
		ID             int     `json:"id"`
		FileName       string  `json:"file_name"`
		FilePath       string  `json:"file_path"`
		IsTopLevel     bool    `json:"is_top_level"`
		Category       *string `json:"category"`
		SHA1Hash       string  `json:"sha1_hash"`
		CRCHash        string  `json:"crc_hash"`
		ArchiveMembers []struct {
			Name     string `json:"name"`
			SHA1Hash string `json:"sha1_hash"`
		} `json:"archive_members"`
	} `json:"files"`
}

func TestAddROM(t *testing.T) {
	s, base := newServer(t, Options{})
	tok := s.Token()
	before := s.ROMs()
	maxFile := 0
	for _, r := range before {
		for _, f := range r.Files {
			maxFile = max(maxFile, f.ID)
		}
	}
	arcade, err := s.AddPlatform(Platform{Slug: "arcade", FSSlug: "arcade", Name: "Arcade", Hashable: true})
	if err != nil {
		t.Fatal(err)
	}
	if arcade.ID != fixturePlatforms+1 {
		t.Errorf("arcade platform id %d, want %d", arcade.ID, fixturePlatforms+1)
	}

	// A zip: hashed by its member, as RomM hashes an archive.
	member := fill("metal-slug", 4096)
	z, err := buildZip([]zipEntry{{"mslug.rom", member}})
	if err != nil {
		t.Fatal(err)
	}
	mslug, err := s.AddROM(ROMSpec{PlatformID: arcade.ID, Name: "Metal Slug", Files: []FileSpec{{Name: "mslug.zip", Data: z}}})
	if err != nil {
		t.Fatal(err)
	}
	if mslug.ID != fixtureROMs+1 || mslug.FSName != "mslug.zip" || len(mslug.Files) != 1 || mslug.Files[0].ID != maxFile+1 {
		t.Fatalf("added ROM %d %q, files %+v; want id %d, file id %d", mslug.ID, mslug.FSName, mslug.Files, fixtureROMs+1, maxFile+1)
	}
	if want := digests(member); mslug.Hashes != want || mslug.Files[0].Hashes != want || len(mslug.Files[0].ArchiveMembers) != 1 {
		t.Errorf("zip hashes %+v, file %+v; want the member's %+v", mslug.Hashes, mslug.Files[0], want)
	}
	var got romJSON
	getJSON(t, base, fmt.Sprintf("/api/roms/%d", mslug.ID), tok, 200, &got)
	if got.Name != "Metal Slug" || got.PlatformSlug != "arcade" || got.PlatformFSSlug != "arcade" || len(got.Files) != 1 ||
		got.Files[0].SHA1Hash != mslug.SHA1 || len(got.Files[0].ArchiveMembers) != 1 || got.Files[0].Category == nil || *got.Files[0].Category != "game" {
		t.Errorf("GET /api/roms/%d: %+v", mslug.ID, got)
	}

	// A folder with a manual below it, and a hostile name kept verbatim.
	game := fill("folder-game", 3000)
	manual := []byte("%PDF-1.4 a manual")
	hostile := "../../etc/\u202epasswd\x01"
	folder, err := s.AddROM(ROMSpec{PlatformID: PlatformPSX, Name: "Kilo Keep", FSName: "Kilo Keep (USA)", Folder: true, Files: []FileSpec{
		{Name: "Kilo Keep (USA).bin", Data: game},
		{Name: "Kilo Keep Manual.pdf", Dir: "manual", Category: "manual", Data: manual},
		{Name: hostile, Data: []byte("x")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	getJSON(t, base, fmt.Sprintf("/api/roms/%d", folder.ID), tok, 200, &got)
	if folder.ID != mslug.ID+1 || !got.HasMultipleFiles || len(got.Files) != 3 {
		t.Fatalf("folder ROM %d: %+v", folder.ID, got)
	}
	byName := map[string]int{}
	for i, f := range got.Files {
		byName[f.FileName] = i
	}
	bin := got.Files[byName["Kilo Keep (USA).bin"]]
	if bin.SHA1Hash != digests(game).SHA1 || !bin.IsTopLevel || bin.FilePath != "roms/psx/Kilo Keep (USA)" || *bin.Category != "game" {
		t.Errorf("game file %+v", bin)
	}
	pdf := got.Files[byName["Kilo Keep Manual.pdf"]]
	if pdf.IsTopLevel || pdf.FilePath != "roms/psx/Kilo Keep (USA)/manual" || pdf.Category == nil || *pdf.Category != "manual" {
		t.Errorf("manual %+v", pdf)
	}
	if _, ok := byName[hostile]; !ok {
		t.Errorf("the hostile name is not served verbatim: %v", byName)
	}
	// Its download: the one file asked for, resumable.
	code, _, body := do(t, "GET", fmt.Sprintf("%s/api/roms/%d/content/x?file_ids=%d", base, folder.ID, bin.ID), tok, http.Header{"Range": {"bytes=1000-"}})
	if code != 206 || !bytes.Equal(body, game[1000:]) {
		t.Errorf("range download: %d, %d bytes", code, len(body))
	}
	if q := s.Requests(); q[len(q)-1].Range != "bytes=1000-" {
		t.Errorf("recorded Range %q", q[len(q)-1].Range)
	}

	// Searches and platform filters find them; the fixture is where it was.
	var p page
	getJSON(t, base, "/api/roms?search_term="+url.QueryEscape("Kilo"), tok, 200, &p)
	if ids := p.ids(); len(ids) != 1 || ids[0] != folder.ID {
		t.Errorf("search Kilo: %v", ids)
	}
	getJSON(t, base, fmt.Sprintf("/api/roms?platform_ids=%d", arcade.ID), tok, 200, &p)
	if ids := p.ids(); len(ids) != 1 || ids[0] != mslug.ID {
		t.Errorf("arcade ROMs: %v", ids)
	}
	getJSON(t, base, "/api/roms?limit=100", tok, 200, &p)
	if *p.Total != fixtureROMs+2 {
		t.Errorf("total %d, want %d", *p.Total, fixtureROMs+2)
	}
	var names []string
	for _, it := range p.Items {
		names = append(names, it.Name)
	}
	// RomM's name order: Kilo after Iota, Metal after Kilo.
	if j := strings.Join(names, ","); !strings.Contains(j, "Iota Invaders,Kilo Keep,Metal Slug") {
		t.Errorf("name order %s", j)
	}
	for _, r := range before {
		now, _ := s.ROM(r.ID)
		if now.Name != r.Name || now.Files[0].ID != r.Files[0].ID {
			t.Errorf("fixture ROM %d changed: %q file %d", r.ID, now.Name, now.Files[0].ID)
		}
	}
	if s.ROMCount() != fixtureROMs+2 || len(s.Platforms()) != fixturePlatforms+1 {
		t.Errorf("%d ROMs, %d platforms", s.ROMCount(), len(s.Platforms()))
	}
}

func TestAddROMHashOverrides(t *testing.T) {
	s, base := newServer(t, Options{})
	data := fill("override", 1000)
	bad := Hashes{SHA1: strings.Repeat("0", 40)}
	wrong, err := s.AddROM(ROMSpec{PlatformID: PlatformSNES, Files: []FileSpec{{Name: "Wrong (USA).sfc", Data: data}}, Hashes: &bad})
	if err != nil {
		t.Fatal(err)
	}
	none, err := s.AddROM(ROMSpec{PlatformID: PlatformSNES, Files: []FileSpec{{Name: "None (USA).sfc", Data: data}}, NoHashes: true})
	if err != nil {
		t.Fatal(err)
	}
	switchP, err := s.AddPlatform(Platform{Slug: "switch", FSSlug: "switch"}) // not Hashable, as RomM's NON_HASHABLE_PLATFORMS
	if err != nil {
		t.Fatal(err)
	}
	unhashed, err := s.AddROM(ROMSpec{PlatformID: switchP.ID, Files: []FileSpec{{Name: "Game.nsp", Data: data}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   int
		sha1 string
	}{{wrong.ID, bad.SHA1}, {none.ID, ""}, {unhashed.ID, ""}} {
		var got romJSON
		getJSON(t, base, fmt.Sprintf("/api/roms/%d", tt.id), s.Token(), 200, &got)
		if got.SHA1Hash != tt.sha1 || got.Files[0].SHA1Hash != tt.sha1 || (tt.sha1 == "" && got.Files[0].CRCHash != "") {
			t.Errorf("ROM %d: sha1 %q, file %+v; want %q", tt.id, got.SHA1Hash, got.Files[0], tt.sha1)
		}
	}
}

func TestAddROMRefusals(t *testing.T) {
	s, _ := newServer(t, Options{})
	one := []FileSpec{{Name: "a.sfc", Data: []byte("a")}}
	for _, tt := range []struct {
		name string
		spec ROMSpec
		want string
	}{
		{"no platform", ROMSpec{PlatformID: 99, Files: one}, "no platform 99"},
		{"no files", ROMSpec{PlatformID: PlatformSNES}, "no files"},
		{"two files, no folder", ROMSpec{PlatformID: PlatformSNES, Files: append(one, one...)}, "Folder ROM"},
		{"folder without fs_name", ROMSpec{PlatformID: PlatformPSX, Folder: true, Files: one}, "needs FSName"},
		{"dir outside a folder", ROMSpec{PlatformID: PlatformSNES, Files: []FileSpec{{Name: "a", Dir: "b"}}}, "has a Dir"},
		{"unknown category", ROMSpec{PlatformID: PlatformPSX, Folder: true, FSName: "x", Files: []FileSpec{{Name: "a", Category: "extra"}}}, "not one of RomM's"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.AddROM(tt.spec); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
	if _, err := s.AddPlatform(Platform{Slug: "snes", FSSlug: "snes"}); err == nil {
		t.Error("a second platform on fs_slug snes was added")
	}
	if s.ROMCount() != fixtureROMs {
		t.Errorf("refusals added ROMs: %d", s.ROMCount())
	}
	g, _ := newServer(t, Options{Generate: Scale{ROMs: 10, Platforms: 1}})
	if _, err := g.AddROM(ROMSpec{PlatformID: PlatformSNES, Files: one}); err == nil || !strings.Contains(err.Error(), "synthetic") {
		t.Errorf("AddROM with synthetic ROMs: %v", err)
	}
}

// TestAddROMWhileServing adds ROMs while requests read the library (run
// with -race: the library lock keeps them apart).
func TestAddROMWhileServing(t *testing.T) {
	s, base := newServer(t, Options{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", base+"/api/roms?limit=50&search_term=a", nil)
				req.Header.Set("Authorization", "Bearer "+s.Token())
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				s.ROMs()
			}
		}()
	}
	for i := range 20 {
		if _, err := s.AddROM(ROMSpec{PlatformID: PlatformNES, Files: []FileSpec{{Name: fmt.Sprintf("Added %d.nes", i), Data: []byte{byte(i)}}}}); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if s.ROMCount() != fixtureROMs+20 {
		t.Errorf("%d ROMs", s.ROMCount())
	}
}
