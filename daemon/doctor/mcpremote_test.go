package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/tlsconf"
)

// selfSigned makes the kept self-signed pair in dir, as cabinet serve does,
// and returns its files and fingerprint.
func selfSigned(t *testing.T, dir string) (cert, key, fp string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	src, err := tlsconf.Open(ctx, tlsconf.Options{SelfSignedDir: dir, Hosts: []string{"cabinet", "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-src.Done()
	cert, key = tlsconf.SelfSignedPaths(dir)
	return cert, key, src.Info().Fingerprint
}

func TestCheckMCPTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key, fp := selfSigned(t, dir)
	_, otherKey, _ := selfSigned(t, t.TempDir())
	soon := func() time.Time { return time.Now().Add(810 * 24 * time.Hour) }
	tests := []struct {
		name   string
		env    MCPEnv
		want   Status
		detail string
	}{
		{name: "off", env: MCPEnv{}, want: Skip, detail: "off"},
		{name: "tls_only without a certificate", env: MCPEnv{TLSOnly: true}, want: Warn, detail: "no certificate"},
		{name: "files", env: MCPEnv{CertFile: cert, KeyFile: key}, want: OK, detail: "files (CN=Cabinet on cabinet, expires in 8"},
		{name: "files, tls_only", env: MCPEnv{CertFile: cert, KeyFile: key, TLSOnly: true}, want: OK, detail: "no plain HTTP"},
		{name: "files expiring", env: MCPEnv{CertFile: cert, KeyFile: key, Now: soon}, want: Warn, detail: "expires on"},
		{name: "key of another certificate", env: MCPEnv{CertFile: cert, KeyFile: otherKey}, want: Fail, detail: "not one key pair"},
		{name: "missing file", env: MCPEnv{CertFile: filepath.Join(dir, "nope.crt"), KeyFile: key}, want: Fail, detail: "does not exist"},
		{name: "key file only", env: MCPEnv{KeyFile: key}, want: Fail, detail: "cabinet.mcp.tls_cert_file"},
		{name: "self-signed", env: MCPEnv{SelfSignedCert: cert}, want: OK, detail: "self-signed (SHA-256 " + fp + ", expires in"},
		{name: "self-signed, not made yet", env: MCPEnv{SelfSignedCert: filepath.Join(t.TempDir(), "mcp-tls.crt")}, want: Warn, detail: "not made yet"},
		{name: "both", env: MCPEnv{CertFile: cert, KeyFile: key, SelfSignedCert: cert}, want: Fail, detail: "both set"},
	}
	for _, tt := range tests {
		r := checkMCPTLS(tt.env)
		if r.Status != tt.want || !strings.Contains(r.Detail, tt.detail) {
			t.Errorf("%s: %s %q, want %s with %q", tt.name, r.Status, r.Detail, tt.want, tt.detail)
		}
		if (r.Status == Fail || r.Status == Warn) && r.Hint == "" {
			t.Errorf("%s: %s without a hint", tt.name, r.Status)
		}
	}
	// The self-signed key stays out of the report.
	keyPEM, _ := os.ReadFile(key)
	r := checkMCPTLS(MCPEnv{SelfSignedCert: cert})
	if strings.Contains(strings.Join(append(r.Facts, r.Detail), "\n"), string(keyPEM[30:60])) {
		t.Error("the report shows the key")
	}
}

func TestCheckCFAccess(t *testing.T) {
	aud := strings.Repeat("0", 60) + "abcd"
	fetched := func(n int, err error) func(context.Context) (int, error) {
		return func(context.Context) (int, error) { return n, err }
	}
	on := func(emails int, fetch func(context.Context) (int, error)) *AccessEnv {
		return &AccessEnv{TeamDomain: "myteam.cloudflareaccess.com", Audience: aud, Emails: emails, Scopes: []string{"read", "play"}, Fetch: fetch}
	}
	tests := []struct {
		name   string
		env    MCPEnv
		want   Status
		detail string
	}{
		{name: "off", env: MCPEnv{}, want: Skip, detail: "off"},
		{name: "on", env: MCPEnv{Access: on(2, fetched(2, nil)), AllowedHosts: []string{"cabinet.example.com"}}, want: OK,
			detail: "on (team myteam.cloudflareaccess.com, aud …abcd, 2 e-mail(s), scopes read play); 2 signing key(s) fetched"},
		{name: "no e-mail list", env: MCPEnv{Access: on(0, fetched(1, nil)), AllowedHosts: []string{"cabinet.example.com"}}, want: OK, detail: "any identity Access lets through"},
		{name: "no allowed host", env: MCPEnv{Access: on(1, fetched(1, nil))}, want: Warn, detail: "cabinet.mcp.allowed_hosts is empty"},
		{name: "keys not fetched", env: MCPEnv{Access: on(1, fetched(0, errors.New("cf access: fetch signing keys: status 404"))), AllowedHosts: []string{"x"}}, want: Fail, detail: "status 404"},
		{name: "refused settings", env: MCPEnv{Access: &AccessEnv{Err: errors.New(`cf access: certs URL: "http://certs.example" must be https`)}}, want: Fail, detail: "must be https"},
	}
	for _, tt := range tests {
		r := checkCFAccess(context.Background(), tt.env)
		if r.Status != tt.want || !strings.Contains(r.Detail, tt.detail) {
			t.Errorf("%s: %s %q, want %s with %q", tt.name, r.Status, r.Detail, tt.want, tt.detail)
		}
		if strings.Contains(r.Detail, aud) {
			t.Errorf("%s: the detail shows the whole audience tag", tt.name)
		}
	}
}
