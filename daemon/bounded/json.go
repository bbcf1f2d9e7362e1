package bounded

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// MaxJSONDepth is the deepest nesting CheckJSON can follow: its stack is a fixed array of this
// many levels, so checking allocates nothing. JSONLimits.Depth is capped at it.
const MaxJSONDepth = 128

// JSONLimits bounds the shape of a JSON document. A zero count is no bound; a zero Depth (or one
// over MaxJSONDepth) is MaxJSONDepth.
type JSONLimits struct {
	Depth    int // arrays and objects open at once
	ArrayLen int // elements of any one counted array
	Elements int // elements of all counted arrays together
	Values   int // values in the whole document: the top one, every element and every member's value
	// Lists, when not nil, narrows ArrayLen and Elements to the arrays a typed decoder fills: the
	// top value, the values of these keys, and arrays inside those. Other arrays (a RomM
	// collection's rom_ids, every ROM id of the library) go to fields the decoder does not have,
	// which encoding/json skips without allocating; their items still count as Values. Keys are
	// matched as encoding/json matches fields, without case; a key with an escape or a byte
	// outside ASCII always counts, since it may unescape or fold to one of these.
	Lists []string
}

// Bounds a JSONLimitError names.
const (
	BoundDepth    = "depth"
	BoundArray    = "array"
	BoundElements = "elements"
	BoundValues   = "values"
)

// JSONLimitError is CheckJSON's refusal. It wraps ErrTooLarge.
type JSONLimitError struct {
	Bound string // which limit: BoundDepth, BoundArray, BoundElements or BoundValues
	Limit int
	// Path is where, such as $.files[3].archive_members: for BoundArray the array itself,
	// otherwise the value that went too deep or over the count. Keys are cut to printable ASCII
	// and capped, but they are the server's words.
	Path string
}

// What says what was too many or too deep, to follow "the answer has".
func (e *JSONLimitError) What() string {
	switch e.Bound {
	case BoundDepth:
		return fmt.Sprintf("lists and objects nested more than %d deep", e.Limit)
	case BoundArray:
		return fmt.Sprintf("a list of more than %d items", e.Limit)
	case BoundElements:
		return fmt.Sprintf("more than %d list items in all", e.Limit)
	}
	return fmt.Sprintf("more than %d values in all", e.Limit)
}

// Describe is What and where.
func (e *JSONLimitError) Describe() string { return e.What() + " (at " + e.Path + ")" }

func (e *JSONLimitError) Error() string { return "JSON document has " + e.Describe() }

func (e *JSONLimitError) Unwrap() error { return ErrTooLarge }

// jsonLevel is one open array or object.
type jsonLevel struct {
	array    bool
	counted  bool // an array whose elements count toward ArrayLen and Elements
	n        int  // elements so far, for an array
	key, end int  // the current member's key is data[key:end], for an object
}

