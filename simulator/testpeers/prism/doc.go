package prism

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxDoc bounds a document read by PatchedDoc.
const maxDoc = 32 << 20

// detailSchema is an HTTPException body, {"detail": "..."}, which is what
// FastAPI sends for every error it raises that is not a 422.
var detailSchema = map[string]any{
	"type":       "object",
	"required":   []any{"detail"},
	"properties": map[string]any{"detail": map[string]any{"type": "string"}},
}

// PatchedDoc writes a copy of the OpenAPI document src into t's temporary
// directory and returns its path, with what Prism needs to judge a RomM
// answer on its merits:
//
//   - SystemDict.VERSION gets version as its example, so `prism mock`
//     answers the heartbeat with a version instead of "string";
//   - every secured operation documents 401 (with WWW-Authenticate) and
//     403, which RomM answers (decorators/auth.py) but FastAPI's document
//     leaves out, so they are validated instead of passed with a warning;
//   - every 4xx response without a body schema (RomM's bare "Not Found"),
//     and a 404 on every operation with a path parameter, gets the
//     {"detail": string} schema of FastAPI's HTTPException.
func PatchedDoc(t testing.TB, src, version string) string {
	t.Helper()
	out, err := patchDoc(src, version)
	if err != nil {
		t.Fatalf("prism: patch %s: %v", src, err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatalf("prism: write patched document: %v", err)
	}
	return p
}

func patchDoc(src, version string) ([]byte, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxDoc {
		return nil, fmt.Errorf("%d bytes, over %d", fi.Size(), maxDoc)
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	sys, ok := dig(doc, "components", "schemas", "SystemDict", "properties", "VERSION").(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no components.schemas.SystemDict.properties.VERSION: not a RomM document?")
	}
	sys["example"] = version
	sys["examples"] = []any{version}

	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			o, ok := op.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			patchOperation(p, o)
		}
	}
	return json.Marshal(doc)
}

func patchOperation(path string, o map[string]any) {
	responses, _ := o["responses"].(map[string]any)
	if responses == nil {
		responses = map[string]any{}
		o["responses"] = responses
	}
	body := func() map[string]any {
		return map[string]any{"application/json": map[string]any{"schema": detailSchema}}
	}
	if sec, _ := o["security"].([]any); len(sec) > 0 {
		if _, ok := responses["401"]; !ok {
			responses["401"] = map[string]any{
				"description": "Not authenticated (RomM 5.2+; added by simulator/testpeers/prism)",
				"headers": map[string]any{"WWW-Authenticate": map[string]any{
					"required": true, "schema": map[string]any{"type": "string"}}},
				"content": body(),
			}
		}
		if _, ok := responses["403"]; !ok {
			responses["403"] = map[string]any{"description": "Forbidden (added by simulator/testpeers/prism)", "content": body()}
		}
	}
	if _, ok := responses["404"]; !ok && strings.Contains(path, "{") {
		responses["404"] = map[string]any{"description": "Not Found (added by simulator/testpeers/prism)", "content": body()}
	}
	for code, r := range responses {
		resp, ok := r.(map[string]any)
		if !ok || !strings.HasPrefix(code, "4") || code == "422" {
			continue
		}
		if _, has := resp["content"]; !has {
			resp["content"] = body()
		}
	}
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// violation is one item of Prism's sl-violations header.
type violation struct {
	Location []any  `json:"location"`
	Severity string `json:"severity"`
	Code     any    `json:"code"`
	Message  string `json:"message"`
}

// Violations returns Prism's validation complaints about a request or
// response, from the sl-violations header Prism adds to a response it
// proxied or mocked ("Error response.body.SYSTEM: Response body property
// SYSTEM must have required property 'GIT_BRANCH'"), warnings included;
// nil when there are none.
func Violations(h http.Header) []string {
	v := h.Get("sl-violations")
	if v == "" {
		return nil
	}
	var items []violation
	if err := json.Unmarshal([]byte(v), &items); err != nil {
		return []string{"unparsable sl-violations header: " + v}
	}
	var out []string
	for _, it := range items {
		loc := make([]string, 0, len(it.Location))
		for _, l := range it.Location {
			loc = append(loc, fmt.Sprint(l))
		}
		out = append(out, fmt.Sprintf("%s %s: %s", it.Severity, strings.Join(loc, "."), it.Message))
	}
	return out
}
