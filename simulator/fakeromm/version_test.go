package fakeromm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestVersionMatrix(t *testing.T) {
	all := fixtureROMs
	for _, tc := range []struct {
		version string
		// What the version does with a missing or wrong token.
		noTokenStatus int
		simple        bool
		// with_rom_id_index=false honoured (5.1+), with_total=false (5.2+).
		idIndexFlag, totalFlag bool
		withFilesFlag          bool
	}{
		{Version480, 403, false, false, false, false},
		{Version500, 403, true, false, false, true},
		{Version510, 403, true, true, false, true},
		{Version531, 401, true, true, true, true},
		{VersionDevelopment, 401, true, true, true, true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			s, base := newServer(t, Options{Version: tc.version})
			var hb struct {
				SYSTEM struct{ VERSION string }
			}
			getJSON(t, base, "/api/heartbeat", "", 200, &hb)
			if hb.SYSTEM.VERSION != tc.version {
				t.Errorf("heartbeat SYSTEM.VERSION %q, want %q", hb.SYSTEM.VERSION, tc.version)
			}
			var doc struct{ Info struct{ Version string } }
			getJSON(t, base, "/openapi.json", "", 200, &doc)
			if doc.Info.Version != tc.version {
				t.Errorf("openapi.json info.version %q, want %q (%s)", doc.Info.Version, tc.version, s.OpenAPISource())
			}

			for _, token := range []string{"", "rmm_wrong"} {
				code, hdr, body := get(t, base, "/api/platforms", token)
				if code != tc.noTokenStatus {
					t.Errorf("token %q: status %d, want %d", token, code, tc.noTokenStatus)
				}
				wantBody := `{"detail":"Forbidden"}`
				if code == 401 {
					wantBody = `{"detail":"Not authenticated"}`
					if hdr.Get("WWW-Authenticate") != "Bearer" {
						t.Errorf("401 without WWW-Authenticate: Bearer (%q)", hdr.Get("WWW-Authenticate"))
					}
				}
				if string(body) != wantBody {
					t.Errorf("token %q: body %s, want %s", token, body, wantBody)
				}
			}

			code, _, _ := get(t, base, fmt.Sprintf("/api/roms/%d/simple", ROMAlphaQuest), s.Token())
			if (code == 200) != tc.simple {
				t.Errorf("/simple: status %d, want it served: %v", code, tc.simple)
			}

			var p page
			getJSON(t, base, "/api/roms?with_rom_id_index=false&with_total=false", s.Token(), 200, &p)
			switch {
			case tc.totalFlag && tc.idIndexFlag:
				if p.Total != nil || len(p.ROMIDIndex) != 0 {
					t.Errorf("total %v, rom_id_index %v: want null and []", p.Total, p.ROMIDIndex)
				}
			case tc.idIndexFlag:
				if p.Total == nil || *p.Total != all || len(p.ROMIDIndex) != 0 {
					t.Errorf("total %v, rom_id_index %v: want %d and []", p.Total, p.ROMIDIndex, all)
				}
			default:
				if p.Total == nil || *p.Total != all || len(p.ROMIDIndex) != all {
					t.Errorf("total %v, rom_id_index %v: want %d and every id (the flag does not exist yet)", p.Total, p.ROMIDIndex, all)
				}
			}
			if got := len(p.Items[0].Files); (got == 0) != tc.withFilesFlag {
				t.Errorf("list items carry %d files; before with_files (4.9) they carry them, after only when asked", got)
			}

			// platform_id (singular) was replaced by platform_ids in 4.6:
			// every version here ignores it, as FastAPI ignores unknown
			// parameters, and answers the whole library.
			getJSON(t, base, fmt.Sprintf("/api/roms?platform_id=%d", PlatformGB), s.Token(), 200, &p)
			if *p.Total != all {
				t.Errorf("platform_id filtered to %d ROMs; it is not a parameter", *p.Total)
			}
			getJSON(t, base, fmt.Sprintf("/api/roms?platform_ids=%d", PlatformGB), s.Token(), 200, &p)
			if *p.Total != 1 {
				t.Errorf("platform_ids=%d: %d ROMs, want 1", PlatformGB, *p.Total)
			}
		})
	}
}

func TestScopes(t *testing.T) {
	for _, tc := range []struct {
		path, scope string
	}{
		{"/api/platforms", ScopePlatformsRead},
		{"/api/roms", ScopeRomsRead},
		{"/api/collections", ScopeCollectionsRead},
		{"/api/firmware", ScopeFirmwareRead},
	} {
		t.Run(tc.scope, func(t *testing.T) {
			var others []string
			for _, sc := range ReadScopes() {
				if sc != tc.scope {
					others = append(others, sc)
				}
			}
			s, base := newServer(t, Options{Scopes: others})
			code, hdr, body := get(t, base, tc.path, s.Token())
			if code != 403 || string(body) != `{"detail":"Forbidden"}` || hdr.Get("WWW-Authenticate") != "" {
				t.Errorf("without %s: %d %s (WWW-Authenticate %q), want 403 Forbidden", tc.scope, code, body, hdr.Get("WWW-Authenticate"))
			}
			s, base = newServer(t, Options{Scopes: []string{tc.scope}})
			if code, _, body := get(t, base, tc.path, s.Token()); code != 200 {
				t.Errorf("with only %s: %d %.200s", tc.scope, code, body)
			}
		})
	}
	// Open routes need nothing.
	_, base := newServer(t, Options{Scopes: []string{}})
	for _, p := range []string{"/api/heartbeat", "/api/stats", "/openapi.json"} {
		if code, _, _ := get(t, base, p, ""); code != 200 {
			t.Errorf("%s without a token: %d", p, code)
		}
	}
}

