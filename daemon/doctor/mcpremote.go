package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
)

func mcpChecks(env MCPEnv) []Check {
	return []Check{
		{CheckMCPTLS, func(context.Context, []Result) Result { return checkMCPTLS(env) }},
		{CheckCFAccess, func(ctx context.Context, _ []Result) Result { return checkCFAccess(ctx, env) }},
	}
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
