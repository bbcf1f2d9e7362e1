package cfaccess

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Options configure a Verifier. TeamDomain and Audience are required; zero
// values of the others take the defaults given.
type Options struct {
	// TeamDomain is the Zero Trust team domain, such as
	// "myteam.cloudflareaccess.com"; "https://" and a trailing "/" are
	// accepted and dropped. The issuer must be "https://" + TeamDomain.
	TeamDomain string
	// Audience is the application's Audience (AUD) tag, 64 hex digits.
	Audience string
	// AllowedEmails, when not empty, are the only identities accepted,
	// compared case-insensitively; "@example.com" allows a whole domain.
	// Empty accepts anyone Access let through, service tokens included.
	AllowedEmails []string
	// CertsURL is where the keys are fetched (default
	// "https://<TeamDomain>/cdn-cgi/access/certs"). It must be https unless
	// its host is loopback, where tests and local fakes live.
	CertsURL string
	// Client fetches the keys (default: a client with a 5 s timeout).
	Client *http.Client
	// Now is the clock of every time check (default time.Now).
	Now func() time.Time
	// Leeway is the clock skew allowed on exp, nbf and iat (default 30 s):
	// the cabinet's clock is set by NTP after boot and may lag Cloudflare's,
	// and a fresh assertion refused as "not yet valid" locks a user out for
	// no gain, while 30 s more on an hours-long expiry costs nothing.
	Leeway time.Duration
	// MaxKeysBytes bounds the certs body (default 64 KiB; Access's is ~4).
	MaxKeysBytes int64
	// RefetchEvery is how often at most an unknown kid refetches the keys
	// (default a minute): Access rotates keys every few weeks, so that is
	// soon enough, and forged kids cannot make us hammer the certs URL.
	RefetchEvery time.Duration
	// FailBurst and FailRate are the failure budget: every refusal takes
	// one of FailBurst tokens (default 20), which come back at FailRate per
	// second (default 5). An empty budget refuses nothing more; it tells
	// the caller a flood is under way (Flooding). See the package comment.
	FailBurst int
	FailRate  float64
}

// New checks opts and returns a Verifier. It fetches nothing: the keys are
// fetched by the first Verify (or by Refresh).
func New(opts Options) (*Verifier, error) {
	domain, err := teamDomain(opts.TeamDomain)
	if err != nil {
		return nil, err
	}
	aud := strings.ToLower(strings.TrimSpace(opts.Audience))
	if _, err := hex.DecodeString(aud); err != nil || len(aud) != 64 {
		return nil, errors.New("cf access: cabinet.mcp.cf_access.aud must be the application's AUD tag, 64 hex digits (Zero Trust → Access → Applications → Overview)")
	}
	emails, domains, err := allowList(opts.AllowedEmails)
	if err != nil {
		return nil, err
	}
	certs := opts.CertsURL
	if certs == "" {
		certs = "https://" + domain + "/cdn-cgi/access/certs"
	}
	u, err := url.Parse(certs)
	if err == nil {
		err = checkCertsURL(u)
	}
	if err != nil {
		return nil, fmt.Errorf("cf access: certs URL: %w", err)
	}
	if opts.Leeway < 0 || opts.MaxKeysBytes < 0 || opts.RefetchEvery < 0 || opts.FailBurst < 0 || opts.FailRate < 0 {
		return nil, errors.New("cf access: Leeway, MaxKeysBytes, RefetchEvery, FailBurst and FailRate must not be negative (zero takes the default)")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	leeway := cmp.Or(opts.Leeway, 30*time.Second)
	issuer := "https://" + domain
	stats := &counters{}
	return &Verifier{
		issuer:   issuer,
		audience: aud,
		emails:   emails,
		domains:  domains,
		now:      now,
		leeway:   leeway,
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{"RS256"}),
			jwt.WithIssuer(issuer),
			jwt.WithAudience(aud),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(leeway),
			jwt.WithTimeFunc(now),
			// Canonical base64 only, so one signature has one spelling.
			jwt.WithStrictDecoding(),
		),
		keys: &keySource{
			url:      certs,
			client:   client,
			maxBytes: cmp.Or(opts.MaxKeysBytes, 64<<10),
			every:    cmp.Or(opts.RefetchEvery, time.Minute),
			now:      now,
			stats:    stats,
		},
		budget: newBudget(now, cmp.Or(opts.FailBurst, 20), cmp.Or(opts.FailRate, 5)),
		stats:  stats,
	}, nil
}

// teamDomain normalises Options.TeamDomain to a bare host name.
func teamDomain(s string) (string, error) {
	d := strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(d, "http://") {
		return "", errors.New("cf access: cabinet.mcp.cf_access.team_domain must be https (or a bare name like myteam.cloudflareaccess.com)")
	}
	d = strings.TrimRight(strings.TrimPrefix(d, "https://"), "/")
	if d == "" {
		return "", errors.New("cf access: cabinet.mcp.cf_access.team_domain is required: your Zero Trust team domain, like myteam.cloudflareaccess.com")
	}
	if u, err := url.Parse("https://" + d); err != nil || u.Host != d || u.Port() != "" {
		return "", fmt.Errorf("cf access: cabinet.mcp.cf_access.team_domain %q is not a host name; want one like myteam.cloudflareaccess.com", s)
	}
	return d, nil
}

// allowList splits AllowedEmails into whole addresses and "@domain" entries.
func allowList(list []string) (emails, domains map[string]bool, err error) {
	emails, domains = map[string]bool{}, map[string]bool{}
	for _, raw := range list {
		e := strings.ToLower(strings.TrimSpace(raw))
		at := strings.LastIndexByte(e, '@')
		switch {
		case e == "":
			continue
		case at < 0 || at == len(e)-1 || strings.Count(e, "@") != 1:
			return nil, nil, fmt.Errorf("cf access: cabinet.mcp.cf_access.allowed_emails entry %q: want an address (me@example.com) or a domain (@example.com)", raw)
		case at == 0:
			domains[e[1:]] = true
		default:
			emails[e] = true
		}
	}
	return emails, domains, nil
}

// checkCertsURL allows https anywhere and plain http only to loopback, where
// nobody can be on the path.
func checkCertsURL(u *url.URL) error {
	host := u.Hostname()
	switch {
	case host == "":
		return fmt.Errorf("%q has no host", u.Redacted())
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && (host == "localhost" || isLoopbackIP(host)):
		return nil
	}
	return fmt.Errorf("%q must be https (plain http is allowed only to a loopback address)", u.Redacted())
}

func isLoopbackIP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
