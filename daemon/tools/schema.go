package tools

import "github.com/mark3labs/mcp-go/mcp"

// Tool schemas are written out here rather than generated from Go types:
// the contract needs bounds (enums, minimum/maximum, maxLength, patterns)
// and nullable fields that generated schemas lack, and snapshot files in
// testdata/toolsnaps freeze the result. Output schemas forbid unknown
// properties, so a result that drifts from its schema fails the tests
// (the server validates every structured result against its schema).

// js is one JSON schema node.
type js = map[string]any

// prop is a named property of an object schema.
type prop struct {
	name     string
	schema   js
	required bool
}

func req(name string, s js) prop { return prop{name: name, schema: s, required: true} }
func opt(name string, s js) prop { return prop{name: name, schema: s} }

// mod modifies a schema node.
type mod func(js)

func apply(s js, mods []mod) js {
	for _, m := range mods {
		m(s)
	}
	return s
}

func desc(d string) mod            { return func(s js) { s["description"] = d } }
func maxLen(n int) mod             { return func(s js) { s["maxLength"] = n } }
func minLen(n int) mod             { return func(s js) { s["minLength"] = n } }
func pattern(p string) mod         { return func(s js) { s["pattern"] = p } }
func minimum(n int) mod            { return func(s js) { s["minimum"] = n } }
func maximum(n int) mod            { return func(s js) { s["maximum"] = n } }
func defaultValue(v any) mod       { return func(s js) { s["default"] = v } }
func maxItems(n int) mod           { return func(s js) { s["maxItems"] = n } }
func enum(vals ...string) mod      { return func(s js) { s["enum"] = vals } }
func node(t string, mods []mod) js { return apply(js{"type": t}, mods) }

func str(d string, mods ...mod) js     { return node("string", append([]mod{desc(d)}, mods...)) }
func integer(d string, mods ...mod) js { return node("integer", append([]mod{desc(d)}, mods...)) }
func number(d string, mods ...mod) js  { return node("number", append([]mod{desc(d)}, mods...)) }
func boolean(d string, mods ...mod) js { return node("boolean", append([]mod{desc(d)}, mods...)) }

func array(d string, items js, mods ...mod) js {
	return apply(js{"type": "array", "description": d, "items": items}, mods)
}

// object is a closed object schema with the given properties.
func object(d string, props ...prop) js {
	p, _, required := properties(props) // nested objects are emitted in sorted key order
	s := js{"type": "object", "properties": p, "additionalProperties": false}
	if d != "" {
		s["description"] = d
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// nullable lets s also be null; an enum gains null too.
func nullable(s js) js {
	s["type"] = []string{s["type"].(string), "null"}
	if e, ok := s["enum"].([]string); ok {
		vals := make([]any, 0, len(e)+1)
		for _, v := range e {
			vals = append(vals, v)
		}
		s["enum"] = append(vals, nil)
	}
	return s
}

func properties(props []prop) (map[string]any, []string, []string) {
	p := make(map[string]any, len(props))
	order := make([]string, 0, len(props))
	var required []string
	for _, x := range props {
		if _, dup := p[x.name]; dup {
			panic("tools: duplicate schema property " + x.name) // a typo in a tool definition
		}
		p[x.name] = x.schema
		order = append(order, x.name)
		if x.required {
			required = append(required, x.name)
		}
	}
	return p, order, required
}

// withInput sets a tool's closed input schema.
func withInput(props ...prop) mcp.ToolOption {
	return func(t *mcp.Tool) {
		p, order, required := properties(props)
		t.InputSchema = mcp.ToolInputSchema{Type: "object", Properties: p, Required: required,
			AdditionalProperties: false, PropertyOrder: order}
	}
}

// withOutput sets a tool's closed output schema.
func withOutput(props ...prop) mcp.ToolOption {
	return func(t *mcp.Tool) {
		p, order, required := properties(props)
		t.OutputSchema = mcp.ToolOutputSchema{Type: "object", Properties: p, Required: required,
			AdditionalProperties: false, PropertyOrder: order}
	}
}

// actionProps are the fields of every action result.
func actionProps(extra ...prop) []prop {
	return append([]prop{
		req("cabinet", str("The cabinet's name.")),
		req("outcome", str("done: it was done; unchanged: it already was so and nothing was sent; "+
			"dry_run: nothing was sent, sent lists what would have been.", enum(outcomeDone, outcomeUnchanged, outcomeDryRun))),
		req("detail", str("What happened, in one sentence.")),
		req("sent", array("The requests sent, exactly as they went on the wire (or would have, in a dry run).",
			str("One request, e.g. \"POST /launch /userdata/roms/mame/galaga.zip\" or \"UDP PAUSE_TOGGLE\"."))),
		req("warnings", array("Things worth knowing that did not stop the action.", str("One warning."))),
	}, extra...)
}