func TestRevokeMidSession(t *testing.T) {
	s, base := newServer(t, Options{})
	if code, _, _ := get(t, base, "/api/roms?limit=1", s.Token()); code != 200 {
		t.Fatalf("before revoke: %d", code)
	}
	s.Revoke()
	code, hdr, _ := get(t, base, "/api/roms?limit=1", s.Token())
	if code != 401 || hdr.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("after revoke: %d %q, want 401 Bearer", code, hdr.Get("WWW-Authenticate"))
	}
	s.Restore()
	if code, _, _ := get(t, base, "/api/roms?limit=1", s.Token()); code != 200 {
		t.Errorf("after restore: %d", code)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || !reqs[0].Authorized || reqs[1].Authorized || !reqs[1].Authorization || reqs[2].Query.Get("limit") != "1" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestValidationErrors(t *testing.T) {
	s, base := newServer(t, Options{})
	for _, tc := range []struct {
		path string
		want string // loc and type of the one error
	}{
		{"/api/roms?limit=0", "query.limit greater_than_equal"},
		{"/api/roms?limit=10001", "query.limit less_than_equal"},
		{"/api/roms?limit=ten", "query.limit int_parsing"},
		{"/api/roms?offset=-1", "query.offset greater_than_equal"},
		{"/api/roms?missing=maybe", "query.missing bool_parsing"},
		{"/api/roms?platform_ids=1&platform_ids=x", "query.platform_ids.1 int_parsing"},
		{"/api/roms/abc", "path.id int_parsing"},
		{"/api/roms/0/content/x.nes", "path.id greater_than_equal"},
		{"/api/platforms/abc", "path.id int_parsing"},
		{"/api/collections/virtual", "query.type missing"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			// No token: FastAPI validates before RomM's scope guard runs.
			for _, token := range []string{s.Token(), ""} {
				code, _, body := get(t, base, tc.path, token)
				var v struct{ Detail []validationError }
				if code != 422 || json.Unmarshal(body, &v) != nil || len(v.Detail) != 1 {
					t.Fatalf("token %t: %d %s, want 422 with one error", token != "", code, body)
				}
				var loc []string
				for _, l := range v.Detail[0].Loc {
					loc = append(loc, fmt.Sprint(l))
				}
				if got := strings.Join(loc, ".") + " " + v.Detail[0].Type; got != tc.want || v.Detail[0].Msg == "" {
					t.Errorf("got %q (%q), want %q", got, v.Detail[0].Msg, tc.want)
				}
			}
		})
	}
	// Accepted the way pydantic accepts them.
	for _, p := range []string{"/api/roms?limit=1", "/api/roms?limit=10000", "/api/roms?missing=YES&matched=0", "/api/roms?bogus=1&limit=2"} {
		if code, _, body := get(t, base, p, s.Token()); code != 200 {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
}

func TestNotFound(t *testing.T) {
	s, base := newServer(t, Options{})
	for _, tc := range []struct{ path, body string }{
		{"/api/roms/999", `{"detail":"Rom with id '999' not found"}`},
		{"/api/roms/999/simple", `{"detail":"Rom with id '999' not found"}`},
		{"/api/platforms/999", `{"detail":"Platform with id '999' not found"}`},
		{"/api/collections/999", `{"detail":"Collection with id '999' not found"}`},
		{"/api/collections/smart/999", `{"detail":"Collection with id '999' not found"}`},
		{"/api/roms/by-hash?crc_hash=00000000", `{"detail":"No ROM or file found with given hash values"}`},
		{"/api/nothing-here", `{"detail":"Not Found"}`},
	} {
		code, _, body := get(t, base, tc.path, s.Token())
		if code != 404 || string(body) != tc.body {
			t.Errorf("%s: %d %s, want 404 %s", tc.path, code, body, tc.body)
		}
	}
	if code, _, body := get(t, base, "/api/roms/by-hash", s.Token()); code != 400 {
		t.Errorf("by-hash without a hash: %d %s, want 400", code, body)
	}
	if code, hdr, _ := do(t, "POST", base+"/api/heartbeat", "", nil); code != 405 || hdr.Get("Allow") != "GET" {
		t.Errorf("POST heartbeat: %d (Allow %q), want 405", code, hdr.Get("Allow"))
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Version: "5.2.0"},
		{Generate: Scale{ROMs: 10}},
		{Generate: Scale{ROMs: MaxSyntheticROMs + 1, Platforms: 1}},
		{Generate: Scale{ROMs: 1, Platforms: -1}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	var zero Server // ready to use
	base := serve(t, &zero)
	if code, _, _ := get(t, base, "/api/roms", DefaultToken); code != 200 {
		t.Errorf("zero Server: %d", code)
	}
}
