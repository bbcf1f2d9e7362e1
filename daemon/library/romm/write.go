package romm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// maxRequestBody bounds what the cabinet sends: 100 play sessions are about 20 KB.
const maxRequestBody = 1 << 20

// writeRequest is one POST or DELETE with an optional JSON body. It follows the GET rules of
// request.go (deadline, bounds, no cross-host redirect, token redacted, 401/403 mapping) and adds
// two: a redirect that would turn it into another method is refused, and the secrets it carries
// (a device code, a pair code) are redacted from the answer and every error like the token.
//
// RomM applies no CSRF check when an Authorization: Bearer header is present
// (handler/auth/middleware/csrf_middleware.py), so an authenticated write needs nothing more. The
// open routes (device authorization, pair-code exchange) set noAuth: no CSRF check applies to them
// either (they are exempt: the caller has no session).
type writeRequest struct {
	request
	method  string
	body    any      // marshalled to JSON; nil sends no body
	secrets []string // redacted like the token
	// payload, when not nil, is sent as is with contentType instead of body (a multipart upload,
	// built and bounded by the caller); timeout, when positive, replaces c.timeout for it.
	payload     []byte
	contentType string
	timeout     time.Duration
}

func (w *writeRequest) route() string { return w.method + " " + untrusted.Clean(w.path, 200) }

// send sends w. Like do, it returns the status and body of any answer that is not an auth refusal
// (auth refusals only on authenticated routes); a 2xx body is not HTML, not a file, within w.max
// and, as JSON, within w's shape limits.
func (c *Client) send(ctx context.Context, w writeRequest) (int, []byte, error) {
	payload, contentType := w.payload, w.contentType
	if payload == nil && w.body != nil {
		b, err := json.Marshal(w.body)
		if err != nil {
			return 0, nil, newError(ErrInvalid, nil, "%s: the request cannot be written as JSON", w.route())
		}
		if len(b) > maxRequestBody {
			return 0, nil, newError(ErrInvalid, nil, "%s: the request is larger than 1 MiB: send less at a time", w.route())
		}
		payload, contentType = b, "application/json"
	}
	timeout := c.timeout
	if w.timeout > 0 {
		timeout = w.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	u := *c.base
	u.Path = c.base.Path + w.path
	u.RawQuery = w.query.Encode()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, w.method, u.String(), rd)
	if err != nil {
		return 0, nil, newError(ErrInvalid, nil, "%s: build the request: check cabinet.romm.url", w.route())
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "batocera-cabinet")
	if payload != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if !w.noAuth && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := *c.http
	hc.CheckRedirect = c.checkWriteRedirect
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, c.transportError(ctx, w.route(), w.secrets, err)
	}
	defer resp.Body.Close()

	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	limit := w.max
	if !ok && limit > maxErrorBody {
		limit = maxErrorBody
	}
	if ok && resp.ContentLength > w.max {
		return 0, nil, tooLarge(w.route(), w.request)
	}
	if ok && binaryType(resp.Header.Get("Content-Type")) {
		return 0, nil, newError(ErrNotRomM, nil, "%s answered with a file (%s), not JSON: is cabinet.romm.url the RomM address?",
			w.route(), cleanLine(resp.Header.Get("Content-Type"), 60))
	}
	body, err := bounded.ReadBody(resp.Body, resp.ContentLength, limit)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, c.transportError(ctx, w.route(), w.secrets, err)
		}
		return 0, nil, newError(nil, nil, "RomM's answer to %s was cut off (%s): retry; if it keeps happening, look at RomM's log or the proxy in front of it",
			w.route(), c.redactAll(untrusted.Clean(err.Error(), 200), w.secrets))
	}
	if int64(len(body)) > limit {
		if ok {
			bounded.Release(len(body))
			return 0, nil, tooLarge(w.route(), w.request)
		}
		body = body[:limit]
	}
	body = c.redactBody(body)
	for _, s := range w.secrets {
		if s != "" && bytes.Contains(body, []byte(s)) {
			body = bytes.ReplaceAll(body, []byte(s), []byte("[secret]"))
		}
	}

	if looksHTML(resp.Header.Get("Content-Type"), body) {
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return 0, nil, newError(ErrNotRomM, nil,
				"%s answered %d with a login or error page, not RomM's API: a proxy in front of RomM stops the cabinet; let it through to RomM's /api, or point cabinet.romm.url at RomM itself",
				w.route(), resp.StatusCode)
		}
		return 0, nil, newError(ErrNotRomM, nil,
			"%s answered %d with a web page, not RomM's API: is cabinet.romm.url the RomM address (%s), and is RomM running behind its proxy?",
			w.route(), resp.StatusCode, c.base.Redacted())
	}
	if ok && len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
		return 0, nil, newError(ErrNotRomM, nil, "%s answered %d with something that is not JSON: is cabinet.romm.url the RomM address?", w.route(), resp.StatusCode)
	}
	if ok {
		// The sign-in answers (noAuth) carry secrets the client does not know yet: no path.
		if err := c.checkShape(w.route(), w.request, body, !w.noAuth); err != nil {
			bounded.Release(len(body))
			return 0, nil, err
		}
	}
	if !w.noAuth && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		if resp.StatusCode == http.StatusForbidden && w.version.AtLeast(5, 2) {
			return 0, nil, &ScopeError{Scope: w.scope, Route: w.route()}
		}
		return 0, nil, c.authError(w.request, resp.StatusCode)
	}
	return resp.StatusCode, body, nil
}

