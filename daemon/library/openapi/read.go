package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Paging of a selected array.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	maxOffset    = 1_000_000
)

// Getter performs one bounded GET on the RomM server with the client's own credentials. path is
// already escaped (each parameter with url.PathEscape) and starts with /api/: append it to the base
// URL as is, without escaping it again. query holds only parameters the operation declares. Read
// decodes the whole body into maps and slices, so the getter bounds its shape as well as its size
// (romm.Client.Get checks it with bounded.CheckJSON).
type Getter func(ctx context.Context, path string, query url.Values) (status int, body []byte, err error)

// ReadRequest is one romm_api_read call. Path and Query are the caller's parameter values;
// Pointer (RFC 6901, "" for the whole body) selects part of the answer; Offset and Limit page it
// when the selected value is an array (Limit 0 means DefaultLimit).
type ReadRequest struct {
	OperationID string
	Path        map[string]string
	Query       map[string][]string
	Pointer     string
	Offset      int
	Limit       int
}

// ReadResult is the server's answer, selected, paged, cleaned and at most MaxBodyBytes of JSON.
// For a non-2xx status Body is the server's error body (bounded, cleaned) and nothing is selected.
// Total is the length of the selected array; NextOffset is nil on its last page. Note says how
// to narrow the request down when Truncated.
type ReadResult struct {
	Status     int             `json:"status"`
	Body       json.RawMessage `json:"body"`
	NextOffset *int            `json:"next_offset"`
	Truncated  bool            `json:"truncated"`
	Total      int             `json:"total,omitempty"`
	Note       string          `json:"note,omitempty"`
}

// Read runs an allowed GET operation through get. Errors the caller can fix (unknown operation,
// refused operation, bad parameters, a pointer that selects nothing) say what to change; a
// failing getter's error is wrapped.
func (ix *Index) Read(ctx context.Context, get Getter, r ReadRequest) (ReadResult, error) {
	o, err := ix.lookup(r.OperationID)
	if err != nil {
		return ReadResult{}, err
	}
	if !o.Allowed {
		return ReadResult{}, fmt.Errorf("%s is refused: %s", o.ID, o.Reason)
	}
	tokens, err := parsePointer(r.Pointer)
	if err != nil {
		return ReadResult{}, fmt.Errorf("pointer %q: %w", untrusted.Clean(r.Pointer, 120), err)
	}
	limit := r.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return ReadResult{}, fmt.Errorf("limit %d: use 1 to %d (the default is %d)", r.Limit, MaxLimit, DefaultLimit)
	}
	if r.Offset < 0 || r.Offset > maxOffset {
		return ReadResult{}, fmt.Errorf("offset %d: use 0 to %d", r.Offset, maxOffset)
	}
	path, query, err := o.build(r.Path, r.Query)
	if err != nil {
		return ReadResult{}, fmt.Errorf("%s: %w", o.ID, err)
	}
	if get == nil {
		return ReadResult{}, errors.New("romm_api_read: no RomM client is configured")
	}
	status, body, err := get(ctx, path, query)
	if err != nil {
		return ReadResult{}, fmt.Errorf("romm_api_read %s: %w", o.ID, err)
	}
	if len(body) > MaxResponseBytes {
		return ReadResult{}, fmt.Errorf("romm_api_read %s: the answer is %d bytes, more than %d; narrow it with the operation's own query parameters (limit, filters)", o.ID, len(body), MaxResponseBytes)
	}
	if status < 200 || status > 299 {
		return ReadResult{Status: status, Body: errorBody(body)}, nil
	}
	return shape(status, body, tokens, r.Offset, limit)
}

// shape selects, pages, cleans and bounds a 2xx body.
func shape(status int, body []byte, tokens []string, offset, limit int) (ReadResult, error) {
	res := ReadResult{Status: status}
	var doc any
	if len(bytes.TrimSpace(body)) > 0 {
		d, err := decodeJSON(body)
		if err != nil {
			return ReadResult{}, fmt.Errorf("romm_api_read: the server answered %d with a body that is %w", status, err)
		}
		doc = d
	}
	for _, tok := range tokens {
		if redactedKeys[tok] {
			return ReadResult{}, fmt.Errorf("pointer: Cabinet removes %s from every answer (other household members' data)", tok)
		}
	}
	redact(doc)
	sel, err := selectPointer(doc, tokens)
	if err != nil {
		return ReadResult{}, err
	}
	at := formatPointer(tokens)
	var out any
	if arr, ok := sel.([]any); ok {
		res.Total = len(arr)
		start := min(offset, len(arr))
		end := min(start+limit, len(arr))
		cleaned, deep := cleanReport(arr[start:end])
		items, n, cut := fitItems(cleaned.([]any), MaxBodyBytes, at, start)
		out, res.Truncated = items, cut || deep
		if next := start + n; next < len(arr) {
			res.NextOffset = &next
		}
	} else {
		if offset > 0 {
			return ReadResult{}, fmt.Errorf("offset pages arrays only, and the value at %s is %s; point at an array (for example /items)", pointerName(at), kind(sel))
		}
		cleaned, deep := cleanReport(sel)
		var cut bool
		out, cut = fitValue(cleaned, MaxBodyBytes, at)
		res.Truncated = cut || deep
	}
	b, err := marshal(out)
	if err != nil {
		return ReadResult{}, fmt.Errorf("romm_api_read: encode the answer: %w", err)
	}
	res.Body = b
	if res.Truncated {
		res.Note = fmt.Sprintf("cut to %d KiB: select a part with pointer (values shown as <cut …> name theirs), ask for a smaller limit, or use the operation's own filters", MaxBodyBytes>>10)
	}
	return res, nil
}

func pointerName(at string) string {
	if at == "" {
		return "the top"
	}
	return at
}
