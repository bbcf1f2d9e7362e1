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

	// Paging the whole library moves 125 MB of JSON: not in -short, which
	// reads the first and the last page.
	limit, step := 10_000, 10_000
	if testing.Short() {
		limit, step = 100, want-10
	}
	began = time.Now()
	seen := map[int]bool{}
	missing := 0
	for offset := 0; ; offset += step {
		var p page
		getJSON(t, base, fmt.Sprintf("/api/roms?limit=%d&offset=%d&order_by=id&with_char_index=false&with_filter_values=false&with_rom_id_index=false", limit, offset), s.Token(), 200, &p)
		for _, it := range p.Items {
			if seen[it.ID] {
				t.Fatalf("ROM %d twice", it.ID)
			}
			seen[it.ID] = true
			if it.MissingFromFS {
				missing++
			}
		}
		if p.Total == nil || *p.Total != want {
			t.Fatalf("total %v, want %d", p.Total, want)
		}
		if len(p.Items) < limit {
			break
		}
	}
	t.Logf("paged %d ROMs in %s", len(seen), time.Since(began).Round(time.Millisecond))
	if !testing.Short() && (len(seen) != want || missing != 1+50_000/7) {
		t.Errorf("paged %d ROMs (%d missing), want %d (%d)", len(seen), missing, want, 1+50_000/7)
	}
	if !seen[1] || !seen[want] {
		t.Errorf("the first and last ids were not served")
	}

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
