package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/openapi"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// APIIndexLoader returns the RomM server's operation index (its own
// /openapi.json, fetched once per version and cached).
type APIIndexLoader func(ctx context.Context) (*openapi.Index, error)

// VersionedAPIIndex loads the operation index of the RomM version that
// answers now: each version's document is fetched once and cached in dir.
func VersionedAPIIndex(dir string, c interface {
	Version(ctx context.Context) (romm.Version, error)
	OpenAPI(ctx context.Context) ([]byte, error)
}) APIIndexLoader {
	var mu sync.Mutex
	loaders := map[string]func(context.Context) (*openapi.Index, error){}
	return func(ctx context.Context) (*openapi.Index, error) {
		v, err := c.Version(ctx)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		load, ok := loaders[v.Raw]
		if !ok {
			load = openapi.LoadCached(dir, v.Raw, c.OpenAPI)
			loaders[v.Raw] = load
		}
		mu.Unlock()
		return load(ctx)
	}
}

type apiListArgs struct {
	Query string `json:"query"`
}

type apiListResult struct {
	Version    string              `json:"version"`
	Operations []openapi.Operation `json:"operations"`
}

func operationProps() js {
	return object("",
		req("operation_id", str("The operation's id (romm_api_describe and romm_api_read take it).")),
		req("method", str("HTTP method.")),
		req("path", str("Path template.")),
		opt("summary", str("RomM's summary.")),
		opt("tags", array("RomM's tags.", str("A tag."))),
		req("allowed", boolean("romm_api_read may run it.")),
		opt("reason", str("Why it is refused.")),
	)
}

func (l libraryTools) apiListTool(load APIIndexLoader) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romm_api_list", "Search RomM's API",
		"Search the operations of this RomM server's own API (its /openapi.json) by words of their id, path, summary "+
			"or tags. Only reads of the game library (platforms, ROMs, collections, stats, firmware, recommendations) "+
			"may run; users, tokens, saves, states, screenshots, tasks, logs and anything that changes or streams are "+
			"refused, and each refused operation says why. Use it for what the other library tools do not cover.",
		reads, true,
		withInput(opt("query", str("Words to look for; empty lists the operations, allowed first.", maxLen(200)))),
		withOutput(
			req("version", str("The RomM version the document describes.")),
			req("operations", array("Matching operations, allowed first (at most 50).", operationProps())),
		))
	return t, typed(func(ctx context.Context, a apiListArgs) (apiListResult, error) {
		ix, err := load(ctx)
		if err != nil {
			return apiListResult{}, rommFailure("read RomM's API document", err)
		}
		return apiListResult{Version: ix.Version(), Operations: ix.Search(a.Query, 50)}, nil
	})
}

func (r apiListResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d operation(s) of RomM %s:", len(r.Operations), r.Version)
	for _, o := range r.Operations {
		fmt.Fprintf(&b, "\n- %s %s %s", o.ID, o.Method, o.Path)
		if !o.Allowed {
			fmt.Fprintf(&b, " (refused: %s)", o.Reason)
		}
	}
	return b.String()
}

type apiDescribeArgs struct {
	OperationID string `json:"operation_id"`
}

type apiDescribeResult struct {
	Operation   openapi.Operation `json:"operation"`
	Description string            `json:"description"`
	Parameters  []openapi.Param   `json:"parameters"`
	Response    json.RawMessage   `json:"response"`
	ResponseCut bool              `json:"response_cut"`
}

func (l libraryTools) apiDescribeTool(load APIIndexLoader) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romm_api_describe", "Describe a RomM API operation",
		"One operation of RomM's API: what it does, its path and query parameters (types, required, allowed values) "+
			"and the schema of its answer, references resolved (deep or cyclic parts are cut and marked).",
		reads, true,
		withInput(req("operation_id", str("The operation's id (from romm_api_list).", minLen(1), maxLen(200)))),
		withOutput(
			req("operation", operationProps()),
			req("description", str("RomM's description, capped.")),
			req("parameters", array("Parameters.", object("",
				req("name", str("Name.")),
				req("in", str("path or query (header and cookie parameters are never sent).")),
				req("type", str("JSON type.")),
				opt("items", str("Item type of an array.")),
				opt("format", str("Format.")),
				req("required", boolean("Required.")),
				opt("description", str("Description.")),
				opt("enum", array("Allowed values.", str("A value."))),
			))),
			req("response", object("The answer's JSON schema, references resolved.")),
			req("response_cut", boolean("Parts of the schema were cut (too deep or too large).")),
		))
	// The resolved schema is open-ended: let any object through.
	t.OutputSchema.Properties["response"] = js{"type": []string{"object", "array", "string", "number", "boolean", "null"},
		"description": "The answer's JSON schema, references resolved."}
	return t, typed(func(ctx context.Context, a apiDescribeArgs) (apiDescribeResult, error) {
		ix, err := load(ctx)
		if err != nil {
			return apiDescribeResult{}, rommFailure("read RomM's API document", err)
		}
		d, err := ix.Describe(a.OperationID)
		if err != nil {
			return apiDescribeResult{}, refuse("%s", untrusted.Clean(err.Error(), maxErrorRunes))
		}
		res := apiDescribeResult{Operation: d.Operation, Description: d.Description, Parameters: d.Parameters,
			Response: d.Response, ResponseCut: d.ResponseCut}
		if res.Parameters == nil {
			res.Parameters = []openapi.Param{}
		}
		if len(res.Response) == 0 {
			res.Response = json.RawMessage("null")
		}
		return res, nil
	})
}

