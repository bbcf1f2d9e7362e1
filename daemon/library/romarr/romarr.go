// Package romarr is Cabinet's client for ROMarr (github.com/BlizzHacker/romarr, "the *arr for
// games"): its status, its Wanted list, its download queue, its platform table and game library,
// and asking it for a game. It speaks ROMarr 0.8's own routes (romarr/app.py), bounds every
// request in time and every answer in size, and cleans every string ROMarr hands back with
// haentities/untrusted before it leaves the package. It never logs; it returns errors that say
// what to do, and the API key never appears in one.
package romarr

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// DefaultTimeout bounds one operation (every request it makes) when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Limits on what callers may ask for and on what the client keeps from an answer.
const (
	DefaultLimit = 20  // items per page when a caller passes limit <= 0
	MaxLimit     = 100 // the most items one call returns
	// MaxQueue is how many queue rows Queue returns (the newest). ROMarr keeps its queue in memory
	// and never trims it, so a long-running install can hold thousands.
	MaxQueue = 100
)

// ErrUnauthorized is wrapped by errors for ROMarr's 401 and 403 answers.
var ErrUnauthorized = errors.New("ROMarr refused the API key")

// Config is what the client needs: cabinet.romarr.url and cabinet.romarr.api_key.
type Config struct {
	URL    string // ROMarr's base address, such as http://nas.lan:6868 (a path prefix is kept)
	APIKey string // sent as X-Api-Key; empty only for a ROMarr with authentication disabled
	// Timeout bounds each operation; 0 means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient is copied and used for every request; nil builds one. Its redirect policy is
	// replaced (the key must not follow a redirect to another host), and one that skips TLS
	// verification is refused.
	HTTPClient *http.Client
}

// Client talks to one ROMarr. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	key     string
	timeout time.Duration
	http    *http.Client
}

// New checks c and returns a client. It does not contact ROMarr.
func New(c Config) (*Client, error) {
	base, err := parseBase(c.URL)
	if err != nil {
		return nil, err
	}
	if err := checkKey(c.APIKey); err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout < 0 {
		return nil, fmt.Errorf("romarr timeout %v is negative: use 0 for the default (%v)", timeout, DefaultTimeout)
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	hc, err := httpClient(c.HTTPClient)
	if err != nil {
		return nil, err
	}
	return &Client{base: base, key: c.APIKey, timeout: timeout, http: hc}, nil
}

// URL is ROMarr's base address as configured (it never holds a credential: New refuses those).
func (c *Client) URL() string { return c.base.String() }

func parseBase(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("cabinet.romarr.url is empty: set it to ROMarr's address, such as http://nas.lan:6868")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		// The parse error would quote the URL; the user has it in front of them.
		return nil, errors.New("cabinet.romarr.url is not an http:// or https:// address: set it to ROMarr's address, such as http://nas.lan:6868")
	}
	if u.User != nil {
		return nil, errors.New("cabinet.romarr.url holds a user name or password: remove it and put ROMarr's API key in cabinet.romarr.api_key")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		// A ?apikey= here would end up in every error that names a request.
		return nil, errors.New("cabinet.romarr.url has a query or fragment: remove it (ROMarr's API key goes in cabinet.romarr.api_key)")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// checkKey refuses keys that cannot travel in a header; the message never quotes the key.
func checkKey(key string) error {
	if len(key) > 512 {
		return errors.New("cabinet.romarr.api_key is longer than 512 characters: copy the key from ROMarr's Settings -> General again")
	}
	for _, r := range key {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || r == ' ' {
			return errors.New("cabinet.romarr.api_key has spaces or characters that are not printable ASCII: copy the key from ROMarr's Settings -> General again")
		}
	}
	return nil
}

// httpClient copies hc (or builds a client) with Cabinet's redirect policy.
func httpClient(hc *http.Client) (*http.Client, error) {
	var out http.Client
	if hc != nil {
		out = *hc
		if t, ok := out.Transport.(*http.Transport); ok && t.TLSClientConfig != nil && t.TLSClientConfig.InsecureSkipVerify {
			return nil, errors.New("romarr: the HTTP client skips TLS verification: ROMarr's API key would go to whoever answers; use a verifying client")
		}
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// ROMarr lives on the household LAN; an environment proxy would see the key on plain http.
		t.Proxy = nil
		t.MaxResponseHeaderBytes = 64 << 10
		out.Transport = t
	}
	out.CheckRedirect = sameOrigin
	return &out, nil
}

// maxRedirects is generous for a reverse proxy adding a slash; ROMarr's API itself never redirects.
const maxRedirects = 3

// sameOrigin follows a redirect only to the same scheme and host: Go copies custom headers such
// as X-Api-Key onto every redirected request, so another host would receive the key.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return &redirectError{fmt.Sprintf("ROMarr redirected to another address (%s://%s), which Cabinet does not follow with the API key: set cabinet.romarr.url to the address ROMarr answers on itself",
			untrusted.Clean(req.URL.Scheme, maxShort), untrusted.Clean(req.URL.Host, maxName))}
	}
	if len(via) > maxRedirects {
		return &redirectError{fmt.Sprintf("ROMarr redirected more than %d times: check cabinet.romarr.url", maxRedirects)}
	}
	return nil
}

// redirectError is a redirect Cabinet refused; it is reported as itself, not as an unreachable
// ROMarr.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }
