package config

import (
	"strings"
	"testing"
)

// TestRemoteMCPKeys: the TLS and Cloudflare Access keys are read, and a
// bad value is refused naming the key, its default (off, or read play)
// used instead.
func TestRemoteMCPKeys(t *testing.T) {
	aud := strings.Repeat("4f", 32)
	l := load(t, map[string]string{"/userdata/system/batocera.conf": "cabinet.mcp.tls=self-signed\ncabinet.mcp.tls_only=1\n" +
		"cabinet.mcp.tls_cert_file=/userdata/system/ts.crt\ncabinet.mcp.tls_key_file=/userdata/system/ts.key\n" +
		"cabinet.mcp.cf_access.team_domain=myteam.cloudflareaccess.com\ncabinet.mcp.cf_access.aud=" + aud + "\n" +
		"cabinet.mcp.cf_access.allowed_emails=me@example.com, @family.example kid@example.com\n" +
		"cabinet.mcp.cf_access.scopes=play,read power\n"}, nil)
	if l.Err != nil {
		t.Fatal(l.Err)
	}
	m := l.Config.MCP
	if m.TLS != "self-signed" || !m.TLSOnly || m.TLSCertFile != "/userdata/system/ts.crt" || m.TLSKeyFile != "/userdata/system/ts.key" {
		t.Errorf("TLS keys: %+v", m)
	}
	a := m.CFAccess
	if a.TeamDomain != "myteam.cloudflareaccess.com" || a.AUD != aud || !a.On() ||
		strings.Join(a.AllowedEmails, " ") != "me@example.com @family.example kid@example.com" ||
		strings.Join(a.Scopes, " ") != "read play power" {
		t.Errorf("cf_access keys: %+v", a)
	}
	if d := Default().MCP; d.CFAccess.On() || strings.Join(d.CFAccess.Scopes, " ") != "read play" || d.TLS != "" || d.TLSOnly {
		t.Errorf("defaults: %+v", d)
	}

	tests := []struct {
		key, value string
		ok         bool
	}{
		{"cabinet.mcp.tls", "off", true},
		{"cabinet.mcp.tls", "on", false},
		{"cabinet.mcp.tls_cert_file", "relative.crt", false},
		{"cabinet.mcp.cf_access.team_domain", "https://myteam.cloudflareaccess.com/", true},
		{"cabinet.mcp.cf_access.team_domain", "myteam", false},
		{"cabinet.mcp.cf_access.team_domain", "my team.cloudflareaccess.com", false},
		{"cabinet.mcp.cf_access.aud", strings.ToUpper(aud), true},
		{"cabinet.mcp.cf_access.aud", aud[:63], false},
		{"cabinet.mcp.cf_access.allowed_emails", "me@example.com,@example.org", true},
		{"cabinet.mcp.cf_access.allowed_emails", "me", false},
		{"cabinet.mcp.cf_access.allowed_emails", "me@", false},
		{"cabinet.mcp.cf_access.certs_url", "https://certs.example/keys", true},
		{"cabinet.mcp.cf_access.certs_url", "ftp://certs.example/keys", false},
		{"cabinet.mcp.cf_access.scopes", "read", true},
		{"cabinet.mcp.cf_access.scopes", "read,pwer", false},
		{"cabinet.mcp.cf_access.scopes", "", false},
	}
	for _, tt := range tests {
		err := CheckValue(tt.key, tt.value)
		if (err == nil) != tt.ok {
			t.Errorf("%s=%q: %v, want ok %v", tt.key, tt.value, err, tt.ok)
		}
		if !tt.ok && (err == nil || !strings.Contains(err.Error(), tt.key)) {
			t.Errorf("%s=%q: error %v does not name the key", tt.key, tt.value, err)
		}
	}
	bad := load(t, map[string]string{"/userdata/system/batocera.conf": "cabinet.mcp.cf_access.scopes=read household pwer\n"}, nil)
	if bad.Err == nil || !strings.Contains(bad.Err.Error(), "cabinet.mcp.cf_access.scopes") || strings.Join(bad.Config.MCP.CFAccess.Scopes, " ") != "read play" {
		t.Errorf("unknown scope: err %v, scopes %v; want the key named and read play", bad.Err, bad.Config.MCP.CFAccess.Scopes)
	}
}
