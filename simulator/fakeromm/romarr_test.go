package fakeromm

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realromarr"
)

// TestRealROMarrAsClient points the real ROMarr (a RomM client: at start
// its background refresh reads /api/platforms, three counts of /api/roms
// with and without the `missing` filter, and the whole library in pages
// of 1,000) at the fake, and holds the fake to what ROMarr expects.
func TestRealROMarrAsClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real ROMarr: not in -short")
	}
	// Over 2,000 ROMs, so ROMarr pages (LIBRARY_PAGE is 1,000).
	s, base := newServer(t, Options{Generate: Scale{ROMs: 2000, Platforms: 5}})
	var onDisk, missing page
	getJSON(t, base, "/api/roms?limit=1&missing=false", s.Token(), 200, &onDisk)
	getJSON(t, base, "/api/roms?limit=1&missing=true", s.Token(), 200, &missing)
	s.ResetRequests()

	rr := realromarr.Start(t, realromarr.Options{RommURL: base, RommToken: s.Token()})
	want := fmt.Sprintf("library refreshed: %d games across 1 library (%d on disk, %d catalogued elsewhere)",
		s.ROMCount(), *onDisk.Total, *missing.Total)
	cabinettest.Await(t, fmt.Sprintf("ROMarr to log %q", want), nil, func() (bool, string) {
		if strings.Contains(rr.Log(), "did not honour") {
			t.Fatalf("ROMarr found a filter ignored:\n%s", rr.Log())
		}
		return strings.Contains(rr.Log(), want), "log:\n" + rr.Log()
	})
	// /api/health (with the key) asks RomM's heartbeat.
	req, _ := http.NewRequest("GET", rr.URL()+"/api/health", nil)
	req.Header.Set("X-Api-Key", rr.APIKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// ROMarr may start another walk meanwhile: let what it has asked for
	// be answered before judging the answers.
	inFlight := func() bool {
		for _, r := range s.Requests() {
			if r.Status == 0 {
				return true
			}
		}
		return false
	}
	cabinettest.Await(t, "every request to the fake to be answered", nil, func() bool { return !inFlight() })

	log := rr.Log()
	for _, bad := range []string{"did not honour", "library refresh failed", "count refresh failed", "platform list unavailable", "Traceback"} {
		if strings.Contains(log, bad) {
			t.Errorf("ROMarr logged %q:\n%s", bad, log)
		}
	}
	seen := map[string]int{}
	for _, r := range s.Requests() {
		if r.Status != http.StatusOK || !r.Authorized && r.Path != "/api/heartbeat" {
			t.Errorf("ROMarr's %s %s?%s: status %d, authorized %v", r.Method, r.Path, r.Query.Encode(), r.Status, r.Authorized)
		}
		key := r.Path
		if m := r.Query.Get("missing"); m != "" {
			key += "?missing=" + m
		}
		seen[key]++
	}
	for _, k := range []string{"/api/heartbeat", "/api/platforms", "/api/roms", "/api/roms?missing=true", "/api/roms?missing=false"} {
		if seen[k] == 0 {
			t.Errorf("ROMarr never called %s (calls: %v)", k, seen)
		}
	}
	if seen["/api/roms"] < 1+3 { // the total, and three pages of the library
		t.Errorf("ROMarr read /api/roms %d times without the missing filter, want the count and 3 pages", seen["/api/roms"])
	}
	if out := rr.Outgoing(); len(out) > 0 {
		t.Errorf("ROMarr left loopback: %v", out)
	}
}
