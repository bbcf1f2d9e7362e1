package romarr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// Body bounds. Lists are streamed (decode.go), so their bound is the documented 16 MiB; answers
// that are decoded whole (status, counts) get a tighter one, because a small body of empty
// objects can still decode into far more memory than it occupies.
const (
	maxListBody  = 16 << 20
	maxSmallBody = 1 << 20
	maxErrorBody = 64 << 10
)

// Shape bounds on ROMarr's JSON, checked before anything decodes it (bounded.CheckJSON): a body
// within its size bound can still hold millions of empty values, and a decoder allocates for
// each. The answers decoded whole get tight ones; the lists are streamed an item at a time
// (decode.go), so theirs only keep one answer from costing the decoder millions of items' work.
// Measured in limits_test.go.
var (
	// smallJSON: status (testdata/status.json: 54 values, lists of 3), counts, a request's result.
	smallJSON = bounded.JSONLimits{Depth: 16, ArrayLen: 1000, Elements: 5000, Values: 20_000}
	// listJSON: Wanted and the queue (thousands of rows on a busy install, ~8 values each), the
	// history (ROMarr keeps 2000), a page of the library with its facets, the platform table (73
	// with their extensions: 1,180 values).
	listJSON = bounded.JSONLimits{Depth: 32, ArrayLen: 50_000, Elements: 200_000, Values: 1_000_000}
)

// operation bounds ctx with the client's timeout; every request of one public call shares it.
func (c *Client) operation(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// get is call for GET.
func (c *Client) get(ctx context.Context, path string, query url.Values, limit int64) ([]byte, error) {
	return c.call(ctx, http.MethodGet, path, query, nil, limit)
}

// call sends one request and returns the body of a 200 JSON answer, at most limit bytes. Every
// other outcome is an error naming the route (never the key) and saying what to do.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body any, limit int64) ([]byte, error) {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = query.Encode()
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the request: %w", method, path, err)
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), payload)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "cabinet")
	if c.key != "" {
		req.Header.Set("X-Api-Key", c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportErr(ctx, method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusErr(ctx, method, path, resp)
	}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return nil, fmt.Errorf("%s %s: the answer is %s, not ROMarr's JSON: check cabinet.romarr.url is ROMarr's own address (default port 6868), not a login page or proxy in front of it",
			method, path, c.text(mediaType(resp.Header.Get("Content-Type")), maxShort))
	}
	b, err := bounded.ReadBody(resp.Body, resp.ContentLength, limit)
	if err != nil {
		return nil, c.transportErr(ctx, method, path, err)
	}
	if int64(len(b)) > limit {
		bounded.Release(len(b))
		return nil, fmt.Errorf("%s %s: ROMarr's answer is larger than %d KiB, more than Cabinet reads: check cabinet.romarr.url is ROMarr", method, path, limit>>10)
	}
	shape := listJSON
	if limit <= maxSmallBody {
		shape = smallJSON
	}
	// An answer that is not JSON is left to the decoders, which refuse it before building anything.
	var le *bounded.JSONLimitError
	if err := bounded.CheckJSON(b, shape); errors.As(err, &le) && json.Valid(b) {
		bounded.Release(len(b))
		return nil, &limitError{fmt.Sprintf("%s %s: ROMarr's answer has %s (at %s), more than Cabinet reads: check cabinet.romarr.url is ROMarr",
			method, path, le.What(), c.text(le.Path, maxPath)), err}
	}
	return b, nil
}

// limitError is an answer over its shape bounds; it wraps bounded's refusal, so errors.Is
// finds bounded.ErrTooLarge.
type limitError struct {
	msg string
	err error
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.err }

// transportErr explains a failed exchange without the URL Go's errors quote.
func (c *Client) transportErr(ctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s %s: ROMarr at %s did not answer within %v: check it is running and not overloaded: %w", method, path, c.base.Host, c.timeout, context.DeadlineExceeded)
		}
		return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
	}
	var re *redirectError
	if errors.As(err, &re) {
		return fmt.Errorf("%s %s: %w", method, path, re)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s: cannot reach ROMarr at %s: %s (check cabinet.romarr.url and that ROMarr is running)", method, path, c.base.Host, c.scrub(err.Error()))
}

// statusErr turns a non-200 answer into an error, quoting ROMarr's own {"error": …} sentence.
func (c *Client) statusErr(ctx context.Context, method, path string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	said := ""
	if isJSON(resp.Header.Get("Content-Type")) {
		var e struct {
			Error  any `json:"error"`
			Detail any `json:"detail"`
		}
		if json.Unmarshal(b, &e) == nil {
			if s, ok := e.Error.(string); ok {
				said = c.text(s, maxSentence)
			}
		}
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%s %s: %w (%d): set cabinet.romarr.api_key to the key shown under ROMarr's Settings -> General (or the ROMARR_API_KEY it was started with)",
			method, path, ErrUnauthorized, resp.StatusCode)
	case http.StatusTooManyRequests:
		wait := "a minute"
		if s := resp.Header.Get("Retry-After"); s != "" {
			if d, err := time.ParseDuration(strings.TrimSpace(s) + "s"); err == nil && d > 0 && d <= time.Hour {
				wait = d.String()
			}
		}
		return fmt.Errorf("%s %s: ROMarr is rate limiting Cabinet: try again in %s", method, path, wait)
	case http.StatusNotFound:
		if said == "not found" || said == "" {
			return fmt.Errorf("%s %s: ROMarr has no such route (404): check cabinet.romarr.url is ROMarr 0.8 or newer, without a path it does not serve", method, path)
		}
	}
	if said != "" {
		return fmt.Errorf("%s %s: ROMarr answered %d: %s", method, path, resp.StatusCode, said)
	}
	return fmt.Errorf("%s %s: ROMarr answered %d %s: check cabinet.romarr.url is ROMarr and see its log", method, path, resp.StatusCode, http.StatusText(resp.StatusCode))
}

func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" {
		return "untyped"
	}
	return mt
}

func isJSON(contentType string) bool {
	mt := mediaType(contentType)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
