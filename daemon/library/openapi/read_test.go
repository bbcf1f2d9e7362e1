package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// failGetter fails the test if Read reaches the network.
func failGetter(t *testing.T) Getter {
	return func(context.Context, string, url.Values) (int, []byte, error) {
		t.Helper()
		t.Fatal("the getter was called for a request that should have been refused")
		return 0, nil, nil
	}
}

// recorder answers with a fixed body and remembers what it was asked.
type recorder struct {
	status int
	body   string
	err    error
	path   string
	query  url.Values
	calls  int
}

func (r *recorder) get(_ context.Context, path string, query url.Values) (int, []byte, error) {
	r.calls++
	r.path, r.query = path, query
	status := r.status
	if status == 0 {
		status = 200
	}
	body := r.body
	if body == "" {
		body = "{}"
	}
	return status, []byte(body), r.err
}

var (
	index531Once sync.Once
	index531     *Index
)

// ix531 parses the 5.3.1 fixture once per test binary: every Read test uses it.
func ix531(t testing.TB) *Index {
	t.Helper()
	index531Once.Do(func() { index531 = parseDoc(t, readDoc(t, "romm-openapi-5.3.1.json")) })
	return index531
}

func TestReadBuildsRequest(t *testing.T) {
	ix := ix531(t)
	cheap := "with_char_index=false&with_filter_values=false&with_rom_id_index=false"
	tests := []struct {
		name      string
		req       ReadRequest
		wantPath  string
		wantQuery string
	}{
		{"integer path", ReadRequest{OperationID: "get_rom_api_roms__id__get", Path: map[string]string{"id": "42"}}, "/api/roms/42", ""},
		{"integer canonical", ReadRequest{OperationID: "get_rom_api_roms__id__get", Path: map[string]string{"id": "007"}}, "/api/roms/7", ""},
		{"two path params", ReadRequest{OperationID: "get_rom_file_progress_api_roms__rom_id__files__file_id__progress_get", Path: map[string]string{"rom_id": "3", "file_id": "9"}}, "/api/roms/3/files/9/progress", ""},
		{"string path escaped", ReadRequest{OperationID: "get_virtual_collection_api_collections_virtual__id__get", Path: map[string]string{"id": "recent plays?x=1#y"}}, "/api/collections/virtual/recent%20plays%3Fx=1%23y", ""},
		{"string path percent", ReadRequest{OperationID: "get_virtual_collection_api_collections_virtual__id__get", Path: map[string]string{"id": "100%"}}, "/api/collections/virtual/100%25", ""},
		{"no params", ReadRequest{OperationID: "heartbeat_api_heartbeat_get"}, "/api/heartbeat", ""},
		{"cheap defaults", ReadRequest{OperationID: "get_roms_api_roms_get"}, "/api/roms", cheap},
		{"array repeated", ReadRequest{OperationID: "get_roms_api_roms_get", Query: map[string][]string{"platform_ids": {"1", "2"}, "search_term": {"mario kart"}}}, "/api/roms", "platform_ids=1&platform_ids=2&search_term=mario+kart&" + cheap},
		{"default overridden", ReadRequest{OperationID: "get_roms_api_roms_get", Query: map[string][]string{"with_rom_id_index": {"TRUE"}}}, "/api/roms", "with_char_index=false&with_filter_values=false&with_rom_id_index=true"},
		{"date-time", ReadRequest{OperationID: "get_platforms_api_platforms_get", Query: map[string][]string{"updated_after": {"2024-05-01T10:00:00+02:00"}}}, "/api/platforms", "updated_after=2024-05-01T10%3A00%3A00%2B02%3A00"},
		{"required query", ReadRequest{OperationID: "get_virtual_collections_api_collections_virtual_get", Query: map[string][]string{"type": {"genre"}, "limit": {"5"}}}, "/api/collections/virtual", "limit=5&type=genre"},
		{"bounded integer", ReadRequest{OperationID: "get_similar_roms_api_roms__id__similar_get", Path: map[string]string{"id": "1"}, Query: map[string][]string{"limit": {"50"}}}, "/api/roms/1/similar", "limit=50"},
		{"boolean", ReadRequest{OperationID: "stats_api_stats_get", Query: map[string][]string{"include_platform_stats": {"true"}}}, "/api/stats", "include_platform_stats=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			if _, err := ix.Read(t.Context(), rec.get, tt.req); err != nil {
				t.Fatalf("Read: %v", err)
			}
			if rec.path != tt.wantPath {
				t.Errorf("path = %q, want %q", rec.path, tt.wantPath)
			}
			if got := rec.query.Encode(); got != tt.wantQuery {
				t.Errorf("query = %q, want %q", got, tt.wantQuery)
			}
		})
	}
}

