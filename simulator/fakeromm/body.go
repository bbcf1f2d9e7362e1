package fakeromm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A JSON request body is validated the way FastAPI validates a pydantic
// model: every bad field is one item of the 422's "detail", located under
// "body". The checks are pydantic's lax mode for what the write routes
// declare (strings with lengths, ints with bounds, bools, string lists,
// datetimes); unknown fields are ignored, as pydantic ignores them.

// maxBody bounds a request body; RomM's bodies here are small.
const maxBody = 1 << 20

type body struct {
	fields map[string]json.RawMessage
	p      *params // the call's params: errors go to the same 422
	loc    []any   // the location prefix: ["body"], or ["body", "sessions", 3]
}

// readBody reads the request's JSON object into a body whose errors land
// in c.p. ok is false when there is no object to read fields from (the
// error is recorded already).
func readBody(c *call) (*body, bool) {
	b := &body{p: c.p, loc: []any{"body"}}
	raw, err := io.ReadAll(io.LimitReader(c.r.Body, maxBody+1))
	if err != nil || len(raw) > maxBody {
		c.p.errs = append(c.p.errs, validationError{Type: "json_invalid", Loc: []any{"body", 0},
			Msg: "JSON decode error", Input: map[string]any{}, Ctx: map[string]any{"error": "body unreadable or over 1 MiB"}})
		return b, false
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		c.p.errs = append(c.p.errs, validationError{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: nil})
		return b, false
	}
	if ct := c.r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			// FastAPI leaves a non-JSON body as bytes, which the model refuses.
			c.p.errs = append(c.p.errs, validationError{Type: "model_attributes_type", Loc: []any{"body"},
				Msg: "Input should be a valid dictionary or object to extract fields from", Input: string(raw)})
			return b, false
		}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		pos := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pos = int(se.Offset)
		}
		c.p.errs = append(c.p.errs, validationError{Type: "json_invalid", Loc: []any{"body", pos},
			Msg: "JSON decode error", Input: map[string]any{}, Ctx: map[string]any{"error": "Expecting value"}})
		return b, false
	}
	if _, isObj := v.(map[string]any); !isObj {
		c.p.errs = append(c.p.errs, validationError{Type: "model_attributes_type", Loc: []any{"body"},
			Msg: "Input should be a valid dictionary or object to extract fields from", Input: v})
		return b, false
	}
	json.Unmarshal(raw, &b.fields)
	return b, true
}

// sub is a nested object (a list item), located under b's location.
func (b *body) sub(raw json.RawMessage, loc ...any) (*body, bool) {
	at := append(append([]any{}, b.loc...), loc...)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		b.p.errs = append(b.p.errs, validationError{Type: "model_type", Loc: at,
			Msg: "Input should be a valid dictionary or instance of a model", Input: decodeAny(raw)})
		return nil, false
	}
	return &body{fields: m, p: b.p, loc: at}, true
}

func (b *body) fail(name, typ, msg string, input any, ctx map[string]any) {
	loc := append(append([]any{}, b.loc...), name)
	b.p.errs = append(b.p.errs, validationError{Type: typ, Loc: loc, Msg: msg, Input: input, Ctx: ctx})
}

// failHere records an error at b's own location (a model validator's).
func (b *body) failHere(typ, msg string, input any, ctx map[string]any) {
	b.p.errs = append(b.p.errs, validationError{Type: typ, Loc: append([]any{}, b.loc...), Msg: msg, Input: input, Ctx: ctx})
}

func decodeAny(raw json.RawMessage) any {
	var v any
	json.Unmarshal(raw, &v)
	return v
}

// get returns a field and whether it is present and not null.
func (b *body) get(name string, required bool) (json.RawMessage, bool) {
	raw, ok := b.fields[name]
	if !ok {
		if required {
			b.fail(name, "missing", "Field required", b.input(), nil)
		}
		return nil, false
	}
	if string(raw) == "null" {
		if required {
			b.fail(name, "string_type", "Input should be a valid string", nil, nil)
		}
		return nil, false
	}
	return raw, true
}

// input is the object itself, as pydantic reports it for a missing field.
func (b *body) input() any {
	out := map[string]any{}
	for k, v := range b.fields {
		out[k] = decodeAny(v)
	}
	return out
}

// str is a string field; min and max bound its length (0: unbounded max).
// A required field that is absent or null is an error.
func (b *body) str(name string, required bool, min, max int) (string, bool) {
	raw, ok := b.get(name, required)
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		b.fail(name, "string_type", "Input should be a valid string", decodeAny(raw), nil)
		return "", false
	}
	n := utf8.RuneCountInString(s)
	if n < min {
		b.fail(name, "string_too_short", "String should have at least "+plural(min, "character"), s, map[string]any{"min_length": min})
		return "", false
	}
	if max > 0 && n > max {
		b.fail(name, "string_too_long", "String should have at most "+plural(max, "character"), s, map[string]any{"max_length": max})
		return "", false
	}
	return s, true
}

