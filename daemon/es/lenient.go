package es

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// ES writes every metadata value as a string and a few counters as numbers;
// these lenient types accept any JSON value so that one odd field never
// fails a whole list: a value of the wrong kind decodes as zero.

// text is a JSON string; numbers and booleans keep their literal text,
// null, objects and arrays become "".
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0:
		*t = ""
	case b[0] == '"':
		// Most ES strings have no escapes: take them as they are (the
		// decoder has validated the JSON); let encoding/json do the rest.
		if inner := b[1 : len(b)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			*t = text(inner)
			return nil
		}
		var s string
		if json.Unmarshal(b, &s) != nil {
			s = ""
		}
		*t = text(s)
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9' || b[0] == 't' || b[0] == 'f':
		*t = text(b)
	default:
		*t = ""
	}
	return nil
}

// number is a JSON integer, or a string holding one.
type number int

func (n *number) UnmarshalJSON(b []byte) error {
	var t text
	t.UnmarshalJSON(b)
	*n = number(parseInt(string(t)))
	return nil
}

// texts is an array of strings; anything else is empty.
type texts []string

func (ts *texts) UnmarshalJSON(b []byte) error {
	var raw []text
	if json.Unmarshal(b, &raw) != nil {
		*ts = nil
		return nil
	}
	out := make([]string, len(raw))
	for i, t := range raw {
		out[i] = string(t)
	}
	*ts = out
	return nil
}

// flag is ES's "true"/"false" (also a JSON boolean).
type flag bool

func (f *flag) UnmarshalJSON(b []byte) error {
	var t text
	t.UnmarshalJSON(b)
	*f = t == "true"
	return nil
}

func parseInt(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	// "4.0" or "1e3": accept an integral float that fits.
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<31 {
		return int(f)
	}
	return 0
}
