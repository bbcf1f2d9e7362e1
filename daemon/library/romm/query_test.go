package romm

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestSearchQueryPerVersion pins the exact query sent to each RomM version: the index switches
// exist from 4.2 (char index), 4.6 (filter values), 5.1 (rom id index) and 5.2 (with_total), and
// platform_ids replaced platform_id in 4.6 (romm-api.md §5.1, checked against get_roms at each tag).
func TestSearchQueryPerVersion(t *testing.T) {
	q := SearchQuery{Term: "mario", PlatformIDs: []int{3}, Limit: 10, Offset: 20}
	const old = "limit=10&offset=20&platform_ids=3&search_term=mario&with_char_index=false&with_filter_values=false"
	tests := []struct {
		version, token, want string
	}{
		{"4.5.0", "", "limit=10&offset=20&platform_id=3&search_term=mario&with_char_index=false"},
		{"4.8.0", testToken, old},
		{"5.0.0", testToken, old},
		{"5.1.0-beta.3", testToken, old + "&with_rom_id_index=false"},
		{"5.2.0", testToken, old + "&with_rom_id_index=false&with_total=true"},
		{"5.3.1", testToken, old + "&with_rom_id_index=false&with_total=true"},
		{"5.4.0", testToken, old + "&with_rom_id_index=false&with_total=true"},
		{"development", testToken, old + "&with_rom_id_index=false&with_total=true"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			f, srv := newFake(t, tt.version)
			f.token = tt.token
			c := newClient(t, srv.URL, func(c *Config) { c.Token = tt.token })
			if _, err := c.SearchROMs(context.Background(), q); err != nil {
				t.Fatal(err)
			}
			if got := f.last("/api/roms").URL.RawQuery; got != tt.want {
				t.Errorf("query\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSearchQueryEverything(t *testing.T) {
	v, _ := ParseVersion("5.3.1")
	got, err := romsQuery(v, SearchQuery{
		Term: "  street\u202e  fighter\t", PlatformIDs: []int{1, 2}, CollectionID: 4, SmartCollectionID: 8,
		VirtualCollectionID: "eyJuYW1lIjogIngifQ==", WithFiles: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "collection_id=4&limit=20&offset=0&platform_ids=1&platform_ids=2&search_term=street+fighter" +
		"&smart_collection_id=8&virtual_collection_id=eyJuYW1lIjogIngifQ%3D%3D&with_char_index=false&with_files=true" +
		"&with_filter_values=false&with_rom_id_index=false&with_total=true"
	if got.Encode() != want {
		t.Errorf("query\n got %s\nwant %s", got.Encode(), want)
	}
}

func TestSearchQueryInvalid(t *testing.T) {
	long := make([]rune, 201)
	for i := range long {
		long[i] = 'a'
	}
	tests := []struct {
		name string
		q    SearchQuery
	}{
		{"limit too big", SearchQuery{Limit: MaxLimit + 1}},
		{"negative limit", SearchQuery{Limit: -1}},
		{"negative offset", SearchQuery{Offset: -1}},
		{"huge offset", SearchQuery{Offset: maxOffset + 1}},
		{"long term", SearchQuery{Term: string(long)}},
		{"zero platform", SearchQuery{PlatformIDs: []int{0}}},
		{"too many platforms", SearchQuery{PlatformIDs: make([]int, maxPlatformFilter+1)}},
		{"negative collection", SearchQuery{CollectionID: -3}},
		{"virtual id with a slash", SearchQuery{VirtualCollectionID: "../x"}},
	}
	_, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.SearchROMs(context.Background(), tt.q)
			mustErr(t, err, ErrInvalid)
		})
	}
}

func TestROMPathPerVersion(t *testing.T) {
	tests := []struct{ version, wantPath string }{
		{"4.8.0", "/api/roms/5"},
		{"4.9.2", "/api/roms/5"},
		{"5.0.0", "/api/roms/5/simple"},
		{"5.3.1", "/api/roms/5/simple"},
		{"development", "/api/roms/5/simple"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			f, srv := newFake(t, tt.version)
			c := newClient(t, srv.URL)
			rom, err := c.ROM(context.Background(), 5)
			if err != nil {
				t.Fatal(err)
			}
			if f.last(tt.wantPath) == nil {
				t.Errorf("RomM %s: no request to %s", tt.version, tt.wantPath)
			}
			if rom.Name != "Super Metroid" || len(rom.Files) != 1 {
				t.Errorf("ROM = %+v", rom)
			}
		})
	}
	_, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	for _, id := range []int{0, -1, 1 << 40} {
		_, err := c.ROM(context.Background(), id)
		mustErr(t, err, ErrInvalid)
	}
}

func TestROMNotFound(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/roms/77/simple", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, map[string]any{"detail": "Rom with id 77 not found"})
	})
	c := newClient(t, srv.URL)
	_, err := c.ROM(context.Background(), 77)
	mustErr(t, err, ErrNotFound)
	if !strings.Contains(err.Error(), "RomM has no ROM 77") {
		t.Errorf("error %q does not name the ROM", err)
	}
}
