package openapi

import (
	"strings"
	"testing"
)

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"empty", ``, "not JSON"},
		{"array", `[]`, "not a JSON object"},
		{"swagger 2", `{"swagger":"2.0","paths":{}}`, "not an OpenAPI 3 document"},
		{"no paths", `{"openapi":"3.1.0"}`, `no "paths" object`},
		{"trailing data", `{"openapi":"3.1.0","paths":{}} {}`, "data after the first value"},
		{"trailing garbage", `{"openapi":"3.1.0","paths":{}} x`, "data after the first value"},
		{"too large", `{"openapi":"3.1.0","paths":{},"x":"` + strings.Repeat("a", MaxDocumentBytes) + `"}`, "more than the"},
		{"too many values", `{"openapi":"3.1.0","paths":{},"x":[` + strings.Repeat("{},", 2<<20) + `{}]}`, "the document has a list of more than 10000 items (at $.x), far more than RomM's; check the server's /openapi.json"},
		{"too deep", `{"openapi":"3.1.0","paths":{},"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, "nested more than 32 deep"},
		{"not JSON and too many", `{"openapi":"3.1.0","paths":{},"x":[` + strings.Repeat("{},", 2<<20), "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestParseSkips checks that operations which could not be named or built safely are left out
// rather than shown or run.
func TestParseSkips(t *testing.T) {
	ok := `{"operationId":"%s","tags":["roms"],"responses":{"200":{"content":{"application/json":{"schema":{"type":"object"}}}}}}`
	op := func(id string) string { return strings.Replace(ok, "%s", id, 1) }
	doc := `{"openapi":"3.0.3","paths":{
		"/api/roms":{"get":` + op("good") + `},
		"/api/a/../users":{"get":` + op("dotdot") + `},
		"/api/x{id}":{"get":` + op("partial_param") + `},
		"/api/{id}/{id}":{"get":` + op("dup_param") + `},
		"/api/sp ace":{"get":` + op("space") + `},
		"api/rel":{"get":` + op("relative") + `},
		"/api/b":{"get":` + op("bad\u202eid") + `},
		"/api/c":{"get":{"tags":["roms"]}},
		"/api/d":{"get":"not an object"}}}`
	ix, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 1 || ix.byID["good"] == nil {
		var ids []string
		for _, o := range ix.ops {
			ids = append(ids, o.ID+" "+o.Path)
		}
		t.Fatalf("kept %q, want only good", ids)
	}
}

func TestSearch(t *testing.T) {
	ix := ix531(t)
	tests := []struct {
		query     string
		limit     int
		wantFirst string
		wantAll   func(Operation) bool
		wantN     int // exact count, or -1
	}{
		{"", 0, "", func(Operation) bool { return true }, 50},
		{"", 1000, "", func(Operation) bool { return true }, 200},
		{"PLATFORMS", 100, "get_platforms_api_platforms_get", func(o Operation) bool {
			return strings.Contains(strings.ToLower(o.ID+o.Path+o.Summary+strings.Join(o.Tags, " ")), "platforms")
		}, -1},
		{"users get", 100, "", func(o Operation) bool { return !o.Allowed && o.Reason != "" }, -1},
		{"roms identifiers", 5, "get_rom_identifiers_api_roms_identifiers_get", nil, -1},
		{"no-such-thing", 10, "", nil, 0},
	}
	for _, tt := range tests {
		got := ix.Search(tt.query, tt.limit)
		if tt.wantN >= 0 && len(got) != tt.wantN {
			t.Errorf("Search(%q, %d) returned %d, want %d", tt.query, tt.limit, len(got), tt.wantN)
		}
		if tt.wantFirst != "" && (len(got) == 0 || got[0].ID != tt.wantFirst) {
			t.Errorf("Search(%q) first = %v, want %s", tt.query, got, tt.wantFirst)
		}
		seenRefused := false
		for _, o := range got {
			if tt.wantAll != nil && !tt.wantAll(o) {
				t.Errorf("Search(%q) returned %+v", tt.query, o)
			}
			if !o.Allowed {
				seenRefused = true
			} else if seenRefused {
				t.Errorf("Search(%q): allowed %s after a refused operation", tt.query, o.ID)
			}
		}
	}
	// Results are copies: changing one does not change the index.
	got := ix.Search("heartbeat_api_heartbeat_get", 1)
	got[0].Tags[0] = "changed"
	if ix.Search("heartbeat_api_heartbeat_get", 1)[0].Tags[0] != "system" {
		t.Fatal("Search exposes the index's tag slice")
	}
}
