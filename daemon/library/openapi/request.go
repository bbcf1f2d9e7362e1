package openapi

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds on a caller's arguments.
const (
	maxPathValueBytes  = 256
	maxQueryValueBytes = 512
	maxQueryValues     = 100 // per parameter
	maxQueryNames      = 50
)

// templatePart is a literal segment of a path template or, when name is set, a {name} segment.
type templatePart struct{ lit, name string }

// parseTemplate accepts a path of plain literal segments and whole-segment {name} parameters, so
// that a built path is always the template with each parameter replaced by one escaped segment.
func parseTemplate(p string) ([]templatePart, bool) {
	if len(p) < 2 || len(p) > maxPathBytes || p[0] != '/' {
		return nil, false
	}
	var parts []templatePart
	seen := map[string]bool{}
	for _, seg := range strings.Split(p[1:], "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name, ok = strings.CutSuffix(name, "}")
			if !ok || !validParamName(name) || seen[name] {
				return nil, false
			}
			seen[name] = true
			parts = append(parts, templatePart{name: name})
			continue
		}
		if seg == "" || seg == "." || seg == ".." {
			return nil, false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
				return nil, false
			}
		}
		parts = append(parts, templatePart{lit: seg})
	}
	return parts, true
}

func (o *operation) param(in, name string) (param, bool) {
	for _, p := range o.params {
		if p.In == in && p.Name == name {
			return p, true
		}
	}
	return param{}, false
}

