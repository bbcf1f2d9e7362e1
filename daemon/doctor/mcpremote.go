package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/tlsconf"
)

// MCPEnv is how MCP over HTTP is reached from outside the house, as the
// checks see it: its certificate (cabinet.mcp.tls*) and Cloudflare Access
// (cabinet.mcp.cf_access.*). The zero value is both off.
type MCPEnv struct {
	// CertFile and KeyFile are the configured certificate files (resolved);
	// SelfSignedCert, when set, is the kept self-signed certificate
	// (cabinet.mcp.tls=self-signed). TLSOnly is cabinet.mcp.tls_only.
	CertFile, KeyFile string
	SelfSignedCert    string
	TLSOnly           bool
	// Access is nil while Cloudflare Access is off.
	Access *AccessEnv
	// AllowedHosts is cabinet.mcp.allowed_hosts, where the tunnel's public
	// hostname must be.
	AllowedHosts []string
	// Now is the clock of the expiry (nil: time.Now).
	Now func() time.Time
	// OAuth is nil while sign-in (cabinet.mcp.oauth) is off.
	OAuth *OAuthEnv
}

// OAuthEnv is the cabinet's authorization server as doctor sees it.
type OAuthEnv struct {
	PublicURL string
	// Err is why cabinet.mcp.public_url cannot be the issuer.
	Err error
	// ClientHosts are the hosts whose client metadata documents are read
	// ("*": any; empty: none).
	ClientHosts []string
	// Clients reads the signed-in clients' file: how many, whether
	// wrong PINs locked sign-in.
	Clients func() (clients int, locked bool, err error)
}

// AccessEnv is cabinet.mcp.cf_access.* without anything secret: the
// audience tag is shown by its last four digits only.
type AccessEnv struct {
	TeamDomain, Audience string
	Emails               int
	Scopes               []string
	// Err is why the verifier refuses these settings; Fetch, otherwise,
	// fetches the team's signing keys and says how many it holds.
	Err   error
	Fetch func(ctx context.Context) (keys int, err error)
}

// Check names of MCPEnv.
const (
	CheckMCPTLS   = "mcp-tls"
	CheckCFAccess = "cf-access"
	CheckMCPOAuth = "mcp-oauth"
)

func mcpChecks(env MCPEnv) []Check {
	return []Check{
		{CheckMCPTLS, func(context.Context, []Result) Result { return checkMCPTLS(env) }},
		{CheckCFAccess, func(ctx context.Context, _ []Result) Result { return checkCFAccess(ctx, env) }},
		{CheckMCPOAuth, func(context.Context, []Result) Result { return checkOAuth(env) }},
	}
}

// checkOAuth says whether clients can sign in, and if not why: OAuth is
// served only over HTTPS, with an issuer the clients reach and a
// certificate they trust (they refuse self-signed ones).
func checkOAuth(env MCPEnv) Result {
	o := env.OAuth
	if o == nil {
		return Result{Status: Skip, Detail: "off (cabinet.mcp.oauth=1 with cabinet.mcp.public_url lets MCP clients such as claude.ai sign in with a PIN shown on the TV)"}
	}
	if o.Err != nil {
		return Result{Status: Fail, Detail: o.Err.Error() + "; until then the sign-in paths answer 404",
			Hint: "set cabinet.mcp.public_url to the https address clients use (README: \"Connect Claude (and others) by signing in\")"}
	}
	u, _ := url.Parse(o.PublicURL)
	host := u.Hostname()
	facts := []string{"issuer " + o.PublicURL, "resource " + o.PublicURL + "/mcp"}
	switch {
	case len(o.ClientHosts) == 0:
		facts = append(facts, "client metadata documents: off (clients register themselves)")
	default:
		facts = append(facts, "client metadata documents from: "+strings.Join(o.ClientHosts, ", "))
	}
	clients, locked, err := 0, false, error(nil)
	if o.Clients != nil {
		clients, locked, err = o.Clients()
	}
	if err != nil {
		return Result{Status: Fail, Detail: err.Error(), Facts: facts, Hint: "signed-in clients are refused until the file reads; remove it to start again"}
	}
	detail := fmt.Sprintf("on: issuer %s, %d client(s) signed in", o.PublicURL, clients)
	if locked {
		return Result{Status: Warn, Detail: detail + "; sign-in is LOCKED after 20 wrong PINs today", Facts: facts,
			Hint: "if nobody was guessing, `cabinet clients unlock` allows sign-in again"}
	}
	files := env.CertFile != "" || env.KeyFile != ""
	switch {
	case env.SelfSignedCert != "" && !files:
		return Result{Status: Warn, Detail: detail + "; the cabinet's certificate is self-signed, which MCP clients refuse", Facts: facts,
			Hint: "serve a certificate they trust (tailscale cert, cabinet.mcp.tls_cert_file) or reach the cabinet through a tunnel at " + o.PublicURL}
	case !files:
		return Result{Status: OK, Detail: detail + "; no certificate here, so only through a tunnel on the cabinet (cloudflared, tailscale serve/funnel) to " + o.PublicURL,
			Facts: facts}
	}
	if info, err := tlsconf.CheckFiles(env.CertFile, env.KeyFile); err == nil && !certNames(info, host) {
		return Result{Status: Warn, Detail: detail + "; the certificate is not for " + host, Facts: facts,
			Hint: "use the certificate of " + host + " (tailscale cert " + host + "), or set cabinet.mcp.public_url to one of its names: " + strings.Join(info.DNSNames, ", ")}
	}
	return Result{Status: OK, Detail: detail, Facts: facts}
}

