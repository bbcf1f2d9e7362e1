package openapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

func items(n int, each func(i int) any) string {
	list := make([]any, n)
	for i := range list {
		list[i] = each(i)
	}
	b, _ := json.Marshal(map[string]any{"items": list, "total": n})
	return string(b)
}

func TestPaging(t *testing.T) {
	body := items(50, func(i int) any { return map[string]any{"id": i} })
	intp := func(n int) *int { return &n }
	tests := []struct {
		name          string
		pointer       string
		offset, limit int
		wantFirst     string // first element of the page, as JSON, or "" for an empty page
		wantLen       int
		wantNext      *int
		wantTotal     int
	}{
		{"first page", "/items", 0, 20, `{"id":0}`, 20, intp(20), 50},
		{"middle", "/items", 20, 20, `{"id":20}`, 20, intp(40), 50},
		{"last page is short", "/items", 40, 20, `{"id":40}`, 10, nil, 50},
		{"exact end", "/items", 30, 20, `{"id":30}`, 20, nil, 50},
		{"past the end", "/items", 60, 20, "", 0, nil, 50},
		{"limit one", "/items", 49, 1, `{"id":49}`, 1, nil, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tokens, _ := parsePointer(tt.pointer)
			res, err := shape(200, []byte(body), tokens, tt.offset, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var page []json.RawMessage
			if err := json.Unmarshal(res.Body, &page); err != nil {
				t.Fatalf("body %s: %v", res.Body, err)
			}
			if len(page) != tt.wantLen || (tt.wantLen > 0 && string(page[0]) != tt.wantFirst) {
				t.Errorf("page of %d starting %s, want %d starting %s", len(page), first(page), tt.wantLen, tt.wantFirst)
			}
			if fmt.Sprint(deref(res.NextOffset)) != fmt.Sprint(deref(tt.wantNext)) || res.Total != tt.wantTotal || res.Truncated {
				t.Errorf("next %v total %d truncated %v, want next %v total %d", deref(res.NextOffset), res.Total, res.Truncated, deref(tt.wantNext), tt.wantTotal)
			}
		})
	}
	t.Run("offset on an object", func(t *testing.T) {
		if _, err := shape(200, []byte(body), nil, 5, 20); err == nil || !strings.Contains(err.Error(), "offset pages arrays only, and the value at the top is an object") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("whole object", func(t *testing.T) {
		res, err := shape(200, []byte(`{"a":1}`), nil, 0, 20)
		if err != nil || string(res.Body) != `{"a":1}` || res.NextOffset != nil || res.Total != 0 {
			t.Fatalf("got %+v %s, %v", res, res.Body, err)
		}
	})
	t.Run("empty 2xx body", func(t *testing.T) {
		res, err := shape(204, nil, nil, 0, 20)
		if err != nil || string(res.Body) != "null" {
			t.Fatalf("got %s, %v; want null", res.Body, err)
		}
	})
	t.Run("big numbers survive", func(t *testing.T) {
		res, err := shape(200, []byte(`{"id":12345678901234567890}`), nil, 0, 20)
		if err != nil || string(res.Body) != `{"id":12345678901234567890}` {
			t.Fatalf("got %s, %v", res.Body, err)
		}
	})
}

func first(p []json.RawMessage) string {
	if len(p) == 0 {
		return "nothing"
	}
	return string(p[0])
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestTruncation(t *testing.T) {
	t.Run("array cut between items", func(t *testing.T) {
		body := items(100, func(i int) any { return map[string]any{"id": i, "summary": strings.Repeat("x", 1900)} })
		tokens, _ := parsePointer("/items")
		res, err := shape(200, []byte(body), tokens, 10, 100)
		if err != nil {
			t.Fatal(err)
		}
		var page []map[string]any
		if err := json.Unmarshal(res.Body, &page); err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Body) > MaxBodyBytes || len(page) < 20 || len(page) >= 90 || res.Note == "" {
			t.Fatalf("truncated %v, %d bytes, %d items, note %q", res.Truncated, len(res.Body), len(page), res.Note)
		}
		if res.NextOffset == nil || *res.NextOffset != 10+len(page) {
			t.Fatalf("next_offset %v, want %d so that nothing is skipped", deref(res.NextOffset), 10+len(page))
		}
	})
	t.Run("object members replaced by markers", func(t *testing.T) {
		body := fmt.Sprintf(`{"name":"Galaga","big":%s,"bigger":%s,"small":1}`, items(40, func(i int) any { return strings.Repeat("y", 1000) }), items(80, func(i int) any { return strings.Repeat("z", 1000) }))
		tokens, _ := parsePointer("")
		res, err := shape(200, []byte(body), tokens, 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Fatal(err)
		}
		marker, _ := got["bigger"].(string)
		if !res.Truncated || len(res.Body) > MaxBodyBytes || got["name"] != "Galaga" || got["small"] != 1.0 || !strings.Contains(marker, "read it with pointer /bigger") {
			t.Fatalf("truncated %v, %d bytes, got name %v small %v bigger %q", res.Truncated, len(res.Body), got["name"], got["small"], marker)
		}
	})
	t.Run("one item too large on its own", func(t *testing.T) {
		body := fmt.Sprintf(`[{"id":1,"blob":%s},{"id":2}]`, items(100, func(i int) any { return strings.Repeat("w", 1000) }))
		res, err := shape(200, []byte(body), nil, 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || res.NextOffset == nil || *res.NextOffset != 1 || !strings.Contains(string(res.Body), "read it with pointer /0/blob") {
			t.Fatalf("truncated %v next %v body %.200s", res.Truncated, deref(res.NextOffset), res.Body)
		}
	})
	t.Run("nested too deep", func(t *testing.T) {
		body := strings.Repeat("[", 200) + `"x"` + strings.Repeat("]", 200)
		res, err := shape(200, []byte(body), nil, 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || !strings.Contains(string(res.Body), "nested deeper than 64 levels") || strings.Count(string(res.Body), "[") != maxNesting {
			t.Fatalf("truncated %v body %s", res.Truncated, res.Body)
		}
	})
	t.Run("deep and wide", func(t *testing.T) {
		// The shape that made whole-subtree measuring quadratic (seconds to minutes): the fit must
		// still fill the budget without going over.
		body := strings.Repeat("[", 60) + `"` + strings.Repeat("x", 1990) + `"` + strings.Repeat(",1", 200000) + strings.Repeat("]", 60)
		res, err := shape(200, []byte(body), nil, 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Body) > MaxBodyBytes || len(res.Body) < MaxBodyBytes/2 {
			t.Fatalf("truncated %v, %d bytes", res.Truncated, len(res.Body))
		}
	})
	t.Run("object with very many keys", func(t *testing.T) {
		m := map[string]int{}
		for i := range 20000 {
			m[fmt.Sprintf("key%05d", i)] = i
		}
		b, _ := json.Marshal(m)
		res, err := shape(200, b, nil, 0, 20)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Body) > MaxBodyBytes || !strings.Contains(string(res.Body), "more keys cut") {
			t.Fatalf("truncated %v, %d bytes", res.Truncated, len(res.Body))
		}
	})
}

// TestCleaning sends hostile strings in keys and values and checks that no control, bidi,
// zero-width or tag character reaches the result.
func TestCleaning(t *testing.T) {
	body := `{"na\u202eme":"evil\u202egnp.exe","\u001b[31mred":["\u200bzero\u200dwidth","tag\udb40\udc41s"],` +
		`"nested":{"k\u0000":"line1\r\nline2\u0085\u2028x","bom":"\ufeffstart"},"bad":"\u0007bell\u009b"}`
	res, err := shape(200, []byte(body), nil, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range string(res.Body) {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || unicode.Is(unicode.Cf, r) || (r >= 0xe0000 && r <= 0xe007f) {
			t.Errorf("body keeps %U: %s", r, res.Body)
		}
	}
	// NEL then LINE SEPARATOR are two breaks: CleanText keeps one empty line.
	want := `{"[31mred":["zerowidth","tags"],"bad":"bell","name":"evilgnp.exe","nested":{"bom":"start","k":"line1\nline2\n\nx"}}`
	if string(res.Body) != want {
		t.Errorf("body = %s\nwant   %s", res.Body, want)
	}
	// The escapes above are JSON escapes; the raw bytes must be caught too.
	raw := "{\"a\u202eb\":\"c\u200bd\x7f\"}"
	res, err = shape(200, []byte(raw), nil, 0, 20)
	if err != nil || string(res.Body) != `{"ab":"cd"}` {
		t.Errorf("raw bytes: %s, %v", res.Body, err)
	}
	// Long strings are capped.
	res, err = shape(200, []byte(`"`+strings.Repeat("é", 5000)+`"`), nil, 0, 20)
	if err != nil || !strings.HasSuffix(string(res.Body), `…"`) || len([]rune(string(res.Body))) != maxStringRunes+2 {
		t.Errorf("long string: %d runes, %v", len([]rune(string(res.Body))), err)
	}
}
