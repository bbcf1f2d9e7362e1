package openapi

import (
	"encoding/json"
	"slices"
	"strings"
)

// Bounds on Describe's resolved schemas: RomM's DetailedRomSchema alone expands past 100 KB.
const (
	maxSchemaBytes = 32 << 10
	maxRefDepth    = 6
	maxParamName   = 100
)

// Param is one parameter of an operation as Describe shows it. Type is integer, number, boolean,
// string or array (alternatives joined by "|"); Items is the element type of an array.
type Param struct {
	Name        string   `json:"name"`
	In          string   `json:"in"`
	Type        string   `json:"type"`
	Items       string   `json:"items,omitempty"`
	Format      string   `json:"format,omitempty"`
	Required    bool     `json:"required"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum,omitempty"`
}

// Description is one operation with its parameters and its success response schema, $refs
// resolved. Response is JSON null when the operation declares no JSON response. ResponseCut
// says some $refs were left as {"$ref": …, "x-cut": "cycle"|"depth"|"size"} to stay bounded.
type Description struct {
	Operation
	Description string          `json:"description,omitempty"`
	Parameters  []Param         `json:"parameters"`
	Response    json.RawMessage `json:"response_schema"`
	ResponseCut bool            `json:"response_cut,omitempty"`
}

// Describe returns the operation with its parameters and resolved response schema.
func (ix *Index) Describe(id string) (Description, error) {
	o, err := ix.lookup(id)
	if err != nil {
		return Description{}, err
	}
	d := Description{Operation: o.public(), Description: o.description, Parameters: []Param{}}
	refused, defaults := queryPolicy(o.ID)
	for _, p := range o.params {
		pub := p.Param
		pub.Enum = append([]string(nil), p.Enum...)
		if why, ok := refused[p.Name]; ok && p.In == "query" {
			pub.Description = strings.TrimSpace(pub.Description + " (refused by Cabinet: " + why + ")")
		} else if v, ok := defaults[p.Name]; ok && p.In == "query" {
			pub.Description = strings.TrimSpace(pub.Description + " (Cabinet sends " + strings.Join(v, ",") + " unless you set it)")
		}
		d.Parameters = append(d.Parameters, pub)
	}
	d.Response, d.ResponseCut = ix.responseSchema(o)
	return d, nil
}

// responseSchema resolves the JSON schema of the first 2xx response, bounded and cleaned.
func (ix *Index) responseSchema(o *operation) (json.RawMessage, bool) {
	null := json.RawMessage("null")
	var schema any
	for _, code := range sortedKeys(o.responses) {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		resp, _ := ix.deref(o.responses[code])["content"].(map[string]any)
		for _, mt := range sortedKeys(resp) {
			if media, ok := resp[mt].(map[string]any); ok && jsonMediaType(mt) {
				schema = media["schema"]
				break
			}
		}
		break
	}
	if schema == nil {
		return null, false
	}
	r := &resolver{root: ix.root, budget: maxSchemaBytes, sizes: map[string]int{}}
	out, err := marshalClean(r.walk(schema, nil))
	if err != nil || len(out) > 2*maxSchemaBytes {
		// The inline schema alone is too large; say so rather than cutting JSON mid-way.
		return json.RawMessage(`{"x-cut":"size"}`), true
	}
	return out, r.cut
}

// resolver expands local $refs under a byte budget, cutting cycles and deep chains with markers.
type resolver struct {
	root   any
	budget int
	cut    bool
	sizes  map[string]int
}

func (r *resolver) walk(v any, stack []string) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			return r.expand(ref, stack)
		}
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) { // sorted: the budget must cut the same refs every time
			if k == "properties" {
				if props, ok := x[k].(map[string]any); ok {
					out[k] = r.properties(props, stack)
					continue
				}
			}
			out[k] = r.walk(x[k], stack)
		}
		redactSchema(out)
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.walk(e, stack)
		}
		return out
	}
	return v
}

// properties walks a properties object, leaving out redacted members before their (often large)
// schemas are expanded against the budget.
func (r *resolver) properties(props map[string]any, stack []string) map[string]any {
	out := make(map[string]any, len(props))
	for _, k := range sortedKeys(props) {
		if !redactedKeys[k] {
			out[k] = r.walk(props[k], stack)
		}
	}
	return out
}

func (r *resolver) expand(ref string, stack []string) any {
	marker := func(why string) any {
		r.cut = true
		return map[string]any{"$ref": ref, "x-cut": why}
	}
	if slices.Contains(stack, ref) {
		return marker("cycle")
	}
	if len(stack) >= maxRefDepth {
		return marker("depth")
	}
	target, err := resolveRef(r.root, ref)
	if err != nil {
		return marker("unresolvable")
	}
	size, ok := r.sizes[ref]
	if !ok {
		b, _ := json.Marshal(target)
		size = len(b)
		r.sizes[ref] = size
	}
	if size > r.budget {
		return marker("size")
	}
	r.budget -= size
	out := r.walk(target, append(stack[:len(stack):len(stack)], ref))
	if m, ok := out.(map[string]any); ok {
		m["x-ref"] = ref // keep the name: the model sees which schema this is
	}
	return out
}

// resolveRef follows a local reference ("#/components/schemas/X").
func resolveRef(root any, ref string) (any, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, errNotLocal
	}
	if u, err := urlUnescapeFragment(frag); err == nil {
		frag = u
	}
	tokens, err := parsePointer(frag)
	if err != nil {
		return nil, err
	}
	return selectPointer(root, tokens)
}

// deref follows $refs (at most maxRefDepth) and returns the object reached, or nil.
func (ix *Index) deref(v any) map[string]any {
	for range maxRefDepth {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		t, err := resolveRef(ix.root, ref)
		if err != nil {
			return nil
		}
		v = t
	}
	return nil
}
