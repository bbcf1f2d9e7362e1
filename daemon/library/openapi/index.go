// Package openapi owns the operation index behind the romm_api_list, romm_api_describe and
// romm_api_read tools: it parses RomM's own /openapi.json, decides which operations may run (a
// reviewed allow-list checked against the live document, default deny), resolves schemas for
// describing them, and runs an allowed GET through an injected getter with validated parameters,
// returning a selected, paged, bounded and cleaned JSON body.
//
// The server's document is untrusted: it only ever narrows what the reviewed allow-list permits,
// and every string taken from it or from a response is cleaned before it leaves this package.
package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds on the document. RomM 5.3.1's is 426 KB with 226 operations.
const (
	MaxDocumentBytes = 8 << 20
	maxOperations    = 2000
	maxIDBytes       = 200
	maxPathBytes     = 300
	maxParams        = 200
	maxTags          = 16
)

// documentLimits bounds the document's shape before it is decoded; the decoded document is kept
// for as long as the index. RomM 5.3.1's has 22,699 values (18,109 in 5.1.0), 4,307 list items,
// 93 in the longest list and nests 12 deep. A value decodes to at most ~270 bytes of maps and
// slices (TestDocumentWorstCase), so a hostile document stays under 30 MiB while RomM's own may
// grow four times. romm.Client.OpenAPI refuses over the same numbers (openAPIJSON).
var documentLimits = bounded.JSONLimits{Depth: 32, ArrayLen: 10_000, Elements: 40_000, Values: 100_000}

