// Package romm is the cabinet's client for the household's RomM server: its version gate, the
// read calls the library tools need (platforms, ROM search and details, collections), a generic
// bounded GET for the OpenAPI tools, and a scope probe.
//
// Everything it returns is safe to hand to a model: text from RomM is cleaned with
// haentities/untrusted and capped, answers are bounded, and the token never appears in an error
// or a result. It never logs; callers log at their boundary.
package romm

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Config configures a Client.
type Config struct {
	URL     string // cabinet.romm.url: http(s)://host[:port][/prefix]
	Token   string // client token (rmm_…); empty only for a RomM in kiosk mode
	CAFile  string // cabinet.romm.ca_file: PEM bundle of a home CA, added to the system roots
	Timeout time.Duration
	// HTTPClient replaces the transport (tests). Its CheckRedirect is replaced by the client's own
	// policy; CAFile cannot be combined with it.
	HTTPClient *http.Client
	Now        func() time.Time
}

// DefaultTimeout bounds every request (connect, headers and body) unless Config.Timeout says otherwise.
const DefaultTimeout = 10 * time.Second

// Bounds on what RomM may send. A 21k-ROM library on 5.2 went over 16 MiB for one page with the
// default indexes on (btsouth/omakade#46); with them off a page of 100 is far below.
const (
	maxJSON     = 16 << 20
	maxOpenAPI  = 8 << 20 // the 5.3.1 document is ~600 KB
	maxCAFile   = 1 << 20
	maxRedirect = 5
	maxToken    = 1024
)

// Client talks to one RomM server. It is safe for concurrent use.
type Client struct {
	base    *url.URL // scheme://host[/prefix], no trailing slash
	token   string
	timeout time.Duration
	http    *http.Client
	now     func() time.Time

	mu          sync.Mutex
	version     Version
	versionAt   time.Time
	haveVersion bool
}

// New checks c and builds a Client. It does not contact RomM.
func New(c Config) (*Client, error) {
	base, err := parseBase(c.URL)
	if err != nil {
		return nil, err
	}
	if err := checkToken(c.Token); err != nil {
		return nil, err
	}
	cl := &Client{base: base, token: c.Token, timeout: c.Timeout, now: c.Now}
	if cl.timeout <= 0 {
		cl.timeout = DefaultTimeout
	}
	if cl.now == nil {
		cl.now = time.Now
	}
	var hc http.Client
	switch {
	case c.HTTPClient != nil && c.CAFile != "":
		return nil, fmt.Errorf("romm client: set either an HTTP client or cabinet.romm.ca_file, not both")
	case c.HTTPClient != nil:
		hc = *c.HTTPClient
	default:
		tr, err := transport(c.CAFile)
		if err != nil {
			return nil, err
		}
		hc.Transport = tr
	}
	hc.CheckRedirect = cl.checkRedirect
	hc.Jar = nil // RomM's session cookie would outrank the token; we want the token's scopes only
	cl.http = &hc
	return cl, nil
}

func parseBase(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("cabinet.romm.url is empty: set it to RomM's address, such as http://romm.lan:8080")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("cabinet.romm.url is not a URL: set it to RomM's address, such as http://romm.lan:8080")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("cabinet.romm.url must start with http:// or https://")
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("cabinet.romm.url has no host: set it to RomM's address, such as http://romm.lan:8080")
	case u.User != nil:
		return nil, fmt.Errorf("cabinet.romm.url must not carry a user or password: put the client token in cabinet.romm.token_file")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("cabinet.romm.url must not have a query or fragment: give only RomM's address")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// checkToken rejects tokens that cannot be sent in a header, without ever quoting them.
func checkToken(t string) error {
	if len(t) > maxToken {
		return fmt.Errorf("cabinet.romm.token is longer than %d characters: paste only the rmm_… token", maxToken)
	}
	// RomM's tokens are rmm_ + hex; OAuth access tokens are JWTs (base64url and dots). Nothing that
	// needs quoting in JSON is allowed, so the token can be redacted inside a JSON body safely.
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", c) >= 0) {
			return fmt.Errorf("cabinet.romm.token holds a character a token cannot have (spaces, quotes, control characters): paste only the rmm_… token")
		}
	}
	return nil
}

// transport is a copy of the default transport (proxy from the environment, HTTP/2) that verifies
// TLS against the system roots plus, when given, the home CA.
func transport(caFile string) (*http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := loadCA(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	tr.TLSClientConfig = cfg
	return tr, nil
}

func loadCA(path string) (*x509.CertPool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read cabinet.romm.ca_file: %w", err)
	}
	defer f.Close()
	pem, err := io.ReadAll(io.LimitReader(f, maxCAFile+1))
	if err != nil {
		return nil, fmt.Errorf("read cabinet.romm.ca_file: %w", err)
	}
	if len(pem) > maxCAFile {
		return nil, fmt.Errorf("cabinet.romm.ca_file %s is larger than 1 MiB: point it at the home CA's PEM certificate", path)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cabinet.romm.ca_file %s holds no PEM certificate: point it at the home CA's certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return pool, nil
}

// errRedirect is returned from CheckRedirect; request() turns it into a message.
type errRedirect struct{ msg string }

func (e *errRedirect) Error() string { return e.msg }

// checkRedirect follows redirects only to RomM's own host (same scheme and host:port, or an
// http→https upgrade on the same host name), at most maxRedirect times. Another host would get the
// token; a downgrade to http would send it in clear.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirect {
		return &errRedirect{fmt.Sprintf("RomM redirected more than %d times: set cabinet.romm.url to the address RomM answers on", maxRedirect)}
	}
	from, to := via[0].URL, req.URL
	sameHost := strings.EqualFold(from.Host, to.Host) && from.Scheme == to.Scheme
	upgrade := from.Scheme == "http" && to.Scheme == "https" && strings.EqualFold(from.Hostname(), to.Hostname())
	if sameHost || upgrade {
		return nil
	}
	if from.Scheme == "https" && to.Scheme == "http" && strings.EqualFold(from.Hostname(), to.Hostname()) {
		return &errRedirect{"RomM redirected from https to http, which would send the token unencrypted: fix RomM's proxy, or use the http address in cabinet.romm.url"}
	}
	return &errRedirect{fmt.Sprintf("RomM redirected to another host (%s), which the cabinet does not follow so the token stays with RomM: set cabinet.romm.url to the address RomM answers on",
		c.redact(cleanLine(to.Host, 100)))}
}

// redact removes the token from text that is about to leave the package. Text from the server is
// the only way it could get there (an echo); this is the last guard.
func (c *Client) redact(s string) string {
	if c.token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.token, "[token]")
}

// redactBody removes the token from an answer before it is decoded or returned.
func (c *Client) redactBody(b []byte) []byte {
	if c.token == "" || !bytes.Contains(b, []byte(c.token)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(c.token), []byte("[token]"))
}

// isRedirect reports whether err is the client's own redirect refusal.
func isRedirect(err error) (*errRedirect, bool) {
	var r *errRedirect
	ok := errors.As(err, &r)
	return r, ok
}
