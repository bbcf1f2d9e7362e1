// Package es is Cabinet's client for EmulationStation's web API on
// 127.0.0.1:1234: typed systems and games decoded from ES's string-valued
// JSON, its 201 "nothing" sentinels, per-system game lists cached until
// invalidated, and a launch by game id that is confirmed by polling
// /runningGame. It only has methods for the routes Cabinet may use; /quit,
// /restart (which reboots the machine), /shutdown, /addgames, /removegames and
// uploads are unreachable through it. It returns errors and never logs.
package es

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for Config fields left zero.
const (
	DefaultURL            = "http://127.0.0.1:1234"
	DefaultTimeout        = 2 * time.Second
	DefaultEmuKillTimeout = 10 * time.Second // batocera-es-swissknife --emukill takes ~2-4 s
	DefaultListTimeout    = 15 * time.Second // /systems and game lists of a big library on a Pi
	DefaultLaunchTimeout  = 20 * time.Second
	DefaultPollInterval   = 250 * time.Millisecond
	DefaultMaxListBytes   = 64 << 20 // ~600 B per game: 50,000 games are ~30 MB

	DefaultMaxObjectBytes = 64 << 10
)

// Config configures a Client.
type Config struct {
	// URL is ES's base URL (cabinet.es.url). A "localhost" host is replaced
	// by 127.0.0.1: ES accepts no other peer address and listens on IPv4
	// only, so "localhost" can reach ::1 and be refused.
	URL string
	// Timeout bounds each call that has no shorter context deadline.
	Timeout time.Duration
	// ListTimeout bounds /systems and /systems/{sys}/games.
	ListTimeout time.Duration
	// EmuKillTimeout bounds /emukill, which answers once the emulator is gone.
	EmuKillTimeout time.Duration
	// LaunchTimeout bounds LaunchGame's wait for the game to show up in
	// /runningGame; PollInterval is the time between two polls.
	LaunchTimeout time.Duration
	PollInterval  time.Duration
	// MaxListBytes bounds /systems and game-list bodies; MaxObjectBytes
	// bounds single objects (a game, a system, /caps, /runningGame).
	MaxListBytes   int64
	MaxObjectBytes int64
	// Location is the time zone of ES's dates (its local time); nil means
	// time.Local, right when Cabinet runs on the cabinet.
	Location *time.Location
	// Transport replaces the HTTP transport (tests); nil uses one that dials
	// IPv4 only and drops idle connections before ES's 5 s keep-alive does.
	Transport http.RoundTripper
}

// Client talks to one ES. It is safe for concurrent use.
type Client struct {
	cfg       Config
	base      string // scheme://host:port, no trailing slash
	http      *http.Client
	cache     cache
	launching atomic.Bool
}

// New returns a Client for cfg, with defaults for zero fields.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	base, err := baseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ListTimeout <= 0 {
		cfg.ListTimeout = DefaultListTimeout
	}
	if cfg.EmuKillTimeout <= 0 {
		cfg.EmuKillTimeout = DefaultEmuKillTimeout
	}
	if cfg.LaunchTimeout <= 0 {
		cfg.LaunchTimeout = DefaultLaunchTimeout
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxListBytes <= 0 {
		cfg.MaxListBytes = DefaultMaxListBytes
	}
	if cfg.MaxObjectBytes <= 0 {
		cfg.MaxObjectBytes = DefaultMaxObjectBytes
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Transport == nil {
		cfg.Transport = newTransport()
	}
	return &Client{cfg: cfg, base: base, http: &http.Client{
		Transport: cfg.Transport,
		// ES never redirects an API route; a redirect means this is not ES.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// BaseURL is the URL the client calls, after the localhost rewrite.
func (c *Client) BaseURL() string { return c.base }

func baseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("es url %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("es url %q: want http://127.0.0.1:1234 (ES serves plain HTTP)", raw)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("es url %q: want only scheme, host and port, e.g. http://127.0.0.1:1234", raw)
	}
	host, port := u.Hostname(), u.Port()
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "80"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

func newTransport() *http.Transport {
	d := &net.Dialer{Timeout: DefaultTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy: nil, // loopback; never through a proxy
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp4", addr)
		},
		// No kept-alive connections: ES's web server, when ES quits (as it
		// does for every restart on Batocera), waits for open connections
		// to close, and the watcher polling every 3 s kept one open: ES
		// took 9 s to exit instead of 0.3 s (seen against the real ES). A
		// loopback connection per request costs well under a millisecond.
		DisableKeepAlives:  true,
		DisableCompression: true,
		ForceAttemptHTTP2:  false,
	}
}
