package openapi

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// scalar is one acceptable schema for a parameter value.
type scalar struct {
	typ, format string
	enum        []string
	min, max    *bound
}

type bound struct {
	v         float64
	exclusive bool
}

// param is a Param with what validation needs.
type param struct {
	Param
	array bool
	alts  []scalar // a value is valid when it matches one of them
}

// parseParams merges path-item and operation parameters (the operation's win) and keeps those it
// can describe: a name of plain characters and a known location.
func (ix *Index) parseParams(itemLevel, opLevel any) []param {
	var out []param
	index := map[string]int{}
	for _, list := range []any{itemLevel, opLevel} {
		entries, _ := list.([]any)
		for _, e := range entries {
			m := ix.deref(e)
			if m == nil || len(out) == maxParams {
				continue
			}
			p, ok := ix.newParam(m)
			if !ok {
				continue
			}
			key := p.In + " " + p.Name
			if i, seen := index[key]; seen {
				out[i] = p
				continue
			}
			index[key] = len(out)
			out = append(out, p)
		}
	}
	return out
}

func (ix *Index) newParam(m map[string]any) (param, bool) {
	var p param
	p.Name, _ = m["name"].(string)
	p.In, _ = m["in"].(string)
	if !validParamName(p.Name) {
		return p, false
	}
	switch p.In {
	case "path", "query", "header", "cookie":
	default:
		return p, false
	}
	p.Required, _ = m["required"].(bool)
	if p.In == "path" {
		p.Required = true // OpenAPI: path parameters are always required
	}
	if s, ok := m["description"].(string); ok {
		p.Description = untrusted.CleanText(s, 500)
	}
	schema := m["schema"]
	if s, ok := ix.deref(schema)["description"].(string); ok && p.Description == "" {
		p.Description = untrusted.CleanText(s, 500)
	}
	p.array, p.alts = ix.schemaAlts(schema, 0)
	if len(p.alts) == 0 {
		p.alts = []scalar{{}} // no usable schema: any clean string
	}
	var types []string
	for _, a := range p.alts {
		t := a.typ
		if t == "" {
			t = "string"
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
		if p.Format == "" {
			p.Format = untrusted.Clean(a.format, 40)
		}
		for _, e := range a.enum {
			if c := untrusted.Clean(e, 100); !slices.Contains(p.Enum, c) && len(p.Enum) < 50 {
				p.Enum = append(p.Enum, c)
			}
		}
	}
	p.Type = strings.Join(types, "|")
	if p.array {
		p.Items, p.Type = p.Type, "array"
	}
	return p, true
}

// schemaAlts lists the scalar schemas a value may match; array reports an array schema (whose
// items are the alternatives). "null" branches (FastAPI's Optional) are dropped.
func (ix *Index) schemaAlts(v any, depth int) (array bool, alts []scalar) {
	m := ix.deref(v)
	if m == nil || depth > maxRefDepth {
		return false, nil
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		list, ok := m[key].([]any)
		if !ok {
			continue
		}
		for i, b := range list {
			if key == "allOf" && i > 0 {
				break // FastAPI uses allOf only to wrap one $ref
			}
			arr, a := ix.schemaAlts(b, depth+1)
			array = array || arr
			alts = append(alts, a...)
		}
		return array, alts
	}
	var types []string
	switch t := m["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		types = []string{""}
	}
	for _, t := range types {
		switch t {
		case "null":
		case "array":
			array = true
			_, items := ix.schemaAlts(m["items"], depth+1)
			if len(items) == 0 {
				items = []scalar{{}}
			}
			alts = append(alts, items...)
		case "", "string", "integer", "number", "boolean":
			alts = append(alts, scalarFrom(t, m))
		default:
			// object and unknown types cannot travel in a path or query string.
		}
	}
	return array, alts
}

func scalarFrom(t string, m map[string]any) scalar {
	s := scalar{typ: t}
	s.format, _ = m["format"].(string)
	if list, ok := m["enum"].([]any); ok {
		for _, e := range list {
			switch x := e.(type) {
			case string:
				s.enum = append(s.enum, x)
			case json.Number:
				s.enum = append(s.enum, x.String())
			case bool:
				s.enum = append(s.enum, strconv.FormatBool(x))
			}
		}
	}
	s.min = boundOf(m["minimum"], m["exclusiveMinimum"])
	s.max = boundOf(m["maximum"], m["exclusiveMaximum"])
	return s
}

// boundOf reads a limit in either OpenAPI 3.0 (boolean exclusive flag) or 3.1 (numeric) form.
func boundOf(limit, exclusive any) *bound {
	if n, ok := exclusive.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			return &bound{v: f, exclusive: true}
		}
	}
	n, ok := limit.(json.Number)
	if !ok {
		return nil
	}
	f, err := n.Float64()
	if err != nil {
		return nil
	}
	excl, _ := exclusive.(bool)
	return &bound{v: f, exclusive: excl}
}

func validParamName(s string) bool {
	if s == "" || len(s) > maxParamName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-[]", c) >= 0) {
			return false
		}
	}
	return true
}