// checkWriteRedirect is checkRedirect plus one rule: a redirect that changes the method (Go turns
// a POST into a GET on 301, 302 and 303) is refused, since the write would not happen.
func (c *Client) checkWriteRedirect(req *http.Request, via []*http.Request) error {
	if req.Method != via[0].Method {
		return &errRedirect{fmt.Sprintf("RomM redirected the %s, which would turn it into a %s and lose it: set cabinet.romm.url to the address RomM answers on (https:// if RomM redirects there)",
			via[0].Method, req.Method)}
	}
	return c.checkRedirect(req, via)
}

// redactAll is redact plus the request's own secrets and anything shaped like a RomM token.
func (c *Client) redactAll(s string, secrets []string) string {
	s = c.redact(s)
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "[secret]")
		}
	}
	return scrubTokens(s)
}

// scrubTokens replaces every "rmm_" followed by hex digits (a RomM client token, which the client
// may not know: the sign-in routes hand out new ones) with "[token]".
func scrubTokens(s string) string {
	if !strings.Contains(s, "rmm_") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "rmm_")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len("rmm_")
		for j < len(s) && hexHash(s[j:j+1], 1) != "" {
			j++
		}
		b.WriteString(s[:i])
		if j-i > len("rmm_")+7 {
			b.WriteString("[token]")
		} else {
			b.WriteString(s[i:j])
		}
		s = s[j:]
	}
}

// writeStatusError is statusError for a write: the same mapping, with the method in the route.
// The detail was redacted with the body.
func (c *Client) writeStatusError(w *writeRequest, status int, body []byte) error {
	detail := scrubTokens(c.detail(body))
	if detail != "" {
		detail = fmt.Sprintf(": RomM says %q", detail)
	}
	switch {
	case status == http.StatusNotFound:
		if w.notFound != "" {
			return newError(ErrNotFound, nil, "%s", w.notFound)
		}
		return newError(ErrNotFound, nil, "RomM has nothing at %s (404)%s: check whether this RomM version has the route", w.route(), detail)
	case status == http.StatusTooManyRequests:
		return newError(nil, nil, "RomM is rate limiting the cabinet (429 on %s)%s: wait a minute and try again", w.route(), detail)
	case status >= 500:
		return newError(nil, nil, "RomM failed on %s (%d)%s: try again, and check RomM's logs if it persists", w.route(), status, detail)
	case status >= 400:
		return newError(ErrInvalid, nil, "RomM rejected %s (%d)%s: check the request's values", w.route(), status, detail)
	default:
		return newError(ErrNotRomM, nil, "RomM answered %d to %s: is cabinet.romm.url the RomM address?", status, w.route())
	}
}

// post sends w and returns the body of a 2xx answer; every other status is an error.
func (c *Client) post(ctx context.Context, w writeRequest) ([]byte, error) {
	status, body, err := c.send(ctx, w)
	if err != nil {
		return nil, err
	}
	if status < 200 || status > 299 {
		return nil, c.writeStatusError(&w, status, body)
	}
	return body, nil
}
