package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds on what Read accepts and returns.
const (
	// MaxBodyBytes bounds the JSON Read returns; a model reads every byte of it.
	MaxBodyBytes = 64 << 10
	// MaxResponseBytes bounds the body Read accepts from the getter (which has its own bound).
	MaxResponseBytes = 8 << 20
	maxKeyRunes      = 200
	maxStringRunes   = 2000
	// keyReserve keeps room in an object for the marker that says keys were left out.
	keyReserve = 96
	maxNesting = 64
)

// cleanValue returns a copy of decoded JSON with every string, keys included, cleaned, and
// anything nested deeper than maxNesting replaced by a marker (RomM's JSON is about 10 deep; a
// deeper answer is hostile or broken). Keys that clean to the same text keep the first in sorted
// order, so the output does not depend on map iteration.
func cleanValue(v any) any {
	out, _ := cleanReport(v)
	return out
}

// cleanReport is cleanValue that also says whether anything was cut for depth.
func cleanReport(v any) (any, bool) {
	c := &cleaner{}
	return c.at(v, 0), c.cut
}

type cleaner struct{ cut bool }

func (c *cleaner) at(v any, depth int) any {
	switch x := v.(type) {
	case string:
		return untrusted.CleanText(x, maxStringRunes)
	case map[string]any:
		if depth == maxNesting {
			return c.deep()
		}
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			ck := untrusted.Clean(k, maxKeyRunes)
			if _, dup := out[ck]; !dup {
				out[ck] = c.at(x[k], depth+1)
			}
		}
		return out
	case []any:
		if depth == maxNesting {
			return c.deep()
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.at(e, depth+1)
		}
		return out
	}
	return v
}

func (c *cleaner) deep() string {
	c.cut = true
	return fmt.Sprintf("<cut: nested deeper than %d levels>", maxNesting)
}

// marshal encodes v without Go's HTML escaping (it would turn < into \u003c for the model).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func marshalClean(v any) (json.RawMessage, error) { return marshal(cleanValue(v)) }

// sizeUpTo is the length of v's JSON (as marshal writes it) when that is at most limit, and
// some number above limit otherwise. It stops counting once past limit, so fitting a large
// answer costs about the budget per level, not the answer's size.
func sizeUpTo(v any, limit int) int {
	limit = max(limit, 0)
	switch x := v.(type) {
	case nil:
		return 4
	case bool:
		if x {
			return 4
		}
		return 5
	case json.Number:
		return len(x)
	case string:
		if len(x) > 6*limit+2 { // escaping never shortens: surely over
			return limit + 1
		}
		b, _ := marshal(x)
		return len(b)
	case map[string]any:
		n := 1
		for k, e := range x {
			n += sizeUpTo(k, limit) + 1 + sizeUpTo(e, limit-n) + 1
			if n > limit {
				return n
			}
		}
		return max(n, 2)
	case []any:
		n := 1
		for _, e := range x {
			n += sizeUpTo(e, limit-n) + 1
			if n > limit {
				return n
			}
		}
		return max(n, 2)
	}
	b, _ := marshal(v)
	return len(b)
}

// fitValue returns v when its JSON fits budget. Otherwise an object keeps, in key order, the
// members that fit and replaces the others with a marker naming the pointer that reads them; an
// array keeps the leading items that fit. at is v's pointer, for the markers.
func fitValue(v any, budget int, at string) (any, bool) {
	if sizeUpTo(v, budget) <= budget {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		return fitObject(x, budget, at), true
	case []any:
		items, _, _ := fitItems(x, budget, at, 0)
		return items, true
	}
	return "<cut>", true
}

func fitObject(m map[string]any, budget int, at string) map[string]any {
	out := map[string]any{}
	used := 2 // {}
	keys := sortedKeys(m)
	for i, k := range keys {
		kb := sizeUpTo(k, budget)
		room := budget - keyReserve - used
		if cost := kb + 1 + sizeUpTo(m[k], room) + 1; cost <= room {
			out[k] = m[k]
			used += cost
			continue
		}
		marker := "<cut; read it with pointer " + at + formatPointer([]string{k}) + ">"
		cost := kb + 1 + sizeUpTo(marker, budget) + 1
		if cost > room {
			out["…"] = fmt.Sprintf("<%d more keys cut; select one with pointer>", len(keys)-i)
			break
		}
		out[k] = marker
		used += cost
	}
	return out
}

// fitItems keeps the leading items of page that fit budget as a JSON array and says how many it
// kept and whether it cut anything; base is the index of page[0] in the selected array, for the
// markers. An item too large on its own is kept, cut by fitValue, so a page never comes back
// empty while items remain.
func fitItems(page []any, budget int, at string, base int) ([]any, int, bool) {
	out := []any{}
	used := 2 // []
	for i, item := range page {
		room := budget - used
		cost := sizeUpTo(item, room) + 1
		if cost > room {
			if i == 0 {
				cut, _ := fitValue(item, budget-2, at+formatPointer([]string{fmt.Sprint(base)}))
				return []any{cut}, 1, true
			}
			return out, i, true
		}
		out = append(out, item)
		used += cost
	}
	return out, len(page), false
}

// errorBody is what Read returns for a non-2xx answer: the server's JSON (usually {"detail": …})
// or its text, cleaned and bounded, so the caller can say what went wrong.
func errorBody(body []byte) json.RawMessage {
	var v any
	if len(bytes.TrimSpace(body)) == 0 {
		v = nil
	} else if d, err := decodeJSON(body); err == nil {
		v = d
	} else {
		v = string(body[:min(len(body), 4*maxStringRunes)])
	}
	v, _ = fitValue(cleanValue(v), 4<<10, "")
	b, err := marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// sortedStrings is for error messages that list names.
func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
