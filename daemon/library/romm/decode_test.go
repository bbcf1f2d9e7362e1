package romm

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodePage(t *testing.T) {
	p, err := decodePage(readTestdata(t, "roms_page.json"), 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 2 || p.Offset != 0 || p.Limit != 20 || len(p.Items) != 2 {
		t.Fatalf("page = total %d offset %d limit %d, %d items", p.Total, p.Offset, p.Limit, len(p.Items))
	}
	want := ROM{
		ID: 1, PlatformID: 3, PlatformSlug: "snes", PlatformFSSlug: "snes",
		Name: "Super Metroid", FSName: "Super Metroid (USA).sfc", FSSizeBytes: 3145728, Year: 1994,
		Genres:    []string{"Platform", "Adventure"},
		Summary:   "Samus returns.\n\nThe last Metroid is in captivity.",
		Players:   "1",
		Developer: "Nintendo R&D1, Intelligent Systems",
		Regions:   []string{"USA"},
		CRC:       "d63ed5f8", MD5: "21f3e98df4780ee1c667b84e57d88675", SHA1: "da957f0d63d14cb441d215462904c4fa8519c613",
		Files: []File{{ID: 11, Name: "Super Metroid (USA).sfc", SizeBytes: 3145728, Category: "game",
			CRC: "d63ed5f8", MD5: "21f3e98df4780ee1c667b84e57d88675", SHA1: "da957f0d63d14cb441d215462904c4fa8519c613"}},
	}
	if !reflect.DeepEqual(p.Items[0], want) {
		t.Errorf("item 0\n got %+v\nwant %+v", p.Items[0], want)
	}
	arcade := p.Items[1]
	if arcade.Name != "sf2" || arcade.Developer != "Capcom" || arcade.Year != 0 || arcade.SHA1 != "" || arcade.CRC != "" {
		t.Errorf("item 1: name %q developer %q year %d sha1 %q crc %q", arcade.Name, arcade.Developer, arcade.Year, arcade.SHA1, arcade.CRC)
	}
	if len(arcade.Files) != 2 || len(arcade.Files[0].ArchiveMembers) != 2 || arcade.Files[1].Category != "manual" {
		t.Fatalf("item 1 files = %+v", arcade.Files)
	}
	m := arcade.Files[0].ArchiveMembers[1]
	if m != (ArchiveMember{Name: "sf2e.37g", SizeBytes: 131072, CRC: "fb92cd74"}) {
		t.Errorf("archive member = %+v", m)
	}
}

// TestDecodePrismShapes: a mock built from the 5.3.1 document sends "string", 0, true and
// one-item arrays everywhere. That decodes, without junk hashes or a 1970 release year.
func TestDecodePrismShapes(t *testing.T) {
	p, err := decodePage(readTestdata(t, "prism_roms_page.json"), 0, 20)
	if err != nil {
		t.Fatalf("Prism page: %v", err)
	}
	if len(p.Items) != 1 || p.Total != 0 {
		t.Fatalf("Prism page: %d items, total %d", len(p.Items), p.Total)
	}
	r := p.Items[0]
	if r.Name != "string" || r.CRC != "" || r.MD5 != "" || r.SHA1 != "" || r.Year != 0 || len(r.Files) != 1 || r.Files[0].CRC != "" {
		t.Errorf("Prism ROM = %+v", r)
	}
	if ps, err := decodePlatforms(readTestdata(t, "prism_platforms.json")); err != nil || len(ps) != 1 || ps[0].Name != "string" {
		t.Errorf("Prism platforms = %+v, %v", ps, err)
	}
	if cs, err := decodeCollections(readTestdata(t, "prism_collections.json"), KindRegular); err != nil || len(cs) != 1 || cs[0].ID != "0" {
		t.Errorf("Prism collections = %+v, %v", cs, err)
	}
	if cs, err := decodeCollections(readTestdata(t, "prism_virtual.json"), KindVirtual); err != nil || len(cs) != 1 || cs[0].ID != "string" {
		t.Errorf("Prism virtual collections = %+v, %v", cs, err)
	}
	for _, body := range []string{`{"items":[],"total":0,"limit":1,"offset":0}`, `{"items":[]}`} {
		if p, err := decodePage([]byte(body), 0, 20); err != nil || len(p.Items) != 0 {
			t.Errorf("empty page %s = %+v, %v", body, p, err)
		}
	}
}

func TestDecodePageEdges(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantErr   bool
		wantTotal int
		wantItems int
	}{
		{"null total (5.2+ without with_total)", `{"items":[],"total":null}`, false, -1, 0},
		{"missing total", `{"items":[]}`, false, -1, 0},
		{"more items than asked are cut", `{"items":[{"id":1},{"id":2},{"id":3}],"total":3}`, false, 3, 2},
		{"no items", `{"total":3}`, true, 0, 0},
		{"items null", `{"items":null}`, true, 0, 0},
		{"array instead of a page", `[]`, true, 0, 0},
		{"negative total", `{"items":[],"total":-1}`, true, 0, 0},
		{"id as text", `{"items":[{"id":"1"}]}`, true, 0, 0},
		{"negative id", `{"items":[{"id":-1}]}`, true, 0, 0},
		{"float id", `{"items":[{"id":1.5}]}`, true, 0, 0},
		{"negative size", `{"items":[{"id":1,"fs_size_bytes":-5}]}`, true, 0, 0},
		{"genres not a list", `{"items":[{"id":1,"metadatum":{"genres":"RPG"}}]}`, true, 0, 0},
		{"member with negative size", `{"items":[{"id":1,"files":[{"id":1,"archive_members":[{"size":-1}]}]}]}`, true, 0, 0},
		{"truncated", `{"items":[{"id":1}`, true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := decodePage([]byte(tt.body), 0, 2)
			if tt.wantErr {
				mustErr(t, err, ErrBadData)
				return
			}
			if err != nil || p.Total != tt.wantTotal || len(p.Items) != tt.wantItems {
				t.Fatalf("decodePage = total %d, %d items, %v; want total %d, %d items", p.Total, len(p.Items), err, tt.wantTotal, tt.wantItems)
			}
		})
	}
}

