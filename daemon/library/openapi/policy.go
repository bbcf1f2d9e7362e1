package openapi

import (
	_ "embed"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// reviewedFile is the allow-list generated from RomM 5.3.1's document by classify and read line by
// line before it was committed (go test -run TestAllowList -update). It is embedded so that the
// reviewed file itself, not code that could drift from it, is what the binary enforces.
//
//go:embed testdata/allowed-operations-5.3.1.txt
var reviewedFile string

// reviewedVersion names the RomM release the allow-list was reviewed against, for reasons.
const reviewedVersion = "5.3.1"

type reviewedOp struct{ method, path string }

// reviewedOperations parses reviewedFile: "METHOD PATH OPERATION_ID" per line, # comments.
func reviewedOperations() (map[string]reviewedOp, error) {
	out := map[string]reviewedOp{}
	for n, line := range strings.Split(reviewedFile, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "GET" || !validID(f[2]) {
			return nil, fmt.Errorf("allow-list line %d %q: want GET /path operation_id; regenerate it with go test -update", n+1, line)
		}
		if _, ok := parseTemplate(f[1]); !ok {
			return nil, fmt.Errorf("allow-list line %d: bad path %q", n+1, f[1])
		}
		out[f[2]] = reviewedOp{method: f[0], path: f[1]}
	}
	return out, nil
}

// decide is the whole run decision: the operation must pass classify on what the live document
// says now AND be in the reviewed list with the same method and path. The live document can
// therefore only take permissions away: relabelling a users route as "roms" does not put its id
// or path in the reviewed list.
func decide(o *operation, reviewed map[string]reviewedOp) (bool, string) {
	if ok, reason := classify(o.Method, o.Path, o.ID, o.rawTags, o.responses); !ok {
		return false, reason
	}
	r, ok := reviewed[o.ID]
	if !ok {
		return false, "not in the allow-list reviewed for RomM " + reviewedVersion + " (new operations are refused until reviewed)"
	}
	if r.method != o.Method || r.path != o.Path {
		return false, fmt.Sprintf("the server declares it as %s %s, but it was reviewed as %s %s", o.Method, o.Path, r.method, r.path)
	}
	return true, ""
}

// allowedTags are the tags whose GETs read the library catalogue itself: no other household
// member's data, no credentials, no side effects.
var allowedTags = map[string]bool{
	"platforms": true, "roms": true, "collections": true, "stats": true, "firmware": true, "recommendations": true,
}

// deniedTags are the tags of RomM 5.3.1 whose GETs are refused, each with why.
var deniedTags = map[string]string{
	"users":         "exposes other household members' data (accounts, e-mail, roles)",
	"client-tokens": "exposes API tokens and pairing codes",
	"config":        "exposes the server's configuration",
	"permissions":   "exposes other household members' permissions",
	"devices":       "exposes household members' registered devices",
	"auth":          "login and OIDC routes start sessions (side effects)",
	"device-auth":   "device pairing hands out codes and tokens",
	"tasks":         "server tasks are administration (and some GETs report internals)",
	"logs":          "server logs may contain other household members' data and secrets",
	"feeds":         "download feeds for other clients (file links, content)",
	"search":        "queries outside metadata providers (IGDB, ScreenScraper…): side effects and rate limits",
	"streaming":     "streaming sessions and containers: other members' sessions and server internals",
	"sync":          "device sync sessions of household members",
	"saves":         "players' save files: other household members' data and content downloads",
	"states":        "players' save states: other household members' data and content downloads",
	"screenshots":   "players' screenshots: other household members' data and content downloads",
	"memory-cards":  "players' memory cards: other household members' data and content downloads",
	"netplay":       "netplay rooms of other players",
	"music":         "music library and personal playlists have not been reviewed for this assistant",
	"activity":      "exposes household members' activity",
	"play-sessions": "exposes household members' play history",
	"export":        "writes export files on the server (side effects)",
	"upload":        "uploads ROMs (writes)",
	"system":        "only GET /api/heartbeat of the system routes is reviewed (the others probe providers or setup)",
}

// classify applies the rules the allow-list was generated with. It looks only at the operation as
// declared; decide adds the check against the reviewed list.
func classify(method, path, id string, tags []string, responses map[string]any) (bool, string) {
	if method != "GET" {
		return false, "only GET operations run; " + method + " is not read-only"
	}
	if !strings.HasPrefix(path, "/api/") {
		return false, "outside /api/"
	}
	heartbeat := path == "/api/heartbeat"
	if !heartbeat {
		for _, t := range tags {
			if why, ok := deniedTags[t]; ok {
				return false, "tag " + t + " " + why
			}
		}
	}
	if loginRoute(path) {
		return false, "login, token and OIDC routes have side effects (sessions, redirects)"
	}
	if path == "/api/roms/filters" {
		return false, "it hangs RomM 5.0.0 (a cartesian query); GET /api/roms returns filter_values instead"
	}
	if slices.Contains(strings.Split(path, "/"), "notes") {
		return false, "ROM notes carry other household members' names and text (the data Cabinet removes from all_user_notes)"
	}
	if contentRoute(path, id) {
		return false, "content route: it downloads files, not JSON metadata"
	}
	if ok, why := jsonResponse(responses); !ok {
		return false, why
	}
	if heartbeat {
		return true, ""
	}
	if len(tags) == 0 {
		return false, "untagged operation: not reviewed"
	}
	for _, t := range tags {
		if !allowedTags[t] {
			return false, "tag " + t + " has not been reviewed"
		}
	}
	return true, ""
}

func loginRoute(path string) bool {
	for _, p := range []string{"/api/login", "/api/logout", "/api/oauth", "/api/token", "/api/auth"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// contentRoute spots file downloads by path or id: FastAPI declares them application/json.
func contentRoute(path, id string) bool {
	for _, seg := range strings.Split(path, "/") {
		if seg == "content" || seg == "download" || seg == "downloads" {
			return true
		}
	}
	return strings.HasPrefix(id, "download_") || strings.Contains(id, "_download_")
}

// jsonResponse checks that the success response is declared as JSON with a schema. FastAPI marks
// a FileResponse or StreamingResponse with an empty schema ({}), so an empty one counts as a file.
func jsonResponse(responses map[string]any) (bool, string) {
	var success map[string]any
	for _, code := range sortedKeys(responses) {
		if strings.HasPrefix(code, "2") {
			success, _ = responses[code].(map[string]any)
			break
		}
	}
	if success == nil {
		return false, "no success response is declared"
	}
	content, _ := success["content"].(map[string]any)
	if len(content) == 0 {
		return false, "the success response declares no content"
	}
	for _, mt := range sortedKeys(content) {
		if !jsonMediaType(mt) {
			return false, "the response is " + mt + ", not JSON (a file or stream)"
		}
		media, _ := content[mt].(map[string]any)
		schema, _ := media["schema"].(map[string]any)
		if len(schema) == 0 {
			return false, "the response schema is empty, FastAPI's mark of a file or streaming response"
		}
	}
	return true, ""
}

func jsonMediaType(mt string) bool {
	mt = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// queryPolicy returns the query parameters of an allowed operation that are refused even though
// declared (with why), and the values sent when the caller leaves a parameter out.
func queryPolicy(id string) (refused map[string]string, defaults url.Values) {
	switch id {
	case "get_recommendations_api_recommendations_get":
		return map[string]string{"refresh": "refresh makes the server re-rank its cached feed; leave it out to read the cached one"}, nil
	case "get_roms_api_roms_get":
		// Each of these defaults to true on the server and can add hundreds of KB (romm-api.md §5.1).
		return nil, url.Values{"with_char_index": {"false"}, "with_filter_values": {"false"}, "with_rom_id_index": {"false"}}
	}
	return nil, nil
}

// redactedKeys are removed from every response of an allowed operation, and from the schemas
// Describe shows. RomM 5.3's DetailedRomSchema (GET /api/roms/{id}, by-hash, by-metadata-provider)
// embeds the "community" view of a game: every household member's saves, states, screenshots and
// notes with their usernames, the same data the saves/states/screenshots tags are refused for.
var redactedKeys = map[string]bool{
	"all_user_saves": true, "all_user_states": true, "all_user_screenshots": true, "all_user_notes": true,
	"all_user_memory_cards": true,
}

// redact deletes redactedKeys members at any depth of decoded JSON, in place: the caller owns it.
func redact(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if redactedKeys[k] {
				delete(x, k)
				continue
			}
			redact(e)
		}
	case []any:
		for _, e := range x {
			redact(e)
		}
	}
}

// redactSchema removes redactedKeys from a schema object's properties and required list (s is a
// copy the resolver made).
func redactSchema(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		for k := range props {
			if redactedKeys[k] {
				delete(props, k)
			}
		}
	}
	if req, ok := s["required"].([]any); ok {
		s["required"] = slices.DeleteFunc(req, func(e any) bool { k, _ := e.(string); return redactedKeys[k] })
	}
}