func (r apiDescribeResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s)", r.Operation.Method, r.Operation.Path, r.Operation.ID)
	if !r.Operation.Allowed {
		fmt.Fprintf(&b, ": refused, %s", r.Operation.Reason)
	}
	if r.Description != "" {
		b.WriteString("\n" + r.Description)
	}
	for _, p := range r.Parameters {
		req := ""
		if p.Required {
			req = ", required"
		}
		fmt.Fprintf(&b, "\n- %s (%s, %s%s)", p.Name, p.In, p.Type, req)
	}
	return b.String()
}

type apiReadArgs struct {
	OperationID string            `json:"operation_id"`
	Path        map[string]string `json:"path"`
	Query       map[string]any    `json:"query"`
	Pointer     string            `json:"pointer"`
	Offset      int               `json:"offset"`
	Limit       int               `json:"limit"`
}

type apiReadResult struct {
	Status     int             `json:"status"`
	Body       json.RawMessage `json:"body"`
	NextOffset *int            `json:"next_offset"`
	Truncated  bool            `json:"truncated"`
	Total      int             `json:"total"`
	Note       string          `json:"note,omitempty"`
}

func (l libraryTools) apiReadTool(load APIIndexLoader) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romm_api_read", "Read from RomM's API",
		"Run one allowed read of RomM's API (romm_api_list says which) with its path and query parameters, and get "+
			"the JSON answer: pointer (RFC 6901, e.g. /items) selects a part, an array is paged with offset and "+
			"limit (next_offset continues), and a long answer is cut (truncated says so: narrow it with pointer). "+
			"No URL, header or path outside the operation can be given.",
		reads, true,
		withInput(
			req("operation_id", str("The operation's id (from romm_api_list).", minLen(1), maxLen(200))),
			opt("path", js{"type": "object", "description": "Path parameters by name.", "maxProperties": 8,
				"additionalProperties": js{"type": "string", "maxLength": 200}}),
			opt("query", js{"type": "object", "description": "Query parameters by name: a value, or a list for a repeated parameter.",
				"maxProperties": 32, "additionalProperties": js{"type": []string{"string", "integer", "number", "boolean", "array"},
					"maxLength": 200, "maxItems": 50, "items": js{"type": []string{"string", "integer", "number", "boolean"}, "maxLength": 200}}}),
			opt("pointer", str("RFC 6901 JSON pointer into the answer, e.g. /items or /items/0/name.", maxLen(500))),
			opt("offset", integer("First item of the selected array.", minimum(0), maximum(1_000_000), defaultValue(0))),
			opt("limit", integer("Items of the selected array.", minimum(1), maximum(openapi.MaxLimit), defaultValue(openapi.DefaultLimit))),
		),
		withOutput(
			req("status", integer("RomM's HTTP status.")),
			req("body", js{"description": "The selected part of the answer (cleaned, bounded)."}),
			req("next_offset", nullable(integer("offset of the next page of the selected array, null at the end."))),
			req("truncated", boolean("The answer was cut to fit: select a smaller part with pointer.")),
			req("total", integer("Items in the selected array (0 when it is not one).")),
			opt("note", str("What Cabinet did to the request or answer (defaults it set, parts it removed).")),
		))
	return t, typed(func(ctx context.Context, a apiReadArgs) (apiReadResult, error) {
		ix, err := load(ctx)
		if err != nil {
			return apiReadResult{}, rommFailure("read RomM's API document", err)
		}
		query, err := queryValues(a.Query)
		if err != nil {
			return apiReadResult{}, err
		}
		r, err := ix.Read(ctx, l.lib.RomM.Get, openapi.ReadRequest{OperationID: a.OperationID, Path: a.Path, Query: query,
			Pointer: a.Pointer, Offset: a.Offset, Limit: a.Limit})
		if err != nil {
			if ctx.Err() != nil {
				return apiReadResult{}, rommFailure("read from RomM", ctx.Err())
			}
			return apiReadResult{}, refuse("%s", untrusted.Clean(err.Error(), maxErrorRunes))
		}
		return apiReadResult{Status: r.Status, Body: r.Body, NextOffset: r.NextOffset, Truncated: r.Truncated, Total: r.Total, Note: r.Note}, nil
	})
}

// queryValues turns the tool's query object into repeated string values.
func queryValues(q map[string]any) (map[string][]string, error) {
	out := make(map[string][]string, len(q))
	for k, v := range q {
		switch x := v.(type) {
		case []any:
			for _, item := range x {
				s, err := scalarText(k, item)
				if err != nil {
					return nil, err
				}
				out[k] = append(out[k], s)
			}
		default:
			s, err := scalarText(k, x)
			if err != nil {
				return nil, err
			}
			out[k] = []string{s}
		}
	}
	return out, nil
}

func scalarText(name string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return fmt.Sprint(x), nil
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x)), nil
		}
		return fmt.Sprint(x), nil
	}
	return "", refuse("query parameter %s: want a string, number or boolean, or a list of them.", untrusted.Clean(name, maxIdent))
}

func (r apiReadResult) text() string {
	s := fmt.Sprintf("RomM answered %d", r.Status)
	if r.Total > 0 {
		s += fmt.Sprintf(" (%d items)", r.Total)
	}
	s += ":\n" + string(r.Body)
	if r.NextOffset != nil {
		s += fmt.Sprintf("\nMore: offset %d.", *r.NextOffset)
	}
	if r.Truncated {
		s += "\n(cut: select a smaller part with pointer)"
	}
	if r.Note != "" {
		s += "\nNote: " + r.Note
	}
	return s
}
