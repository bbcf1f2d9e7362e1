package es

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// call is one request: its method and path, body, deadline and size bound.
type call struct {
	method, path, body string
	contentType        string // of a POST body; "" means text/plain
	timeout            time.Duration
	limit              int64
}

// op names a request in errors: "GET /systems/nes/games".
func (r call) op() string { return r.method + " " + r.path }

// do sends the request and returns the status and the whole body.
func (c *Client) do(ctx context.Context, r call) (int, []byte, error) {
	if r.timeout <= 0 {
		r.timeout = c.cfg.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var body io.Reader
	if r.method == http.MethodPost {
		body = strings.NewReader(r.body) // sent with a Content-Length, as ES requires
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", r.op(), err)
	}
	if r.method == http.MethodPost {
		ct := r.contentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, transportError(r.op(), err, r.timeout)
	}
	defer resp.Body.Close()
	if resp.ContentLength > r.limit {
		return resp.StatusCode, nil, fmt.Errorf("%s: %w: %d bytes announced, limit %d", r.op(), ErrTooLarge, resp.ContentLength, r.limit)
	}
	// One allocation for a big list: ReadFrom grows the buffer whenever
	// less than MinRead bytes are free.
	buf := bytes.NewBuffer(make([]byte, 0, max(resp.ContentLength, 0)+bytes.MinRead+1))
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, r.limit+1))
	data := buf.Bytes()
	if err != nil {
		return resp.StatusCode, nil, bodyError(r.op(), err, r.timeout)
	}
	if int64(len(data)) > r.limit {
		return resp.StatusCode, nil, fmt.Errorf("%s: %w: more than %d bytes", r.op(), ErrTooLarge, r.limit)
	}
	return resp.StatusCode, data, nil
}

// getList is get for the big lists (/systems, a system's games): ES builds
// them from the whole library, which takes seconds on a large one.
func (c *Client) getList(ctx context.Context, path string) (int, []byte, error) {
	return c.expect(ctx, call{method: http.MethodGet, path: path, limit: c.cfg.MaxListBytes, timeout: c.cfg.ListTimeout}, 200)
}

// get is do for a GET that must answer one of the given statuses.
func (c *Client) get(ctx context.Context, path string, limit int64, ok ...int) (int, []byte, error) {
	return c.expect(ctx, call{method: http.MethodGet, path: path, limit: limit}, ok...)
}

func (c *Client) expect(ctx context.Context, r call, ok ...int) (int, []byte, error) {
	status, data, err := c.do(ctx, r)
	if err != nil {
		return status, nil, err
	}
	for _, s := range ok {
		if status == s {
			return status, data, nil
		}
	}
	return status, nil, statusError(r.op(), status, data)
}

// systemPath is /systems/<sys>[/games[/<id>]] with the parts escaped.
func systemPath(system string, rest ...string) string {
	p := "/systems/" + url.PathEscape(system)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}

// checkSystem rejects names ES cannot have before anything is sent.
func checkSystem(op, system string) error {
	if system == "" || strings.ContainsAny(system, "/\\?#") || strings.IndexFunc(system, isControl) >= 0 {
		return fmt.Errorf("%s: %w: system name %q", op, ErrInvalidArgument, system)
	}
	return nil
}

// checkID accepts only what ES ids are: 32 lowercase hex digits (md5).
func checkID(op, id string) error {
	if len(id) != 32 || strings.IndexFunc(id, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') }) >= 0 {
		return fmt.Errorf("%s: %w: game id %q is not 32 lowercase hex digits", op, ErrInvalidArgument, id)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
