package fakeromm

import (
	"net/url"
	"strconv"
	"strings"
)

// Query and path parameters are parsed the way FastAPI (pydantic v2)
// parses them, and a bad one is collected as a ValidationError item so the
// answer is FastAPI's 422 {"detail": [...]}. Parameters a route does not
// declare are ignored, as FastAPI ignores them.

type validationError struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

// maxQueryValue bounds one parameter value; a longer one is refused as
// pydantic refuses a string over max_length, so a search term cannot make
// the fake do unbounded work.
const maxQueryValue = 4096

type params struct {
	q    url.Values
	errs []validationError
}

func newParams(q url.Values) *params { return &params{q: q} }

func (p *params) fail(where, name, typ, msg string, input any, ctx map[string]any) {
	p.errs = append(p.errs, validationError{Type: typ, Loc: []any{where, name}, Msg: msg, Input: input, Ctx: ctx})
}

// str is an optional string; the last value wins, as Starlette's
// QueryParams does for a scalar.
func (p *params) str(name string) (string, bool) {
	vs, ok := p.q[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	v := vs[len(vs)-1]
	if len(v) > maxQueryValue {
		p.fail("query", name, "string_too_long", "String should have at most 4096 characters", v[:64]+"…", map[string]any{"max_length": maxQueryValue})
		return "", false
	}
	return v, true
}

// required is a required string query parameter.
func (p *params) required(name string) string {
	v, ok := p.str(name)
	if !ok {
		if _, present := p.q[name]; !present {
			p.errs = append(p.errs, validationError{Type: "missing", Loc: []any{"query", name}, Msg: "Field required", Input: nil})
		}
	}
	return v
}

// boolean is pydantic's bool parsing: true/false, 1/0, yes/no, on/off,
// t/f, y/n, any case. def is the value when absent; set reports presence.
func (p *params) boolean(name string, def bool) (v, set bool) {
	s, ok := p.str(name)
	if !ok {
		return def, false
	}
	switch strings.ToLower(s) {
	case "1", "true", "t", "yes", "y", "on":
		return true, true
	case "0", "false", "f", "no", "n", "off":
		return false, true
	}
	p.fail("query", name, "bool_parsing", "Input should be a valid boolean, unable to interpret input", s, nil)
	return def, false
}

// integer is an optional int with optional bounds (nil: unbounded).
func (p *params) integer(name string, def int, ge, le *int) (int, bool) {
	s, ok := p.str(name)
	if !ok {
		return def, false
	}
	return p.checkInt("query", name, s, def, ge, le)
}

func (p *params) checkInt(where, name, s string, def int, ge, le *int) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		p.fail(where, name, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", s, nil)
		return def, false
	}
	if ge != nil && n < *ge {
		p.fail(where, name, "greater_than_equal", "Input should be greater than or equal to "+strconv.Itoa(*ge), s, map[string]any{"ge": *ge})
		return def, false
	}
	if le != nil && n > *le {
		p.fail(where, name, "less_than_equal", "Input should be less than or equal to "+strconv.Itoa(*le), s, map[string]any{"le": *le})
		return def, false
	}
	return n, true
}

// ints is a repeated int parameter (platform_ids=1&platform_ids=2); each
// bad item is its own error, located by index as pydantic locates it.
func (p *params) ints(name string) []int {
	var out []int
	for i, s := range p.q[name] {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			p.errs = append(p.errs, validationError{Type: "int_parsing", Loc: []any{"query", name, i},
				Msg: "Input should be a valid integer, unable to parse string as an integer", Input: s})
			continue
		}
		out = append(out, n)
	}
	return out
}

// strs is a repeated string parameter.
func (p *params) strs(name string) []string {
	var out []string
	for _, s := range p.q[name] {
		if len(s) > maxQueryValue {
			p.fail("query", name, "string_too_long", "String should have at most 4096 characters", s[:64]+"…", map[string]any{"max_length": maxQueryValue})
			continue
		}
		out = append(out, s)
	}
	return out
}

// pathInt is an int path parameter; ge1 adds RomM's ge=1 where it has it.
func (p *params) pathInt(name, s string, ge1 bool) int {
	var ge *int
	if ge1 {
		one := 1
		ge = &one
	}
	n, _ := p.checkInt("path", name, s, 0, ge, nil)
	return n
}

func ptr(i int) *int { return &i }