// certNames: the certificate is valid for host (a name, a wildcard's
// one-label match, or an address).
func certNames(info tlsconf.Info, host string) bool {
	host = strings.ToLower(host)
	for _, n := range info.DNSNames {
		n = strings.ToLower(n)
		if n == host {
			return true
		}
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if i := strings.IndexByte(host, '.'); i > 0 && host[i+1:] == rest {
				return true
			}
		}
	}
	return slices.Contains(info.IPs, host)
}

func checkMCPTLS(env MCPEnv) Result {
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	files := env.CertFile != "" || env.KeyFile != ""
	var info tlsconf.Info
	var err error
	mode := "files"
	switch {
	case files && env.SelfSignedCert != "":
		return Result{Status: Fail, Detail: "cabinet.mcp.tls=self-signed and cabinet.mcp.tls_cert_file are both set",
			Hint: "keep one: the files (e.g. tailscale cert's) or the self-signed certificate"}
	case !files && env.SelfSignedCert == "" && env.TLSOnly:
		return Result{Status: Warn, Detail: "cabinet.mcp.tls_only=1, but no certificate is configured: MCP over HTTP is plain HTTP",
			Hint: "set cabinet.mcp.tls_cert_file and cabinet.mcp.tls_key_file, or cabinet.mcp.tls=self-signed"}
	case !files && env.SelfSignedCert == "":
		return Result{Status: Skip, Detail: "off: MCP over HTTP is plain HTTP (cabinet.mcp.tls_cert_file and tls_key_file, or cabinet.mcp.tls=self-signed, turn HTTPS on)"}
	case files:
		info, err = tlsconf.CheckFiles(env.CertFile, env.KeyFile)
	default:
		mode = tlsconf.SelfSignedSource
		info, err = tlsconf.ReadInfo(env.SelfSignedCert)
		if errors.Is(err, fs.ErrNotExist) {
			return Result{Status: Warn, Detail: "self-signed: not made yet",
				Hint: "cabinet serve makes it when it starts, in " + env.SelfSignedCert + "; run doctor again then for its fingerprint"}
		}
	}
	if err != nil {
		return Result{Status: Fail, Detail: err.Error(),
			Hint: "fix the files named (tailscale cert writes both again); cabinet serve takes them as soon as they load"}
	}
	plain := "plain HTTP on the same port too"
	if env.TLSOnly {
		plain = "no plain HTTP (cabinet.mcp.tls_only)"
	}
	facts := []string{"subject " + info.Subject + ", issuer " + info.Issuer,
		"names: " + strings.Join(append(append([]string{}, info.DNSNames...), info.IPs...), ", "),
		"SHA-256 " + info.Fingerprint, "from " + info.Source}
	days := int(info.NotAfter.Sub(now()).Hours() / 24)
	detail := fmt.Sprintf("files (%s, expires in %d days); %s", info.Subject, days, plain)
	if mode == tlsconf.SelfSignedSource {
		detail = fmt.Sprintf("self-signed (SHA-256 %s, expires in %d days); %s", info.Fingerprint, days, plain)
	}
	if exp := info.Expiry(now()); exp != nil {
		return Result{Status: Warn, Detail: exp.Error(), Hint: "renew the certificate; cabinet serve takes the new files without a restart", Facts: facts}
	}
	return Result{Status: OK, Detail: detail, Facts: facts}
}

func checkCFAccess(ctx context.Context, env MCPEnv) Result {
	a := env.Access
	if a == nil {
		return Result{Status: Skip, Detail: "off (cabinet.mcp.cf_access.team_domain and .aud let Claude's connectors in through a Cloudflare Tunnel)"}
	}
	if a.Err != nil {
		return Result{Status: Fail, Detail: a.Err.Error(), Hint: "fix cabinet.mcp.cf_access.*; `cabinet config` shows every value and its source"}
	}
	aud := a.Audience
	if len(aud) > 4 {
		aud = "…" + aud[len(aud)-4:]
	}
	who := "any identity Access lets through"
	if a.Emails > 0 {
		who = fmt.Sprintf("%d e-mail(s)", a.Emails)
	}
	detail := fmt.Sprintf("on (team %s, aud %s, %s, scopes %s)", a.TeamDomain, aud, who, strings.Join(a.Scopes, " "))
	if a.Fetch == nil {
		return Result{Status: OK, Detail: detail}
	}
	keys, err := a.Fetch(ctx)
	if err != nil {
		return Result{Status: Fail, Detail: detail + "; " + err.Error(),
			Hint: "check cabinet.mcp.cf_access.team_domain (your <team>.cloudflareaccess.com, shown in the Zero Trust settings) and that the cabinet reaches the internet"}
	}
	detail += fmt.Sprintf("; %d signing key(s) fetched", keys)
	if len(env.AllowedHosts) == 0 {
		return Result{Status: Warn, Detail: detail + "; cabinet.mcp.allowed_hosts is empty",
			Hint: "add the tunnel's public hostname to cabinet.mcp.allowed_hosts, or every request through the tunnel is refused (421)"}
	}
	return Result{Status: OK, Detail: detail, Facts: []string{"allowed hosts: " + strings.Join(env.AllowedHosts, ", ")}}
}
