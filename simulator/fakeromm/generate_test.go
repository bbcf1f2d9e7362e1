package fakeromm

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestGenerate50k builds the benchmark library (50,000 ROMs over 60
// platforms) and pages through it as a client would.
func TestGenerate50k(t *testing.T) {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	s, base := newServer(t, Options{Generate: Scale{ROMs: 50_000, Platforms: 60}})
	built := time.Since(began)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("built 50,000 synthetic ROMs in %s, heap +%d KB", built.Round(time.Millisecond), heap>>10)
	if heap > 16<<20 {
		t.Errorf("the synthetic library holds %d MB; it should hold an index, not ROMs", heap>>20)
	}
	want := fixtureROMs + 50_000
	if s.ROMCount() != want || len(s.Platforms()) != fixturePlatforms+60 {
		t.Fatalf("%d ROMs over %d platforms", s.ROMCount(), len(s.Platforms()))
	}

	// Every id once, in order, from the index (the whole library as JSON
	// items is 125 MB: pages are sampled instead).
	began = time.Now()
	var idx page
	getJSON(t, base, "/api/roms?limit=1&order_by=id&with_char_index=false&with_filter_values=false", s.Token(), 200, &idx)
	if len(idx.ROMIDIndex) != want || *idx.Total != want {
		t.Fatalf("rom_id_index holds %d ids, total %v, want %d", len(idx.ROMIDIndex), idx.Total, want)
	}
	for i, id := range idx.ROMIDIndex {
		if id != i+1 {
			t.Fatalf("rom_id_index[%d] = %d", i, id)
		}
	}
	var missing page
	getJSON(t, base, "/api/roms?limit=1&missing=true&with_rom_id_index=false&with_char_index=false&with_filter_values=false", s.Token(), 200, &missing)
	if *missing.Total != 1+50_000/7 {
		t.Errorf("%d ROMs missing from the filesystem, want %d", *missing.Total, 1+50_000/7)
	}
	limit, offsets := 1000, []int{0, 24_500, want - 10}
	if testing.Short() {
		limit = 50
	}
	for _, offset := range offsets {
		var p page
		getJSON(t, base, fmt.Sprintf("/api/roms?limit=%d&offset=%d&order_by=id&with_rom_id_index=false&with_char_index=false&with_filter_values=false", limit, offset), s.Token(), 200, &p)
		if n := min(limit, want-offset); len(p.Items) != n || p.Items[0].ID != offset+1 {
			t.Errorf("offset %d: %d items from id %d, want %d from %d", offset, len(p.Items), p.Items[0].ID, n, offset+1)
		}
	}
	t.Logf("index and sampled pages in %s", time.Since(began).Round(time.Millisecond))

	// Deterministic: the same id is the same ROM, bytes and hashes alike.
	a, _ := s.ROM(fixtureROMs + 1234)
	s2, _ := New(Options{Generate: Scale{ROMs: 50_000, Platforms: 60}})
	b, _ := s2.ROM(fixtureROMs + 1234)
	if a.Name != b.Name || a.Hashes != b.Hashes || a.Hashes != digests(a.Files[0].Bytes) {
		t.Errorf("synthetic ROM differs between servers: %+v / %+v", a.Hashes, b.Hashes)
	}
	if testing.Short() {
		return
	}
	// Search and hash lookup reach synthetic ROMs (a scan that hashes them all).
	var p page
	getJSON(t, base, "/api/roms?limit=5&with_rom_id_index=false&search_term="+a.SHA1, s.Token(), 200, &p)
	if len(p.Items) != 1 || p.Items[0].ID != a.ID {
		t.Errorf("sha1 search: %v", p.ids())
	}
	var counts []struct {
		ROMCount int `json:"rom_count"`
	}
	getJSON(t, base, "/api/platforms", s.Token(), 200, &counts)
	total := 0
	for _, c := range counts {
		total += c.ROMCount
	}
	if total != want {
		t.Errorf("platform rom_counts add up to %d, want %d", total, want)
	}
}
