package fakeromm

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"testing"
)

func TestROMSearch(t *testing.T) {
	s, base := newServer(t, Options{})
	alpha, _ := s.ROM(ROMAlphaQuest)
	beta, _ := s.ROM(ROMBetaRacer)
	echo, _ := s.ROM(ROMEchoChamber)
	delta, _ := s.ROM(ROMDeltaForce)
	disc2 := echo.Files[2] // "(Disc 2).bin": a file-level hash only
	member := delta.Files[0].ArchiveMembers[0]
	vGenre := virtualID("Racing", "genre")

	for _, tc := range []struct {
		query string
		want  []int // in order
	}{
		{"", []int{1, 10, 2, 3, 4, 5, 6, 7, 8, 9}}, // name_sort_key: "The Ancient Zeta" under A
		{"search_term=alpha", []int{ROMAlphaQuest}},
		{"search_term=ALPHA%20quest", []int{ROMAlphaQuest}},
		{"search_term=quest%20usa", []int{ROMAlphaQuest}},         // "usa" only in fs_name: words match name or fs_name
		{"search_term=quest%20europe", []int{}},                   // words are ANDed
		{"search_term=alpha%7Cbeta", []int{1, 2}},                 // "|" is OR
		{"search_term=%20%7C%20cosmic%20%7C", []int{3}},           // empty alternatives dropped
		{"search_term=ancient", []int{ROMAncientZeta}},            // the article is only dropped for sorting
		{"search_term=(usa)%20.sfc", []int{10, 3}},                // parentheses are plain characters
		{"search_term=rally_(usa", []int{ROMDeltaForce}},          // "_" is a LIKE wildcard in RomM's ILIKE
		{"search_term=" + alpha.CRC, []int{ROMAlphaQuest}},        // 8 hex digits: crc
		{"search_term=" + beta.SHA1, []int{ROMBetaRacer}},         // 40: sha1 (of the zip's member)
		{"search_term=" + disc2.MD5, []int{ROMEchoChamber}},       // 32: md5, of a file
		{"search_term=" + upper(alpha.MD5), []int{ROMAlphaQuest}}, // hex is case-insensitive
		{"search_term=" + member.CRC, []int{}},                    // a member's own hash is not a column
		{"search_term=" + alpha.CRC[:7], []int{}},                 // 7 digits is no digest
		{fmt.Sprintf("platform_ids=%d&platform_ids=%d", PlatformNES, PlatformGB), []int{1, 2, 6, 9}},
		{fmt.Sprintf("platform_ids=%d&search_term=zeta", PlatformSuperFamicom), []int{}},
		{"missing=true", []int{ROMIotaInvaders}},
		{"missing=false", []int{1, 10, 2, 3, 4, 5, 6, 7, 8}},
		{"matched=false", []int{ROMGammaGears, ROMHotelHavoc}},
		{"favorite=true", []int{1, 3}},
		{"collection_id=2", []int{2, 4, 5}},
		{"collection_id=2&search_term=delta", []int{ROMDeltaForce}},
		{"smart_collection_id=1", []int{ROMFoxtrotTales}},
		{"virtual_collection_id=" + url.QueryEscape(vGenre), []int{2, 4}},
		{"genres=Racing&genres=Puzzle", []int{2, 4, 5}},
		{"genres=Adventure&genres=Puzzle&genres_logic=all", []int{ROMEchoChamber}},
		{"regions=USA&regions_logic=none&platform_ids=1", []int{ROMBetaRacer}},
		{"order_by=id", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"order_by=id&order_dir=desc", []int{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"order_by=no_such_column&order_dir=DESC", []int{9, 8, 7, 6, 5, 4, 3, 2, 10, 1}},
		{"limit=3&offset=2", []int{2, 3, 4}},
		{"limit=3&offset=100", []int{}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var p page
			getJSON(t, base, "/api/roms?"+tc.query, s.Token(), 200, &p)
			if got := p.ids(); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("ids %v, want %v", got, tc.want)
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func TestROMPageSidecars(t *testing.T) {
	s, base := newServer(t, Options{})
	var p page
	getJSON(t, base, "/api/roms?limit=2&search_term=usa", s.Token(), 200, &p)
	if *p.Total != 6 || !reflect.DeepEqual(p.ids(), []int{1, 10}) || p.Limit != 2 || p.Offset != 0 {
		t.Errorf("total %d, items %v, limit %d offset %d; want 6, [1 10], 2, 0", *p.Total, p.ids(), p.Limit, p.Offset)
	}
	// rom_id_index is every match, in order, not the page.
	if want := []int{1, 10, 3, 4, 5, 9}; !reflect.DeepEqual(p.ROMIDIndex, want) {
		t.Errorf("rom_id_index %v, want %v", p.ROMIDIndex, want)
	}
	if p.CharIndex["A"] != 0 || p.CharIndex["C"] != 2 {
		t.Errorf("char_index %v", p.CharIndex)
	}
	var fv struct {
		Genres    []string
		Platforms []int
	}
	if err := json.Unmarshal(p.FilterValues, &fv); err != nil || !sort.StringsAreSorted(fv.Genres) || len(fv.Platforms) == 0 {
		t.Errorf("filter_values %s", p.FilterValues)
	}
	// The flags off: every sidecar present and empty, as RomM sends them.
	p = page{}
	getJSON(t, base, "/api/roms?with_char_index=false&with_filter_values=false&with_rom_id_index=false", s.Token(), 200, &p)
	if len(p.CharIndex) != 0 || len(p.ROMIDIndex) != 0 || string(p.FilterValues) == "null" || *p.Total != fixtureROMs {
		t.Errorf("flags off: char_index %v, rom_id_index %v, filter_values %s, total %v", p.CharIndex, p.ROMIDIndex, p.FilterValues, p.Total)
	}
}

func TestCollectionsAndFirmware(t *testing.T) {
	s, base := newServer(t, Options{})
	var colls []struct {
		ID         int
		Name       string
		ROMIDs     []int `json:"rom_ids"`
		IsFavorite bool  `json:"is_favorite"`
	}
	getJSON(t, base, "/api/collections", s.Token(), 200, &colls)
	if len(colls) != 2 || !colls[0].IsFavorite || !reflect.DeepEqual(colls[1].ROMIDs, []int{2, 4, 5}) {
		t.Errorf("collections %+v", colls)
	}
	var smart []struct {
		ROMIDs   []int          `json:"rom_ids"`
		Criteria map[string]any `json:"filter_criteria"`
		IsSmart  bool           `json:"is_smart"`
	}
	getJSON(t, base, "/api/collections/smart", s.Token(), 200, &smart)
	if len(smart) != 1 || !smart[0].IsSmart || !reflect.DeepEqual(smart[0].ROMIDs, []int{ROMFoxtrotTales}) {
		t.Errorf("smart collections %+v", smart)
	}
	var virt []struct {
		ID, Name, Type string
		ROMIDs         []int `json:"rom_ids"`
	}
	getJSON(t, base, "/api/collections/virtual?type=genre", s.Token(), 200, &virt)
	var names []string
	for _, v := range virt {
		names = append(names, v.Name)
		if v.Type != "genre" || v.ID != virtualID(v.Name, "genre") {
			t.Errorf("virtual %+v", v)
		}
	}
	if !reflect.DeepEqual(names, []string{"Adventure", "Puzzle", "Racing", "Role-playing (RPG)", "Shooter"}) {
		t.Errorf("genre collections %v", names)
	}
	// RomM's id is Python's json.dumps in URL-safe base64.
	if got := virtualID("Racing", "genre"); got != "eyJuYW1lIjogIlJhY2luZyIsICJ0eXBlIjogImdlbnJlIn0=" {
		t.Errorf("virtual id %s", got)
	}
	getJSON(t, base, "/api/collections/virtual/"+virtualID("Racing", "genre"), s.Token(), 200, &virt[0])
	if !reflect.DeepEqual(virt[0].ROMIDs, []int{2, 4}) {
		t.Errorf("virtual Racing %+v", virt[0])
	}
	getJSON(t, base, "/api/collections/virtual?type=all&limit=3", s.Token(), 200, &virt)
	if len(virt) != 3 {
		t.Errorf("type=all&limit=3: %d", len(virt))
	}
	getJSON(t, base, "/api/collections/virtual?type=nonsense", s.Token(), 200, &virt)
	if len(virt) != 0 {
		t.Errorf("unknown type: %d collections, want none (RomM filters, it does not validate)", len(virt))
	}

	var fw []struct {
		ID         int
		PlatformID int    `json:"platform_id"`
		FileName   string `json:"file_name"`
		SHA1       string `json:"sha1_hash"`
	}
	getJSON(t, base, fmt.Sprintf("/api/firmware?platform_id=%d", PlatformPSX), s.Token(), 200, &fw)
	if len(fw) != 1 || fw[0].FileName != "scph5501.bin" || fw[0].SHA1 != digests(s.Firmware()[0].Bytes).SHA1 {
		t.Errorf("psx firmware %+v", fw)
	}
	var plats []struct {
		ID            int
		Slug          string
		FSSlug        string `json:"fs_slug"`
		ROMCount      int    `json:"rom_count"`
		DisplayName   string `json:"display_name"`
		FirmwareCount int    `json:"firmware_count"`
	}
	getJSON(t, base, "/api/platforms", s.Token(), 200, &plats)
	byFS := map[string]int{}
	for _, p := range plats {
		byFS[p.FSSlug] = p.ROMCount
		if p.FSSlug == "sfam" && p.DisplayName != "Super Famicom" {
			t.Errorf("sfam display_name %q", p.DisplayName)
		}
	}
	if want := map[string]int{"nes": 3, "snes": 2, "megadrive": 1, "psx": 1, "gb": 1, "sfam": 1, "ios": 1}; !reflect.DeepEqual(byFS, want) {
		t.Errorf("rom counts %v, want %v", byFS, want)
	}
}