// Operation is one operation of the server's document as the tools show it. Every string is
// clean; Reason says why an operation is refused and is empty when Allowed.
type Operation struct {
	ID      string   `json:"operation_id"`
	Method  string   `json:"method"`
	Path    string   `json:"path"`
	Summary string   `json:"summary,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Allowed bool     `json:"allowed"`
	Reason  string   `json:"reason,omitempty"`
}

// operation is an Operation with what Describe and Read need.
type operation struct {
	Operation
	description string         // cleaned
	params      []param        // path and query parameters, in document order
	raw         map[string]any // the operation object, for its response schema
	template    []templatePart // Path split into literals and {names}
	rawTags     []string       // uncleaned, for the policy
	responses   map[string]any // the responses object
}

// Index is the parsed operation list of one document. It is read-only after Parse and safe for
// concurrent use.
type Index struct {
	version string
	root    map[string]any
	ops     []*operation // allowed first, then by path and method
	byID    map[string]*operation
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Parse reads an OpenAPI 3 document (at most MaxDocumentBytes) and classifies every operation.
// Operations without a usable id or with a path outside a plain /segment/{param} template are
// left out: they could neither be named safely nor run.
func Parse(doc []byte) (*Index, error) {
	if len(doc) > MaxDocumentBytes {
		return nil, fmt.Errorf("parse openapi: document is %d bytes, more than the %d allowed; check the server's /openapi.json", len(doc), MaxDocumentBytes)
	}
	// A document that is not JSON is left to decodeJSON, which refuses it before building anything
	// and says so.
	var le *bounded.JSONLimitError
	if err := bounded.CheckJSON(doc, documentLimits); errors.As(err, &le) && json.Valid(doc) {
		return nil, fmt.Errorf("parse openapi: the document has %s, far more than RomM's; check the server's /openapi.json",
			untrusted.Clean(le.Describe(), 300))
	}
	root, err := decodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("parse openapi: %w", err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, errors.New("parse openapi: the document is not a JSON object")
	}
	if v, _ := obj["openapi"].(string); !strings.HasPrefix(v, "3.") {
		return nil, errors.New(`parse openapi: not an OpenAPI 3 document (no "openapi": "3.x" field)`)
	}
	paths, ok := obj["paths"].(map[string]any)
	if !ok {
		return nil, errors.New(`parse openapi: the document has no "paths" object`)
	}
	reviewed, err := reviewedOperations()
	if err != nil {
		return nil, fmt.Errorf("parse openapi: %w", err)
	}
	ix := &Index{root: obj, byID: map[string]*operation{}}
	if info, ok := obj["info"].(map[string]any); ok {
		if v, ok := info["version"].(string); ok {
			ix.version = untrusted.Clean(v, 64)
		}
	}
	dup := map[string]bool{}
	for _, p := range sortedKeys(paths) {
		item, ok := paths[p].(map[string]any)
		if !ok {
			continue
		}
		tmpl, ok := parseTemplate(p)
		if !ok {
			continue
		}
		for _, m := range methods {
			raw, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			id, _ := raw["operationId"].(string)
			if !validID(id) {
				continue
			}
			if len(ix.ops) == maxOperations {
				return nil, fmt.Errorf("parse openapi: more than %d operations; this is not a RomM document", maxOperations)
			}
			o := ix.newOperation(id, strings.ToUpper(m), p, tmpl, item, raw)
			if _, seen := ix.byID[id]; seen {
				dup[id] = true
				continue
			}
			ix.byID[id] = o
			ix.ops = append(ix.ops, o)
		}
	}
	for _, o := range ix.ops {
		o.Allowed, o.Reason = decide(o, reviewed)
		if dup[o.ID] {
			o.Allowed, o.Reason = false, "the document declares this operation id more than once"
		}
	}
	sort.SliceStable(ix.ops, func(i, j int) bool {
		a, b := ix.ops[i], ix.ops[j]
		if a.Allowed != b.Allowed {
			return a.Allowed
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Method < b.Method
	})
	return ix, nil
}

func (ix *Index) newOperation(id, method, path string, tmpl []templatePart, item, raw map[string]any) *operation {
	o := &operation{template: tmpl}
	o.ID, o.Method, o.Path = id, method, path
	if s, ok := raw["summary"].(string); ok {
		o.Summary = untrusted.Clean(s, 200)
	}
	if s, ok := raw["description"].(string); ok {
		o.description = untrusted.CleanText(s, 2000)
	}
	if tags, ok := raw["tags"].([]any); ok {
		for _, t := range tags {
			if s, ok := t.(string); ok && len(o.rawTags) < maxTags {
				o.rawTags = append(o.rawTags, s)
				o.Tags = append(o.Tags, untrusted.Clean(s, 64))
			}
		}
	}
	o.responses, _ = raw["responses"].(map[string]any)
	o.params = ix.parseParams(item["parameters"], raw["parameters"])
	return o
}

// Version is the document's info.version, cleaned ("" when absent).
func (ix *Index) Version() string { return ix.version }

// Len is the number of operations in the index.
func (ix *Index) Len() int { return len(ix.ops) }

// Search returns up to limit operations (default 50, at most 200) whose id, path, summary or tags
// contain every word of query, case-insensitively; an empty query matches all. Allowed operations
// come first.
func (ix *Index) Search(query string, limit int) []Operation {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	words := strings.Fields(strings.ToLower(untrusted.Clean(query, 200)))
	out := []Operation{}
	for _, o := range ix.ops {
		if len(out) == limit {
			break
		}
		hay := strings.ToLower(o.ID + " " + o.Method + " " + o.Path + " " + o.Summary + " " + strings.Join(o.Tags, " "))
		match := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				match = false
				break
			}
		}
		if match {
			out = append(out, o.public())
		}
	}
	return out
}

// public copies the Operation so callers cannot change the index through its Tags slice.
func (o *operation) public() Operation {
	op := o.Operation
	op.Tags = append([]string(nil), o.Tags...)
	return op
}

// lookup finds an operation by id, with an error that says where to find the ids.
func (ix *Index) lookup(id string) (*operation, error) {
	o, ok := ix.byID[id]
	if !ok {
		return nil, fmt.Errorf("unknown operation_id %q: romm_api_list shows the operations of this server", untrusted.Clean(id, 80))
	}
	return o, nil
}

// validID accepts the operation ids FastAPI generates (letters, digits, _ . -), so an id is
// always safe to show and to match exactly.
func validID(id string) bool {
	if id == "" || len(id) > maxIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// decodeJSON decodes one JSON value, keeping numbers as json.Number so large ids survive.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not JSON: data after the first value")
	}
	return v, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
