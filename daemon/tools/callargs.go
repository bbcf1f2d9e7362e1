package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// Bounds of `cabinet call` arguments: they come from a shell, possibly a
// script gone wrong.
const (
	maxCallArgs     = 32
	maxCallArgBytes = 4096
)

// ParseCallArgs maps `cabinet call TOOL key=value…` arguments to the tool's
// input: integers, numbers and booleans are parsed from their text, strings
// are taken as they are. Unknown or repeated keys, values of the wrong kind
// or out of bounds, and missing required arguments are errors that name the
// argument and say what it takes.
func ParseCallArgs(tool mcp.Tool, kvs []string) (map[string]any, error) {
	props, required, err := inputProps(tool)
	if err != nil {
		return nil, err
	}
	if len(kvs) > maxCallArgs {
		return nil, fmt.Errorf("%s: too many arguments (%d, at most %d)", tool.Name, len(kvs), maxCallArgs)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	})
	args := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		if len(kv) > maxCallArgBytes {
			return nil, fmt.Errorf("%s: an argument is %d bytes long, at most %d", tool.Name, len(kv), maxCallArgBytes)
		}
		if !utf8.ValidString(kv) {
			return nil, fmt.Errorf("%s: argument %q is not valid UTF-8", tool.Name, kv)
		}
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%s: argument %q is not key=value%s", tool.Name, kv, takes(names))
		}
		p, known := props[key]
		if !known {
			return nil, fmt.Errorf("%s: unknown argument %q%s", tool.Name, key, takes(names))
		}
		if _, dup := args[key]; dup {
			return nil, fmt.Errorf("%s: argument %q is given twice", tool.Name, key)
		}
		v, err := parseValue(key, val, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool.Name, err)
		}
		args[key] = v
	}
	for _, r := range required {
		if _, ok := args[r]; !ok {
			return nil, fmt.Errorf("%s: missing argument %s (%s)", tool.Name, r, expect(props[r]))
		}
	}
	return args, nil
}

func takes(names []string) string {
	if len(names) == 0 {
		return "; this tool takes no arguments"
	}
	return "; it takes " + strings.Join(names, ", ")
}

// inputProps reads a tool's input schema, whether built here or received
// over the wire.
func inputProps(tool mcp.Tool) (map[string]map[string]any, []string, error) {
	schema := tool.InputSchema
	if len(tool.RawInputSchema) > 0 {
		if err := json.Unmarshal(tool.RawInputSchema, &schema); err != nil {
			return nil, nil, fmt.Errorf("%s: unreadable input schema: %w", tool.Name, err)
		}
	}
	props := make(map[string]map[string]any, len(schema.Properties))
	for k, v := range schema.Properties {
		m, ok := v.(map[string]any)
		if !ok {
			// A schema built with the helpers holds js values; normalise through JSON.
			b, err := json.Marshal(v)
			if err != nil || json.Unmarshal(b, &m) != nil {
				return nil, nil, fmt.Errorf("%s: unreadable schema of argument %s", tool.Name, k)
			}
		}
		props[k] = m
	}
	return props, schema.Required, nil
}

