package romm

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
)

// Bounds on what a caller of Get may ask for.
const (
	maxPathLen   = 1024
	maxQueryLen  = 4096
	maxQueryKeys = 100
)

// Get is a bounded GET for the OpenAPI tools. path must start with /api/ (escaped form, no query);
// query is the caller's. The same auth, bounds, redirect and error rules as the typed calls apply:
// 401/403, HTML, non-JSON 2xx bodies and oversize bodies are errors; any other status comes back
// with its JSON body (bounded, not cleaned: the caller selects and cleans). On /api/roms the index
// switches that RomM computes by default are turned off unless the caller set them.
func (c *Client) Get(ctx context.Context, path string, query url.Values) (status int, body []byte, err error) {
	r, err := genericRequest(path, query)
	if err != nil {
		return 0, nil, err
	}
	if r.path != "/api/heartbeat" {
		v, err := c.require(ctx, "this route", 4, 0)
		if err != nil {
			return 0, nil, err
		}
		r.version = v
		if r.path == "/api/roms" {
			cheapFlags(v, r.query)
		}
	} else {
		r.noAuth = true
	}
	status, body, err = c.do(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	if !json.Valid(body) {
		if status >= 200 && status <= 299 {
			return 0, nil, newError(ErrNotRomM, nil, "%s answered with something that is not JSON: this route is not one the cabinet can read (downloads and files are not JSON)", r.route())
		}
		return 0, nil, c.statusError(r, status, nil)
	}
	return status, body, nil
}

// genericRequest checks a caller's path and query. The path is compared segment by segment after
// unescaping so that neither "..", "%2e%2e" nor an escaped slash can step outside /api/.
func genericRequest(path string, query url.Values) (request, error) {
	bad := func(why string) (request, error) {
		return request{}, newError(ErrInvalid, nil, "RomM path %q %s: give a path from RomM's /openapi.json, such as /api/platforms", cleanLine(path, 100), why)
	}
	if len(path) > maxPathLen {
		return bad("is too long")
	}
	if !strings.HasPrefix(path, "/api/") || len(path) == len("/api/") {
		return bad("does not start with /api/")
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c <= ' ' || c >= 0x7f || c == '?' || c == '#' || c == '\\' {
			return bad("holds a character a path cannot have")
		}
	}
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return bad("has a broken %-escape")
	}
	rawSegs, segs := strings.Split(path, "/"), strings.Split(unescaped, "/")
	if len(rawSegs) != len(segs) {
		return bad("has an escaped slash")
	}
	for i, s := range segs {
		if i > 0 && s == "" && i != len(segs)-1 || s == "." || s == ".." {
			return bad("has an empty, . or .. segment")
		}
		for j := 0; j < len(s); j++ {
			if s[j] < ' ' || s[j] == 0x7f {
				return bad("holds an escaped control character")
			}
		}
	}
	q := url.Values{}
	n := 0
	for k, vs := range query {
		n++
		if n > maxQueryKeys {
			return request{}, newError(ErrInvalid, nil, "query has more than %d parameters", maxQueryKeys)
		}
		q[k] = append([]string(nil), vs...)
	}
	if len(q.Encode()) > maxQueryLen {
		return request{}, newError(ErrInvalid, nil, "query is longer than %d bytes: ask for less", maxQueryLen)
	}
	r := request{path: unescaped, query: q, max: maxJSON, shape: &genericJSON}
	if unescaped != path {
		r.rawPath = path
	}
	return r, nil
}

// OpenAPI fetches RomM's own OpenAPI document (/openapi.json at the root, open). It is checked to
// be a JSON object and is at most 8 MiB.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	r := request{path: "/openapi.json", noAuth: true, max: maxOpenAPI, shape: &openAPIJSON,
		notFound: "RomM serves no /openapi.json at " + c.base.Redacted() + ": is cabinet.romm.url the RomM address?"}
	body, err := c.fetch(ctx, r)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, newError(ErrNotRomM, nil, "RomM's /openapi.json is not a JSON document: is cabinet.romm.url the RomM address?")
	}
	return body, nil
}

// Probes: one cheap read per scope the library tools need. RomM cannot list a token's scopes
// (romm-api.md §3.4), so trying is the only way to know.
var probes = []struct {
	scope string
	path  string
	query url.Values
}{
	{"platforms.read", "/api/platforms", nil},
	{"roms.read", "/api/roms", url.Values{"limit": {"1"}}},
	{"collections.read", "/api/collections", nil},
}

// ProbeScopes tries one read per scope and returns scope → nil (works) or the error (a
// *ScopeError / ErrUnauthorized, or whatever else stopped it). It never writes.
func (c *Client) ProbeScopes(ctx context.Context) map[string]error {
	out := make(map[string]error, len(probes))
	v, err := c.require(ctx, "these routes", 4, 0)
	if err != nil {
		for _, p := range probes {
			out[p.scope] = err
		}
		return out
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := url.Values{}
			for k, vs := range p.query {
				q[k] = vs
			}
			if p.path == "/api/roms" {
				cheapFlags(v, q)
			}
			_, err := c.fetch(ctx, request{path: p.path, query: q, max: maxJSON, scope: p.scope, version: v})
			mu.Lock()
			out[p.scope] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
