package fakees

import "strconv"

// prettyWriter reproduces rapidjson's PrettyWriter byte for byte: 4-space
// indentation, "key": value, "[]"/"{}" for empty containers, and rapidjson's
// string escaping (only '"', '\\' and control characters are escaped, as
// \b \t \n \f \r or \u00XX with upper-case hex; everything else, '/' and
// non-ASCII included, is copied as is).
type prettyWriter struct {
	b        []byte
	counts   []int // values written in each open container
	afterKey bool
}

func (w *prettyWriter) prefix() {
	if w.afterKey {
		w.b = append(w.b, ": "...)
		w.afterKey = false
		return
	}
	n := len(w.counts)
	if n == 0 {
		return
	}
	if w.counts[n-1] > 0 {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '\n')
	w.indent(n)
	w.counts[n-1]++
}

func (w *prettyWriter) indent(level int) {
	for i := 0; i < level; i++ {
		w.b = append(w.b, "    "...)
	}
}

func (w *prettyWriter) startObject() {
	w.prefix()
	w.b = append(w.b, '{')
	w.counts = append(w.counts, 0)
}
func (w *prettyWriter) startArray() {
	w.prefix()
	w.b = append(w.b, '[')
	w.counts = append(w.counts, 0)
}
func (w *prettyWriter) endObject() { w.end('}') }
func (w *prettyWriter) endArray()  { w.end(']') }

func (w *prettyWriter) end(c byte) {
	n := len(w.counts)
	written := w.counts[n-1]
	w.counts = w.counts[:n-1]
	if written > 0 {
		w.b = append(w.b, '\n')
		w.indent(n - 1)
	}
	w.b = append(w.b, c)
}

func (w *prettyWriter) key(k string) {
	w.prefix()
	w.quote(k)
	w.afterKey = true
}

func (w *prettyWriter) str(s string) { w.prefix(); w.quote(s) }

func (w *prettyWriter) integer(i int) { w.prefix(); w.b = strconv.AppendInt(w.b, int64(i), 10) }

func (w *prettyWriter) boolean(v bool) { w.prefix(); w.b = strconv.AppendBool(w.b, v) }

// kv writes one "key": "string" member.
func (w *prettyWriter) kv(k, v string) { w.key(k); w.str(v) }

const upperHex = "0123456789ABCDEF"

func (w *prettyWriter) quote(s string) {
	w.b = append(w.b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			w.b = append(w.b, '\\', '"')
		case c == '\\':
			w.b = append(w.b, '\\', '\\')
		case c >= 0x20:
			w.b = append(w.b, c)
		case c == '\b':
			w.b = append(w.b, '\\', 'b')
		case c == '\t':
			w.b = append(w.b, '\\', 't')
		case c == '\n':
			w.b = append(w.b, '\\', 'n')
		case c == '\f':
			w.b = append(w.b, '\\', 'f')
		case c == '\r':
			w.b = append(w.b, '\\', 'r')
		default:
			w.b = append(w.b, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&0xF])
		}
	}
	w.b = append(w.b, '"')
}
