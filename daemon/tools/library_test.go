package tools

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// libraryRig is the tools rig with the fake RomM behind the library tools,
// and one of its ROMs copied onto the cabinet (file and ES entry), so
// on_cabinet has something to find.
type libraryRig struct {
	*rig
	romm *fakeromm.Server
}

func newLibraryRig(t *testing.T, mod func(*Library)) *libraryRig {
	t.Helper()
	fr, err := fakeromm.New(fakeromm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fr)
	t.Cleanup(srv.Close)
	c, err := romm.New(romm.Config{URL: srv.URL, Token: fakeromm.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	var root string
	r := newRig(t, rigConfig{deps: func(d *Deps) {
		d.Library = Library{RomM: c, Platforms: platforms.Default(), APIIndex: VersionedAPIIndex(filepath.Join(d.Paths.StateDir, "romm-api"), c)}
		if mod != nil {
			mod(&d.Library)
		}
		root = filepath.Dir(filepath.Dir(d.Paths.LoadAvg)) // the rig's fake tree
		d.ResolvePath = func(p string) string { return filepath.Join(root, p) }
	}})
	// Alpha Quest (nes) is on the cabinet: its bytes under the rig's tree
	// and an ES entry for them.
	rom, _ := fr.ROM(fakeromm.ROMAlphaQuest)
	f := rom.Files[0]
	g, err := r.lib.AddGame("nes", f.FileName, rom.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, g.Path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, f.Bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	r.srv.Invalidate()
	return &libraryRig{rig: r, romm: fr}
}

func TestLibrarySearchMarksOnCabinet(t *testing.T) {
	r := newLibraryRig(t, nil)
	var res librarySearchResult
	r.ok("library_search", map[string]any{"query": "alpha"}, &res)
	if len(res.Hits) == 0 {
		t.Fatalf("no hit for alpha: %+v", res)
	}
	h := res.Hits[0]
	if h.ROMID == nil || *h.ROMID != fakeromm.ROMAlphaQuest || h.OnCabinet == nil || h.OnCabinet.System != "nes" || h.OnCabinet.GameID == "" {
		t.Fatalf("Alpha Quest: %+v (on_cabinet %+v), want it on the cabinet in nes", h, h.OnCabinet)
	}
	if h.BatoceraSystem == nil || *h.BatoceraSystem != "nes" || h.Source != "romm" {
		t.Errorf("hit %+v", h)
	}
	// on_cabinet=no leaves it out; the count is RomM's.
	var no librarySearchResult
	r.ok("library_search", map[string]any{"query": "alpha", "on_cabinet": "no"}, &no)
	for _, h := range no.Hits {
		if h.OnCabinet != nil {
			t.Errorf("on_cabinet=no kept %s", h.Name)
		}
	}
	if no.Total != res.Total {
		t.Errorf("total %d with the filter, %d without: want RomM's count both times", no.Total, res.Total)
	}
}

func TestLibrarySearchPlatformArgument(t *testing.T) {
	r := newLibraryRig(t, nil)
	// megadrive is a Batocera folder; RomM calls the platform genesis.
	var res librarySearchResult
	r.ok("library_search", map[string]any{"query": "delta", "platform": "megadrive"}, &res)
	if res.MatchedPlatform == nil || !strings.Contains(*res.MatchedPlatform, "megadrive") || len(res.Hits) != 1 || res.Hits[0].Platform != "genesis" {
		t.Fatalf("platform=megadrive: %+v", res)
	}
	r.ok("library_search", map[string]any{"query": "delta", "platform": "genesis"}, &res)
	if res.MatchedPlatform == nil || !strings.Contains(*res.MatchedPlatform, "RomM platform genesis") {
		t.Errorf("platform=genesis matched %v", res.MatchedPlatform)
	}
	if msg := r.refused("library_search", map[string]any{"query": "x", "platform": "amiga9000"}); !strings.Contains(msg, "no platform") {
		t.Errorf("unknown platform: %q", msg)
	}
}

func TestLibraryStatusAndPlatforms(t *testing.T) {
	r := newLibraryRig(t, nil)
	var st libraryStatusResult
	r.ok("library_status", nil, &st)
	if st.RomM == nil || !st.RomM.Reachable || st.RomM.Version != "5.3.1" || st.ROMarr != nil {
		t.Fatalf("status %+v", st)
	}
	if !strings.Contains(strings.Join(st.RomM.ScopesOK, ","), "roms.read") {
		t.Errorf("scopes %v, want roms.read among them", st.RomM.ScopesOK)
	}
	// The fixture's ES has no psx, gb, sfam or ios system.
	for _, want := range []string{"ios", "psx"} {
		if !strings.Contains(strings.Join(st.RomM.UnmappedPlatforms, ","), want) {
			t.Errorf("unmapped %v, want %s", st.RomM.UnmappedPlatforms, want)
		}
	}
	var pl platformsResult
	r.ok("romm_list_platforms", nil, &pl)
	got := map[string]string{}
	for _, p := range pl.Platforms {
		got[p.Slug+"/"+p.Name] = p.BatoceraSystem
	}
	if got["genesis/Sega Mega Drive/Genesis"] != "megadrive" || got["ios/iOS"] != "unmapped" {
		t.Errorf("platforms %v", got)
	}
}

func TestRommGetROMAndCollections(t *testing.T) {
	r := newLibraryRig(t, nil)
	var res getROMResult
	r.ok("romm_get_rom", map[string]any{"rom_id": fakeromm.ROMDeltaForce, "include": []any{"files", "metadata"}}, &res)
	if len(res.ROM.Files) == 0 || len(res.ROM.Files[0].ArchiveMembers) == 0 || res.ROM.Files[0].SHA1 == "" {
		t.Errorf("Delta Force's files: %+v", res.ROM.Files)
	}
	if msg := r.refused("romm_get_rom", map[string]any{"rom_id": 99999}); !strings.Contains(msg, "no such") {
		t.Errorf("unknown rom: %q", msg)
	}
	var cols collectionsResult
	r.ok("romm_list_collections", nil, &cols)
	if len(cols.Collections) == 0 {
		t.Fatal("no collections")
	}
	var col getCollectionResult
	c := cols.Collections[0]
	r.ok("romm_get_collection", map[string]any{"id": c.ID, "kind": c.Kind}, &col)
	if col.Collection.Name != c.Name || len(col.Hits) == 0 {
		t.Errorf("collection %s: %+v", c.Name, col)
	}
}

func TestRommAPITools(t *testing.T) {
	r := newLibraryRig(t, nil)
	var list apiListResult
	r.ok("romm_api_list", map[string]any{"query": "users"}, &list)
	for _, o := range list.Operations {
		if o.Allowed {
			t.Errorf("a users operation is allowed: %+v", o)
		}
	}
	var pl platformsResult
	r.ok("romm_list_platforms", nil, &pl)
	var read apiReadResult
	r.ok("romm_api_read", map[string]any{"operation_id": "get_platforms_api_platforms_get", "pointer": "/0/slug"}, &read)
	if read.Status != 200 || string(read.Body) != `"`+pl.Platforms[0].Slug+`"` {
		t.Errorf("read: %d %s, want RomM's first platform %s", read.Status, read.Body, pl.Platforms[0].Slug)
	}
	// A page of an array, with the next offset.
	r.ok("romm_api_read", map[string]any{"operation_id": "get_platforms_api_platforms_get", "limit": 2}, &read)
	if read.NextOffset == nil || *read.NextOffset != 2 || read.Total != len(pl.Platforms) {
		t.Errorf("paged read: next %v total %d, want 2 and %d", read.NextOffset, read.Total, len(pl.Platforms))
	}
	if msg := r.refused("romm_api_read", map[string]any{"operation_id": "get_users_api_users_get"}); msg == "" {
		t.Error("a users read was not refused")
	}
}

func TestLibraryToolsRegisteredOnlyWhenConfigured(t *testing.T) {
	r := newRig(t, rigConfig{})
	for _, name := range r.srv.ToolNames() {
		if strings.HasPrefix(name, "library_") || strings.HasPrefix(name, "romm_") || strings.HasPrefix(name, "romarr_") {
			t.Errorf("%s registered without a library server", name)
		}
	}
}