// optStr is a `str | None` field: nil when absent or null.
func (b *body) optStr(name string, max int) *string {
	if s, ok := b.str(name, false, 0, max); ok {
		return &s
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// integer is an int field (a JSON integer, an integral float or a numeric
// string, as pydantic's lax mode takes), at least ge when ge is not nil.
func (b *body) integer(name string, required bool, ge *int) (int, bool) {
	raw, ok := b.get(name, required)
	if !ok {
		return 0, false
	}
	in := decodeAny(raw)
	var n int
	switch v := in.(type) {
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			b.fail(name, "int_from_float", "Input should be a valid integer, got a number with a fractional part", v, nil)
			return 0, false
		}
		n = int(v)
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			b.fail(name, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", v, nil)
			return 0, false
		}
		n = i
	default:
		b.fail(name, "int_type", "Input should be a valid integer", in, nil)
		return 0, false
	}
	if ge != nil && n < *ge {
		b.fail(name, "greater_than_equal", "Input should be greater than or equal to "+strconv.Itoa(*ge), n, map[string]any{"ge": *ge})
		return 0, false
	}
	return n, true
}

// boolean is a bool field with a default.
func (b *body) boolean(name string, def bool) bool {
	raw, ok := b.get(name, false)
	if !ok {
		return def
	}
	switch v := decodeAny(raw).(type) {
	case bool:
		return v
	case float64:
		if v == 0 || v == 1 {
			return v == 1
		}
	case string:
		switch strings.ToLower(v) {
		case "1", "true", "t", "yes", "y", "on":
			return true
		case "0", "false", "f", "no", "n", "off":
			return false
		}
	}
	b.fail(name, "bool_parsing", "Input should be a valid boolean, unable to interpret input", decodeAny(raw), nil)
	return def
}

// list is a JSON array field; min and max bound its length (-1: none).
func (b *body) list(name string, required bool, min, max int) ([]json.RawMessage, bool) {
	raw, ok := b.get(name, required)
	if !ok {
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		b.fail(name, "list_type", "Input should be a valid list", decodeAny(raw), nil)
		return nil, false
	}
	if min >= 0 && len(items) < min {
		b.fail(name, "too_short", "List should have at least "+plural(min, "item")+" after validation, not "+strconv.Itoa(len(items)),
			decodeAny(raw), map[string]any{"field_type": "List", "min_length": min, "actual_length": len(items)})
		return nil, false
	}
	if max >= 0 && len(items) > max {
		b.fail(name, "too_long", "List should have at most "+plural(max, "item")+" after validation, not "+strconv.Itoa(len(items)),
			decodeAny(raw), map[string]any{"field_type": "List", "max_length": max, "actual_length": len(items)})
		return nil, false
	}
	return items, true
}

// strs is a list of strings.
func (b *body) strs(name string, required bool, min, max int) ([]string, bool) {
	items, ok := b.list(name, required, min, max)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	good := true
	for i, raw := range items {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			loc := append(append([]any{}, b.loc...), name, i)
			b.p.errs = append(b.p.errs, validationError{Type: "string_type", Loc: loc, Msg: "Input should be a valid string", Input: decodeAny(raw)})
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

// datetime is a required datetime field.
func (b *body) datetime(name string) (time.Time, bool) {
	raw, ok := b.get(name, true)
	if !ok {
		return time.Time{}, false
	}
	t, err := parseDatetime(decodeAny(raw))
	if err != nil {
		b.fail(name, "datetime_from_date_parsing", "Input should be a valid datetime or date, "+err.Error(), decodeAny(raw), nil)
		return time.Time{}, false
	}
	return t, true
}

// parseDatetime is pydantic's datetime parsing, near enough: ISO 8601
// with "T" or a space, an offset or "Z" (none: taken as UTC, as RomM's
// to_utc takes a naive time), or Unix seconds (milliseconds above 2e10).
func parseDatetime(v any) (time.Time, error) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e14 {
			return time.Time{}, errors.New("invalid number")
		}
		if math.Abs(x) > 2e10 {
			x /= 1000
		}
		sec, frac := math.Modf(x)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	case string:
		s := strings.TrimSpace(x)
		if len(s) > 10 && s[10] == ' ' {
			s = s[:10] + "T" + s[11:]
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04Z07:00"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t, nil
			}
		}
		for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
			if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
				return t, nil
			}
		}
		return time.Time{}, errors.New("input is too short or not ISO 8601")
	}
	return time.Time{}, errors.New("expected a string or number")
}
