package openapi

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"openapi":"3.1.0","paths":{}}`))
	f.Add(docVersion("5.3.1"))
	f.Add([]byte(`{"openapi":"3.0.0","info":{"version":"x\u202e"},"paths":{"/api/roms/{id}":{"parameters":[{"$ref":"#/components/parameters/P"}],"get":{"operationId":"get_rom_api_roms__id__get","tags":["roms"],"summary":"\u0007s","parameters":[{"name":"id","in":"path","schema":{"anyOf":[{"type":"integer","minimum":1},{"type":"null"}]}}],"responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}}},"components":{"parameters":{"P":{"$ref":"#/components/parameters/P"}},"schemas":{"A":{"properties":{"a":{"$ref":"#/components/schemas/A"},"all_user_saves":{}},"required":["all_user_saves"]}}}}`))
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/api/x":{"get":{"operationId":"x","responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/~2"}}}}}}}}}`))
	reviewed, err := reviewedOperations()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		ix, err := Parse(doc)
		if err != nil {
			return
		}
		if ix.Version() != untrusted.Clean(ix.Version(), 64) {
			t.Fatalf("version %q is not clean", ix.Version())
		}
		for _, op := range ix.Search("", 200) {
			if !validID(op.ID) {
				t.Fatalf("invalid id %q kept", op.ID)
			}
			if _, ok := parseTemplate(op.Path); !ok {
				t.Fatalf("invalid path %q kept", op.Path)
			}
			if op.Summary != untrusted.Clean(op.Summary, 200) {
				t.Fatalf("summary %q is not clean", op.Summary)
			}
			if r, ok := reviewed[op.ID]; op.Allowed && (!ok || r.path != op.Path || op.Method != "GET") {
				t.Fatalf("%s %s %s allowed outside the reviewed list", op.Method, op.Path, op.ID)
			}
			d, err := ix.Describe(op.ID)
			if err != nil {
				t.Fatalf("Describe(%s): %v", op.ID, err)
			}
			if !json.Valid(d.Response) || len(d.Response) > 2*maxSchemaBytes {
				t.Fatalf("Describe(%s): %d bytes, valid %v", op.ID, len(d.Response), json.Valid(d.Response))
			}
			checkClean(t, d.Response, false)
		}
	})
}

func FuzzPointer(f *testing.F) {
	for _, s := range []string{"", "/", "/items/0/name", "/a~1b/c~0d", "/~", "/~2", "x", "/items/01", "/items/-", "//"} {
		f.Add(s)
	}
	doc, _ := decodeJSON([]byte(`{"items":[{"name":"a"},{"name":"b"}],"a/b":{"c~d":[1,2]},"":{"":""}}`))
	f.Fuzz(func(t *testing.T, p string) {
		tokens, err := parsePointer(p)
		if err != nil {
			return
		}
		if back := formatPointer(tokens); back != p {
			t.Fatalf("formatPointer(parsePointer(%q)) = %q", p, back)
		}
		if _, err := selectPointer(doc, tokens); err != nil && !strings.HasPrefix(err.Error(), "pointer ") {
			t.Fatalf("error %q does not name the pointer", err)
		}
	})
}

// FuzzReadArgs drives Read's argument validation against the 5.3.1 index: whatever the caller
// sends, a request that reaches the getter is the operation's template with each parameter
// replaced by one escaped segment, and carries only declared query parameters.
func FuzzReadArgs(f *testing.F) {
	f.Add("get_rom_api_roms__id__get", "id", "42", "", "", "", "", 0, 0)
	f.Add("get_virtual_collection_api_collections_virtual__id__get", "id", "a/../b", "", "", "", "/x", 0, 0)
	f.Add("get_roms_api_roms_get", "", "", "platform_ids", "1", "2", "/items", 3, 5)
	f.Add("get_roms_api_roms_get", "", "", "search_term", "%2e%2e\u202e", "", "", 0, 101)
	f.Add("get_users_api_users_get", "", "", "", "", "", "", 0, 0)
	f.Add("get_rom_file_progress_api_roms__rom_id__files__file_id__progress_get", "rom_id", "1", "file_id", "2", "", "", -1, 0)
	ix := ix531(f)
	f.Fuzz(func(t *testing.T, id, pName, pValue, qName, q1, q2, pointer string, offset, limit int) {
		o := ix.byID[id]
		req := ReadRequest{OperationID: id, Pointer: pointer, Offset: offset, Limit: limit,
			Path: map[string]string{pName: pValue}, Query: map[string][]string{}}
		if o != nil && len(o.template) > 1 && o.template[1].name != "" {
			// Fill a second path parameter too so two-parameter routes are reachable.
			req.Path[o.template[1].name] = q1
		}
		if qName != "" {
			req.Query[qName] = []string{q1}
			if q2 != "" {
				req.Query[qName] = append(req.Query[qName], q2)
			}
		}
		called := false
		get := func(_ context.Context, path string, query url.Values) (int, []byte, error) {
			called = true
			checkRequest(t, o, path, query)
			return 200, []byte(`{"items":[{"name":"x\u202e"}],"total":1}`), nil
		}
		res, err := ix.Read(t.Context(), get, req)
		if err != nil {
			return
		}
		if !called || !o.Allowed {
			t.Fatalf("Read succeeded without a call to an allowed operation (%s)", id)
		}
		if !json.Valid(res.Body) || len(res.Body) > MaxBodyBytes {
			t.Fatalf("body %d bytes, valid %v", len(res.Body), json.Valid(res.Body))
		}
		checkClean(t, res.Body, true)
	})
}

func checkRequest(t *testing.T, o *operation, path string, query url.Values) {
	t.Helper()
	if o == nil || !o.Allowed {
		t.Fatalf("getter called for a refused or unknown operation")
	}
	segs := strings.Split(path, "/")
	if segs[0] != "" || len(segs) != len(o.template)+1 {
		t.Fatalf("path %q does not have the shape of %s", path, o.Path)
	}
	for i, part := range o.template {
		seg := segs[i+1]
		if part.name == "" {
			if seg != part.lit {
				t.Fatalf("path %q changes literal %q", path, part.lit)
			}
			continue
		}
		v, err := url.PathUnescape(seg)
		if err != nil || v == "" || v == "." || strings.Contains(v, "..") || strings.ContainsAny(v, "/\\") || url.PathEscape(v) != seg {
			t.Fatalf("path %q: segment %q (value %q, %v) is not one escaped, dot-free segment", path, seg, v, err)
		}
		if err := plainText(v, maxPathValueBytes); err != nil {
			t.Fatalf("path %q: value %q %v", path, v, err)
		}
	}
	for name, vals := range query {
		p, ok := o.param("query", name)
		if !ok {
			t.Fatalf("undeclared query parameter %q sent", name)
		}
		if len(vals) > 1 && !p.array {
			t.Fatalf("scalar %q sent %d times", name, len(vals))
		}
		for _, v := range vals {
			if err := plainText(v, maxQueryValueBytes); err != nil {
				t.Fatalf("query %s=%q: %v", name, v, err)
			}
		}
	}
}

// FuzzShape feeds arbitrary server bodies through selection, paging, cleaning and bounding.
func FuzzShape(f *testing.F) {
	f.Add([]byte(`{"items":[1,2,3],"total":3}`), "/items", 1, 1)
	f.Add([]byte(`{"a\u202e":"b\u0007","all_user_saves":[1]}`), "", 0, 0)
	f.Add([]byte(`[[[[[[[[["deep"]]]]]]]]]`), "/0/0", 0, 5)
	f.Add([]byte(`"`+strings.Repeat("x\u200b", 3000)+`"`), "", 0, 0)
	f.Add([]byte("\xff\xfe"), "", 0, 0)
	f.Fuzz(func(t *testing.T, body []byte, pointer string, offset, limit int) {
		if v, err := decodeJSON(body); err == nil {
			// sizeUpTo must agree with marshal, or the budget is not a bound.
			c := cleanValue(v)
			b, _ := marshal(c)
			if n := sizeUpTo(c, len(b)); n != len(b) {
				t.Fatalf("sizeUpTo = %d, marshal wrote %d bytes: %s", n, len(b), b)
			}
			if n := sizeUpTo(c, len(b)-1); n <= len(b)-1 {
				t.Fatalf("sizeUpTo under a limit of %d = %d, want more", len(b)-1, n)
			}
		}
		tokens, err := parsePointer(pointer)
		if err != nil {
			return
		}
		limit = 1 + abs(limit)%MaxLimit
		offset = abs(offset) % 1000
		res, err := shape(200, body, tokens, offset, limit)
		if err != nil {
			return
		}
		if !json.Valid(res.Body) || len(res.Body) > MaxBodyBytes {
			t.Fatalf("body %d bytes, valid %v", len(res.Body), json.Valid(res.Body))
		}
		if res.NextOffset != nil && *res.NextOffset <= offset {
			t.Fatalf("next_offset %d does not advance past %d", *res.NextOffset, offset)
		}
		checkClean(t, res.Body, true)
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // math.MinInt
			return 0
		}
		return -n
	}
	return n
}

// checkClean fails if any string or key in b would be changed by cleaning again, or (for
// response bodies) if a redacted key survived.
func checkClean(t *testing.T, b []byte, body bool) {
	t.Helper()
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if x != untrusted.CleanText(x, 0) {
				t.Fatalf("string %q is not clean", x)
			}
		case map[string]any:
			for k, e := range x {
				if k != untrusted.Clean(k, 0) || (body && redactedKeys[k]) {
					t.Fatalf("key %q is not clean or is redacted", k)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
}