func TestReadRefusesArguments(t *testing.T) {
	ix := ix531(t)
	rom := func(id string) ReadRequest {
		return ReadRequest{OperationID: "get_rom_api_roms__id__get", Path: map[string]string{"id": id}}
	}
	virtual := func(id string) ReadRequest {
		return ReadRequest{OperationID: "get_virtual_collection_api_collections_virtual__id__get", Path: map[string]string{"id": id}}
	}
	roms := func(q map[string][]string) ReadRequest {
		return ReadRequest{OperationID: "get_roms_api_roms_get", Query: q}
	}
	tests := []struct {
		name string
		req  ReadRequest
		want string
	}{
		{"unknown operation", ReadRequest{OperationID: "nope"}, "unknown operation_id"},
		{"refused operation", ReadRequest{OperationID: "get_users_api_users_get"}, "refused: tag users exposes other household members' data"},
		{"refused content", ReadRequest{OperationID: "get_rom_content_api_roms__id__content__file_name__get", Path: map[string]string{"id": "1", "file_name": "x"}}, "content route"},
		{"not an integer", rom("abc"), `"abc" must be an integer ≥ 1`},
		{"below minimum", rom("0"), "must be an integer ≥ 1"},
		{"plus sign", rom("+1"), "must be an integer"},
		{"hex", rom("0x10"), "must be an integer"},
		{"slash", rom("1/2"), "slash"},
		{"backslash", virtual(`a\b`), "slash"},
		{"dot dot", virtual(".."), "dot segment"},
		{"dots inside", virtual("a..b"), "dot segment"},
		{"empty", virtual(""), "empty"},
		{"control", virtual("a\x00b"), "control"},
		{"bidi", virtual("a\u202eb"), "invisible"},
		{"bad utf8", virtual("a\xffb"), "UTF-8"},
		{"too long", virtual(strings.Repeat("a", 300)), "longer than"},
		{"missing path", ReadRequest{OperationID: "get_rom_api_roms__id__get"}, "missing path parameter id"},
		{"unknown path", ReadRequest{OperationID: "get_rom_api_roms__id__get", Path: map[string]string{"id": "1", "x": "2"}}, `path parameter "x" is not part of /api/roms/{id}; it takes: id`},
		{"unknown query", roms(map[string][]string{"sql": {"1"}}), `unknown query parameter "sql" for get_roms_api_roms_get; it takes: age_ratings,`},
		{"query for no-query op", ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Query: map[string][]string{"a": {"1"}}}, "it takes: none"},
		{"scalar repeated", roms(map[string][]string{"search_term": {"a", "b"}}), "takes one value, not 2"},
		{"no value", roms(map[string][]string{"search_term": {}}), "has no value"},
		{"array item type", roms(map[string][]string{"platform_ids": {"1", "two"}}), `"two" must be an integer`},
		{"bad date-time", ReadRequest{OperationID: "get_platforms_api_platforms_get", Query: map[string][]string{"updated_after": {"yesterday"}}}, "RFC 3339"},
		{"bad boolean", ReadRequest{OperationID: "stats_api_stats_get", Query: map[string][]string{"include_platform_stats": {"yes"}}}, "true or false"},
		{"above maximum", ReadRequest{OperationID: "get_similar_roms_api_roms__id__similar_get", Path: map[string]string{"id": "1"}, Query: map[string][]string{"limit": {"51"}}}, "≤ 50"},
		{"missing required query", ReadRequest{OperationID: "get_virtual_collections_api_collections_virtual_get"}, "missing required query parameter(s) of get_virtual_collections_api_collections_virtual_get: type"},
		{"refused parameter", ReadRequest{OperationID: "get_recommendations_api_recommendations_get", Query: map[string][]string{"refresh": {"true"}}}, "refresh is refused"},
		{"query control", roms(map[string][]string{"search_term": {"a\nb"}}), "control"},
		{"bad pointer", ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Pointer: "items"}, `start with "/"`},
		{"limit too big", ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Limit: 101}, "use 1 to 100"},
		{"negative offset", ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Offset: -1}, "use 0 to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ix.Read(t.Context(), failGetter(t), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestReadAnswers(t *testing.T) {
	ix := ix531(t)
	heartbeat := ReadRequest{OperationID: "heartbeat_api_heartbeat_get"}
	t.Run("getter error wrapped", func(t *testing.T) {
		cause := errors.New("dial tcp: refused")
		_, err := ix.Read(t.Context(), (&recorder{err: cause}).get, heartbeat)
		if !errors.Is(err, cause) || !strings.Contains(err.Error(), "heartbeat_api_heartbeat_get") {
			t.Fatalf("err = %v, want the cause wrapped with the operation", err)
		}
	})
	t.Run("error status keeps the server's detail", func(t *testing.T) {
		res, err := ix.Read(t.Context(), (&recorder{status: 403, body: `{"detail":"Forbidden\u202e"}`}).get, ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Pointer: "/items"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != 403 || string(res.Body) != `{"detail":"Forbidden"}` {
			t.Fatalf("got %d %s, want 403 with the cleaned detail", res.Status, res.Body)
		}
	})
	t.Run("error status with text", func(t *testing.T) {
		res, err := ix.Read(t.Context(), (&recorder{status: 502, body: "<html>Bad\x1b[31m Gateway</html>"}).get, heartbeat)
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Body) != `"<html>Bad[31m Gateway</html>"` {
			t.Fatalf("body = %s", res.Body)
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		_, err := ix.Read(t.Context(), (&recorder{body: "PK\x03\x04zip"}).get, heartbeat)
		if err == nil || !strings.Contains(err.Error(), "not JSON") {
			t.Fatalf("err = %v, want not JSON", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		big := func(context.Context, string, url.Values) (int, []byte, error) {
			return 200, make([]byte, MaxResponseBytes+1), nil
		}
		if _, err := ix.Read(t.Context(), big, heartbeat); err == nil || !strings.Contains(err.Error(), "narrow it") {
			t.Fatalf("err = %v, want too large", err)
		}
	})
	t.Run("selected and cleaned", func(t *testing.T) {
		rec := &recorder{body: `{"SYSTEM":{"VERSION":"5.3.1\u200b","a\u202eb":["x\u0007y"]}}`}
		res, err := ix.Read(t.Context(), rec.get, ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Pointer: "/SYSTEM"})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"VERSION":"5.3.1","ab":["xy"]}`; string(res.Body) != want {
			t.Fatalf("body = %s, want %s", res.Body, want)
		}
		// The cleaned key the model saw selects the raw one.
		res, err = ix.Read(t.Context(), rec.get, ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Pointer: "/SYSTEM/ab/0"})
		if err != nil || string(res.Body) != `"xy"` {
			t.Fatalf("got %s, %v; want \"xy\"", res.Body, err)
		}
	})
	t.Run("community data removed", func(t *testing.T) {
		rec := &recorder{body: `{"id":7,"name":"Galaga","user_saves":[{"id":1}],"all_user_saves":[{"username":"sister"}],` +
			`"all_user_notes":[{"username":"dad","content":"secret"}],"files":[{"all_user_states":[1]}]}`}
		req := ReadRequest{OperationID: "get_rom_api_roms__id__get", Path: map[string]string{"id": "7"}}
		res, err := ix.Read(t.Context(), rec.get, req)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"files":[{}],"id":7,"name":"Galaga","user_saves":[{"id":1}]}`; string(res.Body) != want {
			t.Fatalf("body = %s, want %s", res.Body, want)
		}
		req.Pointer = "/all_user_saves/0"
		if _, err := ix.Read(t.Context(), rec.get, req); err == nil || !strings.Contains(err.Error(), "other household members' data") {
			t.Fatalf("pointer into removed data: err = %v", err)
		}
	})
	t.Run("missing pointer", func(t *testing.T) {
		rec := &recorder{body: `{"items":[1,2,3],"total":3}`}
		_, err := ix.Read(t.Context(), rec.get, ReadRequest{OperationID: "heartbeat_api_heartbeat_get", Pointer: "/itemz"})
		if err == nil || !strings.Contains(err.Error(), `no key "itemz" at the top; keys there: items, total`) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestReadJSONShape(t *testing.T) {
	// The result marshals to the contract of design/mcp-tools.md: status, body, next_offset, truncated.
	b, err := json.Marshal(ReadResult{Status: 200, Body: json.RawMessage(`[]`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"status":200,"body":[],"next_offset":null,"truncated":false}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