func TestDecodeCleansText(t *testing.T) {
	long := strings.Repeat("word ", 1000)
	body := `{"items":[{"id":1,"platform_id":1,"name":"Evil\u202egnp.exe\n\tGame","summary":"` + long + `",` +
		`"fs_name":"a\u0000b.zip","regions":["` + strings.Repeat("R", 100) + `","USA","USA"],` +
		`"metadatum":{"genres":["\u200bRPG",""],"player_count":"1\n2"}}]}`
	p, err := decodePage([]byte(body), 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Items[0]
	if r.Name != "Evilgnp.exe Game" || r.FSName != "ab.zip" || r.Players != "1 2" {
		t.Errorf("name %q fs_name %q players %q", r.Name, r.FSName, r.Players)
	}
	if n := utf8.RuneCountInString(r.Summary); n > capSummary || !strings.HasSuffix(r.Summary, "…") {
		t.Errorf("summary of %d runes, want it capped at %d with an ellipsis", n, capSummary)
	}
	if len(r.Regions) != 2 || utf8.RuneCountInString(r.Regions[0]) != capListItem || r.Regions[1] != "USA" {
		t.Errorf("regions = %q", r.Regions)
	}
	if !reflect.DeepEqual(r.Genres, []string{"RPG"}) {
		t.Errorf("genres = %q", r.Genres)
	}
}

func TestDecodeOlderShapes(t *testing.T) {
	// 4.x: no developers list (companies instead), multi before has_multiple_files.
	body := `{"id":5,"platform_id":2,"name":"Sonic","multi":true,"metadatum":{"companies":["Sega","Sonic Team","A","B"],"first_release_date":677376000000}}`
	r, err := decodeROM([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasMultipleFiles || r.Developer != "Sega, Sonic Team, A" || r.Year != 1991 {
		t.Errorf("ROM = %+v", r)
	}
	if _, err := decodeROM([]byte("null")); err == nil {
		t.Errorf("a null ROM decoded without an error")
	}
}

func TestDecodePlatforms(t *testing.T) {
	ps, err := decodePlatforms(readTestdata(t, "platforms.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Platform{
		{ID: 3, Slug: "snes", FSSlug: "snes", Name: "Super Nintendo Entertainment System", ROMCount: 120},
		{ID: 7, Slug: "arcade", FSSlug: "mame", Name: "Arcade (MAME)", ROMCount: 3000},
		{ID: 9, Slug: "genesis", FSSlug: "genesis", Name: "Sega Mega Drive/Genesis", ROMCount: 0},
	}
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("platforms\n got %+v\nwant %+v", ps, want)
	}
	for _, bad := range []string{`{}`, `[{"id":-1}]`, `[{"rom_count":-1}]`, `[{"slug":5}]`, `[{"id":"x"}]`} {
		if _, err := decodePlatforms([]byte(bad)); err == nil {
			t.Errorf("decodePlatforms(%s) gave no error", bad)
		}
	}
}

func TestCollections(t *testing.T) {
	tests := []struct {
		kind      string
		wantPath  string
		wantQuery string
		want      Collection
	}{
		{"", "/api/collections", "", Collection{ID: "4", Kind: "regular", Name: "Favourites", ROMCount: 49}},
		{"regular", "/api/collections", "", Collection{ID: "4", Kind: "regular", Name: "Favourites", ROMCount: 49}},
		{"smart", "/api/collections/smart", "", Collection{ID: "8", Kind: "smart", Name: "Unplayed RPGs", ROMCount: 1}},
		{"virtual", "/api/collections/virtual", "limit=500&type=all",
			Collection{ID: "eyJuYW1lIjogIlBsYXRmb3JtIiwgInR5cGUiOiAiZ2VucmUifQ==", Kind: "virtual", Name: "Platform", ROMCount: 1}},
		{"virtual:genre", "/api/collections/virtual", "limit=500&type=genre",
			Collection{ID: "eyJuYW1lIjogIlBsYXRmb3JtIiwgInR5cGUiOiAiZ2VucmUifQ==", Kind: "virtual", Name: "Platform", ROMCount: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			cs, err := newClient(t, srv.URL).Collections(context.Background(), tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			r := f.last(tt.wantPath)
			if r == nil || r.URL.RawQuery != tt.wantQuery {
				t.Fatalf("request = %v, want %s?%s", r, tt.wantPath, tt.wantQuery)
			}
			if len(cs) == 0 || cs[0] != tt.want {
				t.Errorf("first collection = %+v, want %+v", cs, tt.want)
			}
		})
	}
	_, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	for _, bad := range []string{"public", "virtual:", "virtual:platform", "virtual:all&x=1"} {
		_, err := c.Collections(context.Background(), bad)
		mustErr(t, err, ErrInvalid)
	}
}

func TestCollection(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/collections/5", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": 5, "name": "Couch co-op", "description": "Games for\r\n\r\n\r\ntwo.", "rom_ids": []int{1, 2}, "rom_count": 2})
	})
	c := newClient(t, srv.URL)
	got, err := c.Collection(context.Background(), "regular", "5")
	want := Collection{ID: "5", Kind: "regular", Name: "Couch co-op", Description: "Games for\n\ntwo.", ROMCount: 2}
	if err != nil || got != want {
		t.Fatalf("Collection = %+v, %v; want %+v", got, err, want)
	}
	_, err = c.Collection(context.Background(), "regular", "6")
	mustErr(t, err, ErrNotFound)
	for _, tt := range [][2]string{{"regular", "x"}, {"smart", "0"}, {"virtual", "a/b"}, {"virtual", ""}, {"other", "1"}} {
		_, err := c.Collection(context.Background(), tt[0], tt[1])
		mustErr(t, err, ErrInvalid)
	}
}