func (o *operation) names(in string) []string {
	var out []string
	for _, p := range o.params {
		if p.In == in {
			out = append(out, p.Name)
		}
	}
	return sortedStrings(out)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// build turns the caller's arguments into the escaped request path and the query, refusing
// anything the operation does not declare or whose value does not fit its schema.
func (o *operation) build(pathArgs map[string]string, queryArgs map[string][]string) (string, url.Values, error) {
	var templateNames []string
	for _, t := range o.template {
		if t.name != "" {
			templateNames = append(templateNames, t.name)
		}
	}
	for name := range pathArgs {
		if !slices.Contains(templateNames, name) {
			return "", nil, fmt.Errorf("path parameter %q is not part of %s; it takes: %s", untrusted.Clean(name, 60), o.Path, listOrNone(sortedStrings(templateNames)))
		}
	}
	var b strings.Builder
	for _, t := range o.template {
		b.WriteByte('/')
		if t.name == "" {
			b.WriteString(t.lit)
			continue
		}
		v, ok := pathArgs[t.name]
		if !ok {
			return "", nil, fmt.Errorf("missing path parameter %s of %s", t.name, o.Path)
		}
		p, ok := o.param("path", t.name)
		if !ok {
			return "", nil, fmt.Errorf("the server's document does not describe path parameter %s of %s, so it cannot be checked; this operation cannot run", t.name, o.Path)
		}
		canon, err := checkValue(p, v, true)
		if err != nil {
			return "", nil, fmt.Errorf("path parameter %s: %w", t.name, err)
		}
		b.WriteString(url.PathEscape(canon))
	}
	q, err := o.query(queryArgs)
	if err != nil {
		return "", nil, err
	}
	return b.String(), q, nil
}

func (o *operation) query(args map[string][]string) (url.Values, error) {
	if len(args) > maxQueryNames {
		return nil, fmt.Errorf("more than %d query parameters", maxQueryNames)
	}
	refused, defaults := queryPolicy(o.ID)
	q := url.Values{}
	for _, name := range sortedStringKeys(args) {
		vals := args[name]
		p, ok := o.param("query", name)
		if !ok {
			return nil, fmt.Errorf("unknown query parameter %q for %s; it takes: %s", untrusted.Clean(name, 60), o.ID, listOrNone(o.names("query")))
		}
		if why, ok := refused[name]; ok {
			return nil, fmt.Errorf("query parameter %s is refused: %s", name, why)
		}
		switch {
		case len(vals) == 0:
			return nil, fmt.Errorf("query parameter %s has no value; leave it out instead", name)
		case !p.array && len(vals) > 1:
			return nil, fmt.Errorf("query parameter %s takes one value, not %d", name, len(vals))
		case len(vals) > maxQueryValues:
			return nil, fmt.Errorf("query parameter %s: more than %d values", name, maxQueryValues)
		}
		for _, v := range vals {
			canon, err := checkValue(p, v, false)
			if err != nil {
				return nil, fmt.Errorf("query parameter %s: %w", name, err)
			}
			q.Add(name, canon)
		}
	}
	var missing []string
	for _, p := range o.params {
		if p.In != "query" {
			if p.Required && (p.In == "header" || p.In == "cookie") {
				return nil, fmt.Errorf("%s needs the %s parameter %s, which callers cannot supply; it cannot run", o.ID, p.In, p.Name)
			}
			continue
		}
		if _, given := q[p.Name]; given {
			continue
		}
		if v, ok := defaults[p.Name]; ok {
			q[p.Name] = append([]string(nil), v...)
			continue
		}
		if p.Required {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required query parameter(s) of %s: %s", o.ID, strings.Join(sortedStrings(missing), ", "))
	}
	return q, nil
}

// checkValue validates one value against the parameter's schema and returns the form to send
// (integers and numbers are re-formatted, so "007" goes out as 7).
func checkValue(p param, v string, inPath bool) (string, error) {
	limit := maxQueryValueBytes
	if inPath {
		limit = maxPathValueBytes
	}
	if err := plainText(v, limit); err != nil {
		return "", err
	}
	if inPath {
		switch {
		case v == "":
			return "", fmt.Errorf("is empty")
		case strings.ContainsAny(v, `/\`):
			return "", fmt.Errorf("%q contains a slash; it must be one path segment", untrusted.Clean(v, 60))
		case strings.Contains(v, ".."), v == ".":
			return "", fmt.Errorf("%q contains a dot segment", untrusted.Clean(v, 60))
		}
	}
	var errs []string
	for _, s := range p.alts {
		canon, err := s.check(v)
		if err == nil {
			return canon, nil
		}
		if !slices.Contains(errs, err.Error()) {
			errs = append(errs, err.Error())
		}
	}
	return "", fmt.Errorf("%q %s", untrusted.Clean(v, 60), strings.Join(errs, ", or "))
}

// plainText refuses invalid UTF-8, control characters and invisible format (bidi, zero-width)
// characters: none has a place in an id, a name or a filter value.
func plainText(v string, limit int) error {
	if len(v) > limit {
		return fmt.Errorf("is longer than %d bytes", limit)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("contains control or invisible character %U", r)
		}
	}
	return nil
}

func (s scalar) check(v string) (string, error) {
	var canon string
	switch s.typ {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || strings.HasPrefix(v, "+") {
			return "", fmt.Errorf("must be an integer%s", s.rangeText())
		}
		if !s.inRange(float64(n)) {
			return "", fmt.Errorf("must be an integer%s", s.rangeText())
		}
		canon = strconv.FormatInt(n, 10)
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || strings.HasPrefix(v, "+") || !s.inRange(f) {
			return "", fmt.Errorf("must be a number%s", s.rangeText())
		}
		canon = strconv.FormatFloat(f, 'g', -1, 64)
	case "boolean":
		switch strings.ToLower(v) {
		case "true", "false":
			canon = strings.ToLower(v)
		default:
			return "", fmt.Errorf("must be true or false")
		}
	default: // string, or no declared type
		canon = v
		switch s.format {
		case "date-time":
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				return "", fmt.Errorf("must be an RFC 3339 date-time like 2024-05-01T00:00:00Z")
			}
		case "date":
			if _, err := time.Parse(time.DateOnly, v); err != nil {
				return "", fmt.Errorf("must be a date like 2024-05-01")
			}
		}
	}
	if len(s.enum) > 0 && !slices.Contains(s.enum, canon) {
		var shown []string
		for _, e := range s.enum {
			shown = append(shown, untrusted.Clean(e, 40))
		}
		return "", fmt.Errorf("must be one of %s", strings.Join(shown, ", "))
	}
	return canon, nil
}

func (s scalar) inRange(f float64) bool {
	if s.min != nil && (f < s.min.v || (s.min.exclusive && f == s.min.v)) {
		return false
	}
	if s.max != nil && (f > s.max.v || (s.max.exclusive && f == s.max.v)) {
		return false
	}
	return true
}

func (s scalar) rangeText() string {
	var parts []string
	if s.min != nil {
		op := "≥"
		if s.min.exclusive {
			op = ">"
		}
		parts = append(parts, op+" "+strconv.FormatFloat(s.min.v, 'g', -1, 64))
	}
	if s.max != nil {
		op := "≤"
		if s.max.exclusive {
			op = "<"
		}
		parts = append(parts, op+" "+strconv.FormatFloat(s.max.v, 'g', -1, 64))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " and ")
}

func sortedStringKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return sortedStrings(keys)
}