// schemaType is a property's type, ignoring "null".
func schemaType(p map[string]any) string {
	switch t := p["type"].(type) {
	case string:
		return t
	case []string:
		for _, x := range t {
			if x != "null" {
				return x
			}
		}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return "string"
}

func parseValue(key, val string, p map[string]any) (any, error) {
	bad := func() error { return fmt.Errorf("argument %s must be %s, got %q", key, expect(p), val) }
	switch schemaType(p) {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || !inBounds(float64(n), p) {
			return nil, bad()
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !inBounds(f, p) {
			return nil, bad()
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(val)) {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0":
			return false, nil
		}
		return nil, bad()
	case "string":
		if e := enumOf(p); e != nil && !slices.Contains(e, val) {
			return nil, bad()
		}
		n := utf8.RuneCountInString(val)
		if lo, ok := bound(p, "minLength"); ok && float64(n) < lo {
			return nil, bad()
		}
		if hi, ok := bound(p, "maxLength"); ok && float64(n) > hi {
			return nil, bad()
		}
		if pat, ok := p["pattern"].(string); ok {
			re, err := regexp.Compile(pat)
			if err == nil && !re.MatchString(val) {
				return nil, bad()
			}
		}
		return val, nil
	case "array":
		return parseList(key, val, p)
	case "object":
		return parsePairs(key, val, p)
	}
	return nil, fmt.Errorf("argument %s cannot be given as text", key)
}

// parseList reads an array argument as comma-separated items ("" is the
// empty list), each parsed by the items' schema.
func parseList(key, val string, p map[string]any) (any, error) {
	items, _ := p["items"].(map[string]any)
	out := []any{}
	if strings.TrimSpace(val) != "" {
		for _, part := range strings.Split(val, ",") {
			v, err := parseValue(key, strings.TrimSpace(part), items)
			if err != nil {
				return nil, fmt.Errorf("argument %s must be %s, got %q", key, expect(p), val)
			}
			out = append(out, v)
		}
	}
	if hi, ok := bound(p, "maxItems"); ok && float64(len(out)) > hi {
		return nil, fmt.Errorf("argument %s must be %s, got %q", key, expect(p), val)
	}
	return out, nil
}

// parsePairs reads an object argument as comma-separated name:value pairs,
// each value parsed by its property's schema.
func parsePairs(key, val string, p map[string]any) (any, error) {
	props, _ := p["properties"].(map[string]any)
	out := map[string]any{}
	if strings.TrimSpace(val) == "" {
		return out, nil
	}
	for _, pair := range strings.Split(val, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(pair), ":")
		sub, known := props[name].(map[string]any)
		if !ok || !known {
			return nil, fmt.Errorf("argument %s must be %s, got %q", key, expect(p), val)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("argument %s gives %s twice", key, name)
		}
		x, err := parseValue(key+"."+name, strings.TrimSpace(v), sub)
		if err != nil {
			return nil, err
		}
		out[name] = x
	}
	return out, nil
}

// expect says what a property takes, for error messages.
func expect(p map[string]any) string {
	lo, hasLo := bound(p, "minimum")
	hi, hasHi := bound(p, "maximum")
	switch schemaType(p) {
	case "integer", "number":
		kind := "a whole number"
		if schemaType(p) == "number" {
			kind = "a number"
		}
		switch {
		case hasLo && hasHi:
			return fmt.Sprintf("%s from %v to %v", kind, lo, hi)
		case hasLo:
			return fmt.Sprintf("%s of at least %v", kind, lo)
		case hasHi:
			return fmt.Sprintf("%s of at most %v", kind, hi)
		}
		return kind
	case "boolean":
		return "true or false"
	case "array":
		items, _ := p["items"].(map[string]any)
		s := "a comma-separated list of " + expect(items)
		if hi, ok := bound(p, "maxItems"); ok {
			s += fmt.Sprintf(" (at most %v)", hi)
		}
		return s
	case "object":
		props, _ := p["properties"].(map[string]any)
		names := slices.Sorted(maps.Keys(props))
		return "comma-separated name:value pairs, names " + strings.Join(names, ", ")
	}
	if e := enumOf(p); e != nil {
		return "one of " + strings.Join(e, ", ")
	}
	s := "text"
	if hi, ok := bound(p, "maxLength"); ok {
		s = fmt.Sprintf("text of at most %v characters", hi)
	}
	if pat, ok := p["pattern"].(string); ok {
		s += " matching " + pat
	}
	if d, ok := p["description"].(string); ok && d != "" {
		s += " (" + d + ")"
	}
	return s
}

func inBounds(v float64, p map[string]any) bool {
	if lo, ok := bound(p, "minimum"); ok && v < lo {
		return false
	}
	if hi, ok := bound(p, "maximum"); ok && v > hi {
		return false
	}
	return true
}

func bound(p map[string]any, key string) (float64, bool) {
	switch v := p[key].(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

func enumOf(p map[string]any) []string {
	var out []string
	switch e := p["enum"].(type) {
	case []string:
		out = e
	case []any:
		for _, x := range e {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	default:
		return nil
	}
	return out
}
