package fakeromm

import (
	"encoding/json"
	"net/http"
	"strings"
)

// call is one routed request.
type call struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	p    *params
	vars map[string]string
}

// ready answers 422 when parameters failed validation, then checks the
// caller: FastAPI validates parameters before the endpoint's scope guard
// runs (RomM's OAuth2PasswordBearer has auto_error=False), so a bad limit
// without a token is a 422, not a 401.
func (c *call) ready(scope string) bool {
	if len(c.p.errs) > 0 {
		writeJSON(c.w, http.StatusUnprocessableEntity, map[string]any{"detail": c.p.errs})
		return false
	}
	return c.s.authorize(c.w, c.r, scope)
}

type route struct {
	methods []string // HEAD only where RomM declares it (FastAPI adds none)
	segs    []string // "{name}" matches one segment
	has     func(version) bool
	handle  func(*call)
}

type router struct {
	s      *Server
	routes []route
}

// add registers a route; order matters as in Starlette: the first route
// whose path and method match wins, so fixed segments go before {id}.
func (rt *router) add(methods, pattern string, has func(version) bool, h func(*call)) {
	if has == nil {
		has = always
	}
	rt.routes = append(rt.routes, route{methods: strings.Split(methods, "|"),
		segs: strings.Split(strings.Trim(pattern, "/"), "/"), has: has, handle: h})
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var allowed []string
	for _, ro := range rt.routes {
		if !ro.has(rt.s.ver) {
			continue
		}
		vars, ok := matchSegs(ro.segs, segs)
		if !ok {
			continue
		}
		for _, m := range ro.methods {
			if m == r.Method {
				ro.handle(&call{s: rt.s, w: w, r: r, p: newParams(r.URL.Query()), vars: vars})
				return
			}
		}
		allowed = append(allowed, ro.methods...)
	}
	if allowed != nil {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	writeDetail(w, http.StatusNotFound, "Not Found")
}

func matchSegs(pattern, path []string) (map[string]string, bool) {
	if len(pattern) != len(path) {
		return nil, false
	}
	var vars map[string]string
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") {
			if path[i] == "" {
				return nil, false
			}
			if vars == nil {
				vars = map[string]string{}
			}
			vars[strings.Trim(p, "{}")] = path[i]
			continue
		}
		if p != path[i] {
			return nil, false
		}
	}
	return vars, true
}

// writeJSON answers v as FastAPI's JSONResponse does (compact, UTF-8).
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fakeromm: encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// writeDetail is an HTTPException's body: {"detail": "..."}.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]string{"detail": detail})
}
