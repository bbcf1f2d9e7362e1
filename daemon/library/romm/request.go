package romm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// request is one GET to RomM.
type request struct {
	path    string // unescaped, starts with "/"; appended to the base path
	rawPath string // escaped form of path when the caller gave one (generic Get)
	query   url.Values
	noAuth  bool  // heartbeat and /openapi.json are open; the token is not sent
	max     int64 // body bound
	scope   string
	version Version // for the 401/403 mapping on authenticated requests
	// notFound is the message for a 404 (without it, a generic one).
	notFound string
	// shape bounds the JSON of a 2xx answer; nil means typedJSON (jsonlimits.go).
	shape *bounded.JSONLimits
}

func (r request) route() string { return "GET " + untrusted.Clean(r.path, 200) }

// maxErrorBody bounds what is read of an error answer: enough for FastAPI's detail.
const maxErrorBody = 64 << 10

// fetch sends r and returns the body of a 2xx answer; every other status is an error.
func (c *Client) fetch(ctx context.Context, r request) ([]byte, error) {
	status, body, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if status < 200 || status > 299 {
		return nil, c.statusError(r, status, body)
	}
	return body, nil
}

// do sends r. It returns the status and body of any answer that is not an auth refusal; a 2xx
// body is known to be JSON (not HTML), within r.max and, when it is valid JSON, within r's shape
// limits.
func (c *Client) do(ctx context.Context, r request) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	u := *c.base
	u.Path = c.base.Path + r.path
	if r.rawPath != "" {
		u.RawPath = c.base.EscapedPath() + r.rawPath
	}
	u.RawQuery = r.query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, newError(ErrInvalid, nil, "%s: build the request: check cabinet.romm.url", r.route())
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "batocera-cabinet")
	if !r.noAuth && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, c.transportError(ctx, r.route(), nil, err)
	}
	defer resp.Body.Close()

	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	limit := r.max
	if !ok && limit > maxErrorBody {
		limit = maxErrorBody
	}
	if ok && resp.ContentLength > r.max {
		return 0, nil, c.tooLarge(r)
	}
	if ok && binaryType(resp.Header.Get("Content-Type")) {
		// Refused before the body is read: a download is not an API answer.
		return 0, nil, newError(ErrNotRomM, nil, "%s answered with a file (%s), not JSON: this route is not one the cabinet can read",
			r.route(), cleanLine(resp.Header.Get("Content-Type"), 60))
	}
	body, err := bounded.ReadBody(resp.Body, resp.ContentLength, limit)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, c.transportError(ctx, r.route(), nil, err)
		}
		// RomM answered and the answer broke off: not an address problem.
		return 0, nil, newError(nil, nil, "RomM's answer to %s was cut off (%s): retry; if it keeps happening, look at RomM's log or the proxy in front of it",
			r.route(), c.redact(untrusted.Clean(err.Error(), 200)))
	}
	if int64(len(body)) > limit {
		if ok {
			bounded.Release(len(body))
			return 0, nil, c.tooLarge(r)
		}
		body = body[:limit] // only the detail is wanted from an error answer
	}

	body = c.redactBody(body)

	if looksHTML(resp.Header.Get("Content-Type"), body) {
		if ok {
			return 0, nil, newError(ErrNotRomM, nil,
				"%s answered with a web page, not RomM's API: is cabinet.romm.url the RomM address (%s)?", r.route(), c.base.Redacted())
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			// RomM refuses with JSON; a login page is a proxy or SSO in front of it.
			return 0, nil, newError(ErrNotRomM, nil,
				"%s answered %d with a login or error page, not RomM's API: a proxy in front of RomM stops the cabinet; let it through to RomM's /api, or point cabinet.romm.url at RomM itself",
				r.route(), resp.StatusCode)
		}
		return 0, nil, newError(ErrNotRomM, nil,
			"%s answered %d with a web page, not RomM's API: is cabinet.romm.url the RomM address (%s), and is RomM running behind its proxy?",
			r.route(), resp.StatusCode, c.base.Redacted())
	}
	if ok {
		if err := c.checkShape(r.route(), r, body, true); err != nil {
			bounded.Release(len(body))
			return 0, nil, err
		}
	}
	if !r.noAuth && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		return 0, nil, c.authError(r, resp.StatusCode)
	}
	return resp.StatusCode, body, nil
}

func (c *Client) tooLarge(r request) error { return tooLarge(r.route(), r) }

// tooLarge is the refusal of an answer over r.max, for reads and writes.
func tooLarge(route string, r request) error {
	advice := "RomM never sends that much here: is cabinet.romm.url RomM's address?"
	if r.query.Get("limit") != "" {
		advice = "ask for fewer items (a smaller limit)"
	}
	return newError(ErrTooLarge, nil, "RomM's answer to %s is larger than %d MiB: %s", route, max(r.max>>20, 1), advice)
}

