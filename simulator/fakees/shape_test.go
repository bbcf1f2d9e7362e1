package fakees

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// jsonShape lists a JSON document's keys and value kinds in order (duplicate
// keys included), e.g. "{ id: string path: string }".
func jsonShape(t *testing.T, b []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct{ object, wantKey bool }
	var stack []frame
	var out []string
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("jsonShape: %v in %s", err, b)
		}
		if d, ok := tok.(json.Delim); ok {
			out = append(out, d.String())
			switch d {
			case '{', '[':
				stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			out = append(out, tok.(string)+":")
			stack[n-1].wantKey = false
			continue
		}
		switch tok.(type) {
		case string:
			out = append(out, "string")
		case json.Number:
			out = append(out, "number")
		case bool:
			out = append(out, "bool")
		default:
			out = append(out, "null")
		}
		valueDone()
	}
	return strings.Join(out, " ")
}

func TestJSONShape(t *testing.T) {
	got := jsonShape(t, []byte(`{"a":"x","a":"y","b":[1,true,{"c":null}],"d":{}}`))
	want := "{ a: string a: string b: [ number bool { c: null } ] d: { } }"
	if got != want {
		t.Errorf("jsonShape = %s, want %s", got, want)
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// orderedObject decodes a flat JSON object of strings keeping key order; a
// non-string value fails the decode.
type orderedObject struct {
	keys   []string
	values map[string]string
}

func (o *orderedObject) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	o.values = map[string]string{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("key %v: %w", k, err)
		}
		o.keys = append(o.keys, k.(string))
		o.values[k.(string)] = v
	}
	return nil
}
