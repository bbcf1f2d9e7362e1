package fakeromm

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/prism"
)

// limitedToken reaches a twin of the fake whose token holds no scope, so
// that 403s pass through the same proxy.
const limitedToken = "rmm_limited"

func referenceDoc(t *testing.T, name string) string {
	t.Helper()
	root, err := binarytest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "..", "shared", "reference", name)
	if _, err := os.Stat(p); err != nil {
		peertest.RequirePeer(t, fmt.Errorf("RomM's OpenAPI document %s is not beside the checkout: %w", name, err))
	}
	return p
}

// upstream serves the full fake, and the scope-less twin for limitedToken.
func upstream(t *testing.T, version string) (*Server, string) {
	t.Helper()
	full, err := New(Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	limited, err := New(Options{Version: version, Token: limitedToken, Scopes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+limitedToken {
			limited.ServeHTTP(w, r)
			return
		}
		full.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return full, ts.URL
}

type probe struct {
	path  string
	token string // "full", "limited", "bad", or "" for none
	want  int
}

// check sends every probe through the proxy and fails on any status other
// than the expected one and on any violation Prism reports.
func check(t *testing.T, base string, s *Server, probes []probe) {
	t.Helper()
	for _, p := range probes {
		token := map[string]string{"full": s.Token(), "limited": limitedToken, "bad": "rmm_not_a_token", "": ""}[p.token]
		code, hdr, body := get(t, base, p.path, token)
		if v := prism.Violations(hdr); len(v) > 0 {
			t.Errorf("%s (token %q): %d, Prism reports:\n  %s", p.path, p.token, code, strings.Join(v, "\n  "))
			continue
		}
		if code != p.want {
			t.Errorf("%s (token %q): %d, want %d: %.300s", p.path, p.token, code, p.want, body)
		}
	}
}

// TestPrismConformance runs the fake behind `prism proxy --errors` on
// RomM's own 5.3.1 document and drives every JSON route through it: a
// response that breaks the document comes back as Prism's 500 with an
// sl-violations header, and a status the document does not list as a
// warning in that header; both fail the test.
func TestPrismConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism twice (about 5 s each): not in -short")
	}
	t.Parallel()
	doc := prism.PatchedDoc(t, referenceDoc(t, "romm-openapi-5.3.1.json"), Version531)
	s, up := upstream(t, Version531)
	alpha, _ := s.ROM(ROMAlphaQuest)
	echo, _ := s.ROM(ROMEchoChamber)
	vid := url.QueryEscape(virtualID("Racing", "genre"))

	began := time.Now()
	proxy := prism.Proxy(t, doc, up)
	t.Logf("prism proxy up in %s", time.Since(began).Round(time.Millisecond))
	probes := []probe{
		{"/api/heartbeat", "", 200},
		{"/api/stats", "", 200},
		{"/api/stats?include_platform_stats=true", "", 200},
		{"/api/platforms", "full", 200},
		{"/api/platforms/1", "full", 200},
		{fmt.Sprintf("/api/platforms/%d", PlatformSuperFamicom), "full", 200},
		{"/api/platforms/999", "full", 404},
		{"/api/roms", "full", 200},
		{"/api/roms?limit=3&offset=2&with_files=true", "full", 200},
		{"/api/roms?search_term=alpha%7Cbeta&order_by=id&order_dir=desc", "full", 200},
		{"/api/roms?search_term=" + alpha.SHA1, "full", 200},
		{"/api/roms?platform_ids=1&platform_ids=2&missing=false", "full", 200},
		{"/api/roms?missing=true&with_char_index=false&with_filter_values=false", "full", 200},
		{"/api/roms?with_total=false&with_rom_id_index=false", "full", 200},
		{"/api/roms?collection_id=2&with_files=true", "full", 200},
		{"/api/roms?smart_collection_id=1", "full", 200},
		{"/api/roms?virtual_collection_id=" + vid, "full", 200},
		// Two values: Prism 5.14.2 refuses a single value of an anyOf
		// [array, null] parameter ("must be array"), which FastAPI accepts.
		{"/api/roms?genres=Racing&genres=Puzzle&genres_logic=any&limit=10000", "full", 200},
		{"/api/roms/by-hash?sha1_hash=" + echo.Files[0].SHA1, "full", 200},
		{"/api/roms/by-hash?crc_hash=00000000", "full", 404},
		{"/api/roms/by-hash", "full", 400},
		{"/api/roms/999", "full", 404},
		{"/api/roms/999/simple", "full", 404},
		{"/api/collections", "full", 200},
		{"/api/collections/1", "full", 200},
		{"/api/collections/999", "full", 404},
		{"/api/collections/smart", "full", 200},
		{"/api/collections/smart/1", "full", 200},
		{"/api/collections/smart/999", "full", 404},
		{"/api/collections/virtual?type=genre", "full", 200},
		{"/api/collections/virtual?type=all&limit=2", "full", 200},
		{"/api/collections/virtual/" + virtualID("Racing", "genre"), "full", 200},
		{"/api/collections/virtual/bm90LWFuLWlk", "full", 404},
		{"/api/firmware", "full", 200},
		{fmt.Sprintf("/api/firmware?platform_id=%d", PlatformPSX), "full", 200},
		{"/api/firmware/1", "full", 200},
		{"/api/firmware/99", "full", 404},
		// Not probed: GET /assets/romm/resources/... (the covers that path_cover_large and
		// path_cover_small name) is nginx's static files in front of RomM, not a route of RomM's
		// API, so RomM's document has nothing to hold it to; TestCovers checks it.
		// A token RomM does not know: 401 Not authenticated.
		{"/api/platforms", "bad", 401},
		{"/api/roms?limit=1", "bad", 401},
		{"/api/roms/1", "bad", 401},
		{"/api/collections", "bad", 401},
		// A token without the scope: 403 Forbidden.
		{"/api/platforms", "limited", 403},
		{"/api/roms", "limited", 403},
		{"/api/roms/1/simple", "limited", 403},
		{"/api/collections/smart", "limited", 403},
		{"/api/firmware", "limited", 403},
	}
	for id := 1; id <= fixtureROMs; id++ {
		probes = append(probes, probe{fmt.Sprintf("/api/roms/%d", id), "full", 200},
			probe{fmt.Sprintf("/api/roms/%d/simple", id), "full", 200})
	}
	check(t, proxy, s, probes)

	// Prism answers an invalid request itself, so the fake's own 422s go
	// through a proxy that forwards every request.
	forward := prism.ProxyResponses(t, doc, up)
	check(t, forward, s, []probe{
		{"/api/roms?limit=0", "full", 422},
		{"/api/roms?limit=10001&offset=-1", "full", 422},
		{"/api/roms?limit=ten", "bad", 422},
		{"/api/roms?missing=maybe", "full", 422},
		{"/api/platforms/abc", "full", 422},
		{"/api/roms/abc", "full", 422},
		{"/api/collections/virtual", "full", 422},
		{"/api/roms", "bad", 401},
	})
}

// TestPrismConformance510 holds RomM 5.1.0 to its own document.
func TestPrismConformance510(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism (about 5 s): not in -short")
	}
	t.Parallel()
	doc := prism.PatchedDoc(t, referenceDoc(t, "romm-openapi-5.1.0.json"), Version510)
	s, up := upstream(t, Version510)
	proxy := prism.Proxy(t, doc, up)
	check(t, proxy, s, []probe{
		{"/api/heartbeat", "", 200},
		{"/api/platforms", "full", 200},
		{"/api/roms?with_rom_id_index=false", "full", 200},
		{"/api/roms?with_files=true&limit=20", "full", 200},
		{"/api/roms/4", "full", 200},
		{"/api/roms/5/simple", "full", 200},
		{"/api/collections", "full", 200},
		{"/api/collections/smart", "full", 200},
		{"/api/collections/virtual?type=all", "full", 200},
		{"/api/firmware", "full", 200},
		{"/api/roms", "bad", 403}, // before 5.2 no credentials is a 403
		{"/api/roms", "limited", 403},
	})
}
