package romarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// The helpers here walk ROMarr's JSON a token at a time, so a list's elements are decoded one
// by one and only the ones kept stay in memory: a 16 MiB body of "{}," would otherwise decode
// into millions of structs.

// walkObject reads data as one JSON object and calls field for every key; field must consume
// exactly one value from dec (skip does that for keys it does not want).
func walkObject(data []byte, field func(key string, dec *json.Decoder) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := expectDelim(dec, '{', "an object"); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("object key is not a string")
		}
		if err := field(key, dec); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return err
	}
	return expectEnd(dec)
}

// walkArray reads data as one JSON array, calling elem for each element (see eachElement).
func walkArray(data []byte, elem func(i int, dec *json.Decoder) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := eachElement(dec, elem); err != nil {
		return err
	}
	return expectEnd(dec)
}

// eachElement consumes one array value (null counts as empty) and calls elem with each
// element's position; elem must consume exactly one value.
func eachElement(dec *json.Decoder, elem func(i int, dec *json.Decoder) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return errors.New("not a list")
	}
	for i := 0; dec.More(); i++ {
		if err := elem(i, dec); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	_, err = dec.Token() // the closing bracket
	return err
}

// skip consumes one value. RawMessage copies its bytes, which the body bound already limits.
func skip(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

func expectDelim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("not %s", what)
	}
	return nil
}

func expectEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// ring keeps the last n values appended, for "the newest n" of an append-ordered list.
type ring[T any] struct {
	n    int
	buf  []T
	next int
}

func (r *ring[T]) add(v T) {
	if r.n <= 0 {
		return
	}
	if len(r.buf) < r.n {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.next] = v
	r.next = (r.next + 1) % r.n
}

// newestFirst returns the kept values, the last added first.
func (r *ring[T]) newestFirst() []T {
	out := make([]T, 0, len(r.buf))
	for i := len(r.buf) - 1; i >= 0; i-- {
		out = append(out, r.buf[(r.next+i)%len(r.buf)])
	}
	return out
}

// strList is a JSON list of strings that keeps at most maxListed of them while decoding.
type strList []string

func (l *strList) UnmarshalJSON(b []byte) error {
	*l = nil
	dec := json.NewDecoder(bytes.NewReader(b))
	return eachElement(dec, func(_ int, dec *json.Decoder) error {
		var s string
		if err := dec.Decode(&s); err != nil {
			return err
		}
		if len(*l) < maxListed {
			*l = append(*l, s)
		}
		return nil
	})
}

// count is a JSON integer that is never negative: an indexer may report -1 seeders for "unknown",
// which should read as none rather than fail a whole list.
type count int

func (n *count) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = 0
		return nil
	}
	var v int
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = count(max(v, 0))
	return nil
}

// parseTime reads ROMarr's timestamps: Python's isoformat(timespec="seconds") in UTC
// ("2026-08-13T10:04:05+00:00"), or a bare date. Anything else is the zero time.
func parseTime(s string) time.Time {
	if len(s) > 64 {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