// looksHTML spots login pages, proxies' error pages and a URL that points at RomM's web UI.
func looksHTML(contentType string, body []byte) bool {
	ct := strings.ToLower(contentType)
	if strings.Contains(ct, "html") {
		return true
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(trimmed) > 0 && trimmed[0] == '<'
}

// binaryType reports content types that are files, never JSON. Other types are judged by the body:
// a server that forgets the header gets text/plain sniffed by Go's server.
func binaryType(contentType string) bool {
	ct := strings.ToLower(contentType)
	for _, p := range []string{"application/octet-stream", "application/zip", "application/x-", "image/", "audio/", "video/", "font/"} {
		if strings.HasPrefix(ct, p) {
			return true
		}
	}
	return false
}

// transportError turns a failed round trip or body read of route into a message that says what
// to do, for reads and writes alike. It never quotes url.Error (it carries the redirect's Location
// verbatim), and redacts the token and the request's own secrets.
func (c *Client) transportError(ctx context.Context, route string, secrets []string, err error) error {
	if red, ok := isRedirect(err); ok {
		return newError(nil, nil, "%s: %s", route, red.msg)
	}
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return newError(nil, context.DeadlineExceeded, "RomM did not answer %s in time (limit %s): check that RomM is running at %s",
			route, c.timeout, c.base.Redacted())
	case context.Canceled:
		return newError(nil, context.Canceled, "%s: cancelled", route)
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	var unknownCA x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	switch {
	case errors.As(inner, &hostErr):
		return newError(nil, nil, "RomM's TLS certificate is not for %s: use the host name in its certificate in cabinet.romm.url",
			c.base.Hostname())
	case errors.As(inner, &unknownCA), errors.As(inner, &verify):
		return newError(nil, nil, "RomM's TLS certificate is not trusted: set cabinet.romm.ca_file to the PEM file of the CA that signed it")
	}
	return newError(nil, nil, "cannot reach RomM at %s (%s): check cabinet.romm.url and that RomM is running",
		c.base.Redacted(), c.redactAll(untrusted.Clean(inner.Error(), 300), secrets))
}

// authError maps 401/403. RomM up to 5.1 answers 403 for a missing or bad credential and for a
// missing scope alike; from 5.2 a 401 is "not authenticated" and 403 "authenticated, no scope"
// (decorators/auth.py _raise_auth_error at 5.2.0).
func (c *Client) authError(r request, status int) error {
	if status == http.StatusForbidden && r.version.AtLeast(5, 2) {
		return &ScopeError{Scope: r.scope, Route: r.route()}
	}
	return &AuthError{
		Status:    status,
		Scope:     r.scope,
		Ambiguous: status == http.StatusForbidden,
		Version:   r.version.String(),
		NoToken:   c.token == "",
	}
}

// statusError is every non-2xx answer that is not an auth refusal.
func (c *Client) statusError(r request, status int, body []byte) error {
	detail := c.detail(body)
	if detail != "" {
		detail = fmt.Sprintf(": RomM says %q", detail)
	}
	switch {
	case status == http.StatusNotFound:
		if r.notFound != "" {
			return newError(ErrNotFound, nil, "%s", r.notFound)
		}
		return newError(ErrNotFound, nil, "RomM has nothing at %s (404)%s: check the path, or whether this RomM version has the route", r.route(), detail)
	case status == http.StatusTooManyRequests:
		return newError(nil, nil, "RomM is rate limiting the cabinet (429 on %s): wait a minute and try again", r.route())
	case status >= 500:
		return newError(nil, nil, "RomM failed on %s (%d)%s: try again, and check RomM's logs if it persists", r.route(), status, detail)
	case status >= 400:
		return newError(ErrInvalid, nil, "RomM rejected %s (%d)%s: check the request's values", r.route(), status, detail)
	default:
		return newError(ErrNotRomM, nil, "RomM answered %d to %s: is cabinet.romm.url the RomM address?", status, r.route())
	}
}

// detail pulls FastAPI's {"detail": "..."} or {"detail": [{"msg": "..."}]} out of an error answer,
// cleaned and capped.
func (c *Client) detail(body []byte) string {
	var d struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &d) != nil || len(d.Detail) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(d.Detail, &s) != nil {
		var list []struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(d.Detail, &list) != nil || len(list) == 0 {
			return ""
		}
		s = list[0].Msg
	}
	return c.redact(untrusted.Clean(s, 200))
}

// jsonProblem describes a decode error without quoting the offending input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the top level"
		}
		return fmt.Sprintf("%s is a JSON %s where RomM's API documents %s", untrusted.Clean(field, 100), untrusted.Clean(typ.Value, 40), kindName(typ.Type))
	}
	return "not valid JSON"
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}
