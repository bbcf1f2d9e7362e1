package openapi

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePointer(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{"/", []string{""}, ""},
		{"/items", []string{"items"}, ""},
		{"/items/0/name", []string{"items", "0", "name"}, ""},
		{"/a~1b/c~0d", []string{"a/b", "c~d"}, ""},
		{"/~01", []string{"~1"}, ""}, // RFC 6901: ~01 is "~1", not "/"
		{"/a//b", []string{"a", "", "b"}, ""},
		{"items", nil, `start with "/"`},
		{"/a~2", nil, "~0"},
		{"/a~", nil, "~0"},
		{"/" + strings.Repeat("a", maxPointerBytes), nil, "longer than"},
		{strings.Repeat("/a", maxPointerTokens+1), nil, "more than"},
	}
	for _, tt := range tests {
		got, err := parsePointer(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parsePointer(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePointer(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if back := formatPointer(got); back != tt.in {
			t.Errorf("formatPointer(parsePointer(%q)) = %q", tt.in, back)
		}
	}
}

func TestSelectPointer(t *testing.T) {
	doc, err := decodeJSON([]byte(`{"items":[{"name":"Galaga"},{"name":"Pac-Man"},{"name":"Dig Dug"}],"a/b":1,"m~n":2,"":"empty key","n":null}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pointer string
		want    string // JSON
		wantErr string
	}{
		{"/items/1/name", `"Pac-Man"`, ""},
		{"/a~1b", `1`, ""},
		{"/m~0n", `2`, ""},
		{"/", `"empty key"`, ""},
		{"/n", `null`, ""},
		{"/items/3", "", "the array at /items has 3 items (0 to 2)"},
		{"/items/01", "", "not an array index"},
		{"/items/-", "", "not an array index"},
		{"/items/name", "", "not an array index"},
		{"/nope", "", `no key "nope" at the top; keys there: , a/b, items, m~n, n`},
		{"/items/0/name/x", "", "the value at /items/0/name is a string"},
		{"/n/x", "", "is null"},
	}
	for _, tt := range tests {
		tokens, err := parsePointer(tt.pointer)
		if err != nil {
			t.Fatal(err)
		}
		got, err := selectPointer(doc, tokens)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("select %q: err = %v, want %q", tt.pointer, err, tt.wantErr)
			}
			continue
		}
		b, _ := marshal(got)
		if err != nil || string(b) != tt.want {
			t.Errorf("select %q = %s, %v; want %s", tt.pointer, b, err, tt.want)
		}
	}
}