// CheckJSON enforces lim on data while scanning it once, before a decoder allocates anything
// for it: json.Unmarshal turns a 16 MiB body of "{}," into millions of structs or maps first and
// lets the caller count them after. It allocates nothing unless it refuses (then only the
// error), and returns nil or a *JSONLimitError.
//
// It is no validator: on bytes that are not JSON it counts what it can and stops quietly, and
// the decoder that runs next rejects them. On valid JSON its counts are exact (FuzzCheckJSON
// compares them with encoding/json's tokenizer).
func CheckJSON(data []byte, lim JSONLimits) error {
	maxDepth := lim.Depth
	if maxDepth <= 0 || maxDepth > MaxJSONDepth {
		maxDepth = MaxJSONDepth
	}
	var (
		stack            [MaxJSONDepth]jsonLevel
		depth            int
		elements, values int
		expectKey        bool // a string here is an object's key
	)
	// value counts a value starting here. Every element moves its array's position, counted or
	// not, so a path names the right index.
	value := func() *JSONLimitError {
		inArray := depth > 0 && stack[depth-1].array
		if inArray {
			stack[depth-1].n++
		}
		values++
		if lim.Values > 0 && values > lim.Values {
			return refuse(data, stack[:depth], BoundValues, lim.Values, true)
		}
		if !inArray || !stack[depth-1].counted {
			return nil
		}
		elements++
		if lim.ArrayLen > 0 && stack[depth-1].n > lim.ArrayLen {
			return refuse(data, stack[:depth], BoundArray, lim.ArrayLen, false)
		}
		if lim.Elements > 0 && elements > lim.Elements {
			return refuse(data, stack[:depth], BoundElements, lim.Elements, true)
		}
		return nil
	}

	for i := 0; i < len(data); {
		switch b := data[i]; b {
		case ' ', '\t', '\n', '\r':
			i++
		case ',':
			expectKey = depth > 0 && !stack[depth-1].array
			i++
		case ':':
			expectKey = false
			i++
		case '{', '[':
			if err := value(); err != nil {
				return err
			}
			if depth == maxDepth {
				return refuse(data, stack[:depth], BoundDepth, maxDepth, true)
			}
			l := jsonLevel{array: b == '['}
			if l.array {
				l.counted = depth == 0 || lim.Lists == nil
				if !l.counted {
					p := &stack[depth-1]
					l.counted = p.array && p.counted || !p.array && listKey(data[p.key:p.end], lim.Lists)
				}
			}
			stack[depth] = l
			depth++
			expectKey = b == '{'
			i++
		case '}', ']':
			if depth > 0 {
				depth--
			}
			expectKey = false
			i++
		case '"':
			end := stringEnd(data, i+1)
			if end < 0 {
				return nil // unterminated: not JSON, the decoder says so
			}
			if expectKey && depth > 0 && !stack[depth-1].array {
				top := &stack[depth-1]
				top.key, top.end = i+1, end
				expectKey = false
			} else if err := value(); err != nil {
				return err
			}
			i = end + 1
		default:
			// A number or literal (or garbage): one value, up to the next delimiter.
			if err := value(); err != nil {
				return err
			}
			i++
			for i < len(data) && !isDelimiter(data[i]) {
				i++
			}
		}
	}
	return nil
}

// listKey reports whether an object key (its raw bytes) may name one of lists.
func listKey(key []byte, lists []string) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return true
		}
	}
	for _, l := range lists {
		if len(l) == len(key) && asciiFold(key, l) {
			return true
		}
	}
	return false
}

func asciiFold(b []byte, s string) bool {
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// stringEnd returns the index of the quote that closes the string whose contents start at
// from, or -1 when there is none. A quote preceded by an odd run of backslashes is escaped.
func stringEnd(data []byte, from int) int {
	for from <= len(data) {
		q := bytes.IndexByte(data[from:], '"')
		if q < 0 {
			return -1
		}
		q += from
		slashes := 0
		for j := q - 1; j >= from && data[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q
		}
		from = q + 1
	}
	return -1
}

func isDelimiter(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\r', ',', ':', '[', ']', '{', '}', '"':
		return true
	}
	return false
}

// refuse builds the error; levels are the open containers. With last, the path ends with the
// position inside the innermost one (the element or member that went over); without, it names
// the innermost container itself.
func refuse(data []byte, levels []jsonLevel, bound string, limit int, last bool) *JSONLimitError {
	if !last && len(levels) > 0 {
		levels = levels[:len(levels)-1]
	}
	return &JSONLimitError{Bound: bound, Limit: limit, Path: jsonPath(data, levels)}
}

// Caps on a path in an error: it is built from keys the server chose.
const (
	maxPathKey = 40
	maxPath    = 200
)

// jsonPath writes the position inside levels as $.key[index]..., in printable ASCII: odd bytes
// of keys become '?', and long keys and paths are cut with "...".
func jsonPath(data []byte, levels []jsonLevel) string {
	var b strings.Builder
	b.WriteByte('$')
	for _, l := range levels {
		if l.array {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(max(l.n-1, 0)))
			b.WriteByte(']')
			continue
		}
		writeKey(&b, data[l.key:l.end])
	}
	p := b.String()
	if len(p) > maxPath {
		p = p[:maxPath/2-2] + "..." + p[len(p)-maxPath/2+1:]
	}
	return p
}

func writeKey(b *strings.Builder, key []byte) {
	plain := len(key) > 0
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			plain = false
			break
		}
	}
	cut := len(key) > maxPathKey
	if cut {
		key = key[:maxPathKey]
	}
	if plain {
		b.WriteByte('.')
		b.Write(key)
	} else {
		b.WriteString(`["`)
		for _, c := range key {
			if c < ' ' || c >= 0x7f || c == '"' || c == '\\' {
				c = '?'
			}
			b.WriteByte(c)
		}
	}
	if cut {
		b.WriteString("...")
	}
	if !plain {
		b.WriteString(`"]`)
	}
}
