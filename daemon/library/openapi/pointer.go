package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds on a caller's JSON pointer.
const (
	maxPointerBytes  = 1024
	maxPointerTokens = 32
)

var errNotLocal = errors.New("only local references (#/…) are followed")

// parsePointer splits an RFC 6901 JSON pointer into its unescaped reference tokens. "" is the
// whole document; otherwise it starts with "/", and "~" appears only as "~0" (~) or "~1" (/).
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if len(p) > maxPointerBytes {
		return nil, fmt.Errorf("pointer is longer than %d bytes", maxPointerBytes)
	}
	if p[0] != '/' {
		return nil, errors.New(`pointer must be empty or start with "/", like /items/0/name`)
	}
	raw := strings.Split(p[1:], "/")
	if len(raw) > maxPointerTokens {
		return nil, fmt.Errorf("pointer has more than %d parts", maxPointerTokens)
	}
	tokens := make([]string, len(raw))
	for i, t := range raw {
		var b strings.Builder
		for j := 0; j < len(t); j++ {
			if t[j] != '~' {
				b.WriteByte(t[j])
				continue
			}
			if j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1') {
				return nil, errors.New(`pointer has a "~" that is not ~0 (for ~) or ~1 (for /)`)
			}
			b.WriteByte("~/"[t[j+1]-'0'])
			j++
		}
		tokens[i] = b.String()
	}
	return tokens, nil
}

// formatPointer is the inverse of parsePointer.
func formatPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// selectPointer walks v (decoded JSON) along tokens. A member is matched by its exact key, or by
// its cleaned key, since callers only ever saw cleaned keys. Errors say what is there instead.
func selectPointer(v any, tokens []string) (any, error) {
	for i, tok := range tokens {
		at := formatPointer(tokens[:i])
		if at == "" {
			at = "the top"
		}
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				next, ok = cleanKeyMatch(x, tok)
			}
			if !ok {
				return nil, fmt.Errorf("pointer %s: no key %q at %s; keys there: %s", untrusted.Clean(formatPointer(tokens[:i+1]), 120), untrusted.Clean(tok, 60), untrusted.Clean(at, 120), keyList(x))
			}
			v = next
		case []any:
			n, err := arrayIndex(tok)
			if err != nil {
				return nil, fmt.Errorf("pointer %s: %w", untrusted.Clean(formatPointer(tokens[:i+1]), 120), err)
			}
			if n >= len(x) {
				return nil, fmt.Errorf("pointer %s: the array at %s has %d items (0 to %d)", untrusted.Clean(formatPointer(tokens[:i+1]), 120), untrusted.Clean(at, 120), len(x), len(x)-1)
			}
			v = x[n]
		default:
			return nil, fmt.Errorf("pointer %s: the value at %s is %s, which has no parts", untrusted.Clean(formatPointer(tokens[:i+1]), 120), untrusted.Clean(at, 120), kind(v))
		}
	}
	return v, nil
}

func cleanKeyMatch(m map[string]any, tok string) (any, bool) {
	for k, e := range m {
		if untrusted.Clean(k, maxKeyRunes) == tok {
			return e, true
		}
	}
	return nil, false
}

// arrayIndex accepts RFC 6901 indexes: decimal, no leading zeros, not "-".
func arrayIndex(tok string) (int, error) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an array index (0, 1, 2…)", untrusted.Clean(tok, 20))
	}
	n, err := strconv.Atoi(tok)
	if err != nil {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	return n, nil
}

// keyList names up to 20 keys of an object, cleaned and sorted.
func keyList(m map[string]any) string {
	keys := sortedKeys(m)
	var out []string
	for _, k := range keys {
		if len(out) == 20 {
			out = append(out, fmt.Sprintf("… (%d in all)", len(keys)))
			break
		}
		out = append(out, untrusted.Clean(k, 60))
	}
	if len(out) == 0 {
		return "none (empty object)"
	}
	return strings.Join(out, ", ")
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "a value"
}

func urlUnescapeFragment(s string) (string, error) { return url.PathUnescape(s) }
