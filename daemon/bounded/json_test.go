package bounded

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	small := JSONLimits{Depth: 3, ArrayLen: 3, Elements: 6, Values: 9}
	for _, c := range []struct {
		name  string
		doc   string
		lim   JSONLimits
		bound string // "" accepted
		path  string // "*": any
	}{
		{"empty input", ``, small, "", ""},
		{"only spaces", " \n\t ", small, "", ""},
		{"scalar", `42`, small, "", ""},
		{"at every limit", `{"a":[1,2,3],"b":[[4,5]]}`, small, "", ""},
		{"depth", `{"a":{"b":{"c":{}}}}`, small, "depth", "$.a.b.c"},
		{"depth in an array", `[[[[]]]]`, small, "depth", "$[0][0][0]"},
		{"depth at the limit", `[[[]]]`, small, "", ""},
		{"one array too long", `{"files":[{},{},{},{}]}`, small, "array", "$.files"},
		{"nested array too long", `[{"f":[1,2,3,4]}]`, small, "array", "$[0].f"},
		{"array too long among others", `{"a":[1],"b":[1,2,3,4]}`, JSONLimits{ArrayLen: 3}, "array", "$.b"},
		{"elements in all", `[[1,2],[3,4]]`, JSONLimits{Elements: 5}, "elements", "$[1][1]"},
		{"values in all", `{"a":1,"b":2,"c":{"d":3}}`, JSONLimits{Values: 4}, "values", "$.c.d"},
		{"members count as values", `{"a":1,"b":2,"c":3,"d":4}`, JSONLimits{Values: 4}, "values", "$.d"},
		{"top value counts", `[1,2,3]`, JSONLimits{Values: 3}, "values", "$[2]"},
		{"no limits", `[[[[[[1,2,3,4,5,6]]]]]]`, JSONLimits{}, "", ""},
		{"zero depth is the stack", strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth), JSONLimits{}, "", ""},
		{"beyond the stack", strings.Repeat("[", MaxJSONDepth+1), JSONLimits{Depth: 1 << 20}, "depth", "*"},
		{"brackets inside strings", `["[[[[","{{{{","]]",",,,,"]`, JSONLimits{Depth: 1, ArrayLen: 4}, "", ""},
		{"escaped quote inside a string", `["a\"[[[[,,,,", "b"]`, JSONLimits{Depth: 1, ArrayLen: 2}, "", ""},
		{"escaped backslash before the quote", `["a\\",1,2]`, JSONLimits{ArrayLen: 2}, "array", "$"},
		{"key with brackets", `{"[[[,":[1,2]}`, JSONLimits{Depth: 2, ArrayLen: 2}, "", ""},
		{"keys are not values", `{"a":1,"b":2}`, JSONLimits{Values: 3}, "", ""},
		{"huge number", `[1e999999999999, -0.0000000000000000000001e-99999]`, JSONLimits{Values: 3}, "", ""},
		{"literals", `[true,false,null]`, JSONLimits{ArrayLen: 2}, "array", "$"},
		{"odd key in the path", `{"a b\"c":[1,2]}`, JSONLimits{ArrayLen: 1}, "array", `$["a b??c"]`},
		{"long key cut", `{"` + strings.Repeat("k", 100) + `":[1,2]}`, JSONLimits{ArrayLen: 1}, "array", "$." + strings.Repeat("k", maxPathKey) + "..."},
		// Lists: only the arrays a typed decoder fills count as elements.
		{"other lists are not elements", `{"rom_ids":[1,2,3,4,5,6],"name":"x"}`, JSONLimits{ArrayLen: 2, Elements: 2, Lists: []string{"files"}}, "", ""},
		{"their items are values", `{"rom_ids":[1,2,3],"a":1}`, JSONLimits{Values: 4, Lists: []string{"files"}}, "values", "$.rom_ids[2]"},
		{"a listed key", `{"rom_ids":[1,2,3],"files":[{},{},{}]}`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "array", "$.files"},
		{"the top array counts", `[{"x":[1,2,3]},{},{}]`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "array", "$"},
		{"arrays in a listed array count", `{"files":[[1,2,3]]}`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "array", "$.files[0]"},
		{"listed keys at any depth", `{"a":{"b":[{"files":[1,2,3]}]}}`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "array", "$.a.b[0].files"},
		{"objects in a listed array do not pass it on", `{"files":[{"x":[1,2,3]}]}`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "", ""},
		{"elements only from listed arrays", `{"files":[1,2],"x":[1,2,3],"regions":[1]}`, JSONLimits{Elements: 2, Lists: []string{"files", "regions"}}, "elements", "$.regions[0]"},
		{"keys match without case", `{"FiLeS":[1,2,3]}`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "array", "$.FiLeS"},
		{"an escaped key counts", `{"rom\u005fids":[1,2,3]}`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "array", `$["rom?u005fids"]`},
		{"a key outside ASCII counts", `{"ſ":[1,2,3]}`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "array", `$["??"]`},
		{"a listed name as a value is no key", `["files",{"x":[1,2,3]}]`, JSONLimits{ArrayLen: 2, Lists: []string{"files"}}, "", ""},
		{"lists still bound depth", `{"rom_ids":[[[[1]]]]}`, JSONLimits{Depth: 3, Lists: []string{"files"}}, "depth", "$.rom_ids[0][0]"},
		// Not JSON: whatever it counts, it must stop, and the decoder refuses the input.
		{"unterminated string", `["abc`, small, "", ""},
		{"unterminated array", `[1,2`, small, "", ""},
		{"stray closers", `]]]}}}`, small, "", ""},
		{"trailing backslash", `["\`, small, "", ""},
		{"garbage", "\x00\xff<html>", small, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckJSON([]byte(c.doc), c.lim)
			if c.bound == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var le *JSONLimitError
			if !errors.As(err, &le) || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("got %v, want a %s refusal", err, c.bound)
			}
			if le.Bound != c.bound || le.Path != c.path && c.path != "*" || len(le.Path) > maxPath {
				t.Errorf("got bound %s at %s, want %s at %s (%v)", le.Bound, le.Path, c.bound, c.path, err)
			}
		})
	}
}

func TestCheckJSONMessages(t *testing.T) {
	for _, c := range []struct {
		doc  string
		lim  JSONLimits
		want string
	}{
		{`{"files":[{},{},{}]}`, JSONLimits{ArrayLen: 2}, "JSON document has a list of more than 2 items (at $.files)"},
		{`[[[]]]`, JSONLimits{Depth: 2}, "JSON document has lists and objects nested more than 2 deep (at $[0][0])"},
		{`[[1],[2]]`, JSONLimits{Elements: 3}, "JSON document has more than 3 list items in all (at $[1][0])"},
		{`{"a":1,"b":2}`, JSONLimits{Values: 2}, "JSON document has more than 2 values in all (at $.b)"},
	} {
		if err := CheckJSON([]byte(c.doc), c.lim); err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.doc, err, c.want)
		}
	}
}

// emptyObjects is the hostile body of issue 24: a list of n empty objects inside a ROM.
func emptyObjects(prefix string, n int, suffix string) []byte {
	var b bytes.Buffer
	b.Grow(len(prefix) + 3*n + len(suffix))
	b.WriteString(prefix)
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("{}")
	}
	b.WriteByte(']')
	b.WriteString(suffix)
	return b.Bytes()
}

func TestCheckJSONHostileBody(t *testing.T) {
	doc := emptyObjects("", (16<<20)/3, "")
	lim := JSONLimits{Depth: 64, ArrayLen: 20000, Elements: 200000, Values: 500000}
	err := CheckJSON(doc, lim)
	var le *JSONLimitError
	if !errors.As(err, &le) || le.Bound != "array" || le.Path != "$" {
		t.Fatalf("a 16 MiB list of {}: %v", err)
	}
	allocs := testing.AllocsPerRun(3, func() { _ = CheckJSON(doc, lim) })
	if allocs > 4 {
		t.Errorf("refusing allocated %.0f times, want only the error", allocs)
	}
	if !json.Valid(doc) {
		t.Fatal("the hostile body is valid JSON: the check must come before the decoder")
	}
}

func TestCheckJSONAllocatesNothing(t *testing.T) {
	doc := []byte(`{"id":1,"files":[{"name":"a \"b\" [c]","archive_members":[{"n":1},{"n":2e10}]}],"rom_ids":[1,2,3],"x":null}`)
	lim := JSONLimits{Depth: 8, ArrayLen: 100, Elements: 100, Values: 100, Lists: []string{"files", "archive_members"}}
	if n := testing.AllocsPerRun(100, func() {
		if err := CheckJSON(doc, lim); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("accepting allocated %.0f times per run, want 0", n)
	}
}

// FuzzCheckJSON: never panics; a refusal is always a limit error with a short printable path; on
// valid JSON the counts are exact: each limit set to the document's own count accepts it (with
// or without Lists), and one less refuses it.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `[]`, `"x"`, `{"files":[{},{},{}]}`, `[[[[[]]]]]`, `{"a":"\"]["}`, `["\\"]`,
		`{"rom_ids":[1,2,3],"items":[{"files":[{"archive_members":[{}]}]}]}`, `[1e999,-0,true,null]`,
		`{"a":{"b":`, `"\`, "\xff[", `{"k":1,"k":2}`, `[,,,]`, `{:}`, `{"a":[],"b":{}}`,
	} {
		f.Add([]byte(s), uint16(3), uint16(3), uint16(5), uint16(8))
	}
	f.Fuzz(func(t *testing.T, doc []byte, depth, arrayLen, elements, values uint16) {
		lim := JSONLimits{Depth: int(depth % 200), ArrayLen: int(arrayLen), Elements: int(elements), Values: int(values), Lists: []string{"files", "a"}}
		err := CheckJSON(doc, lim)
		var le *JSONLimitError
		if err != nil && (!errors.As(err, &le) || !errors.Is(err, ErrTooLarge) || le.Path == "" || le.Path[0] != '$') {
			t.Fatalf("not a limit error: %#v", err)
		}
		if err != nil {
			for _, c := range []byte(le.Path) {
				if c < ' ' || c >= 0x7f || len(le.Path) > maxPath {
					t.Fatalf("path %q is not short printable ASCII", le.Path)
				}
			}
		}
		want, ok := countJSON(doc)
		if !ok || want.Depth > MaxJSONDepth {
			return
		}
		if err := CheckJSON(doc, want); err != nil {
			t.Fatalf("refused at its own counts %+v: %v", want, err)
		}
		// Lists only ever narrows what counts.
		narrowed := want
		narrowed.Lists = []string{"files", "a"}
		if err := CheckJSON(doc, narrowed); err != nil {
			t.Fatalf("refused with Lists at its own counts %+v: %v", want, err)
		}
		for _, c := range []struct {
			bound string
			lim   JSONLimits
			n     int
		}{
			{"depth", JSONLimits{Depth: want.Depth - 1}, want.Depth - 1},
			{"array", JSONLimits{ArrayLen: want.ArrayLen - 1}, want.ArrayLen - 1},
			{"elements", JSONLimits{Elements: want.Elements - 1}, want.Elements - 1},
			{"values", JSONLimits{Values: want.Values - 1}, want.Values - 1},
		} {
			if c.n < 1 {
				continue
			}
			if err := CheckJSON(doc, c.lim); !errors.As(err, &le) || le.Bound != c.bound {
				t.Fatalf("%s bound %d (document %+v): %v", c.bound, c.n, want, err)
			}
		}
	})
}

// countJSON counts a valid document with encoding/json's tokenizer, as a reference; ok is false
// when it is not valid JSON.
func countJSON(doc []byte) (JSONLimits, bool) {
	if !json.Valid(doc) {
		return JSONLimits{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	type level struct {
		array   bool
		n       int
		wantKey bool
	}
	var st []level
	var c JSONLimits
	for {
		tok, err := dec.Token()
		if err != nil {
			return c, err == io.EOF
		}
		d, delim := tok.(json.Delim)
		if n := len(st); n > 0 && !st[n-1].array && st[n-1].wantKey && !(delim && d == '}') {
			st[n-1].wantKey = false // a key
			continue
		}
		if delim && (d == '}' || d == ']') {
			st = st[:len(st)-1]
			continue
		}
		c.Values++
		if n := len(st); n > 0 {
			if st[n-1].array {
				st[n-1].n++
				c.Elements++
				c.ArrayLen = max(c.ArrayLen, st[n-1].n)
			} else {
				st[n-1].wantKey = true
			}
		}
		if delim {
			st = append(st, level{array: d == '[', wantKey: d == '{'})
			c.Depth = max(c.Depth, len(st))
		}
	}
}
