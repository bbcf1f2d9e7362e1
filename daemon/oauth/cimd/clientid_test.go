package cimd

import (
	"errors"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestParseClientID(t *testing.T) {
	for _, c := range []struct {
		id   string
		host string // "": refused
		port uint16
		says string // in the refusal
	}{
		{id: "https://claude.ai/oauth/mcp-oauth-client-metadata", host: "claude.ai", port: 443},
		{id: "https://claude.ai:8443/x", host: "claude.ai", port: 8443},
		{id: "https://chatgpt.com/oauth/abc-123_x~y/client.json", host: "chatgpt.com", port: 443},
		{id: "https://insiders.vscode.dev/oauth/client-metadata.json", host: "insiders.vscode.dev", port: 443},
		{id: "https://claude.ai//x", host: "claude.ai", port: 443},
		{id: "https://claude.ai/x/", host: "claude.ai", port: 443},
		{id: "https://claude.ai/a%2Fb", host: "claude.ai", port: 443},
		{id: "https://claude.ai/..a/b.", host: "claude.ai", port: 443},
		{id: "https://xn--bcher-kva.net/x", host: "xn--bcher-kva.net", port: 443},
		{id: "https://1password.com/x", host: "1password.com", port: 443},
		{id: "https://claude.ai/" + strings.Repeat("a", maxClientIDLen-len("https://claude.ai/")), host: "claude.ai", port: 443},

		{id: "", says: "must start with https://"},
		{id: "claude.ai/x", says: "must start with https://"},
		{id: "http://claude.ai/x", says: "must start with https://"},
		{id: "HTTPS://claude.ai/x", says: "must start with https://"},
		{id: "https:claude.ai/x", says: "must start with https://"},
		{id: "https://claude.ai", says: "no path"},
		{id: "https://claude.ai/", says: "no path"},
		{id: "https://claude.ai:443", says: "no path"},
		{id: "https:///x", says: "no host"},
		{id: "https://claude.ai/a/./b", says: `"." or ".."`},
		{id: "https://claude.ai/a/../b", says: `"." or ".."`},
		{id: "https://claude.ai/..", says: `"." or ".."`},
		{id: "https://claude.ai/x/.", says: `"." or ".."`},
		{id: "https://claude.ai/%2e%2E/b", says: `"." or ".."`},
		{id: "https://claude.ai/.%2e", says: `"." or ".."`},
		{id: "https://claude.ai/x#frag", says: "fragment"},
		{id: "https://claude.ai/x#", says: "fragment"},
		{id: "https://claude.ai/x?a=b", says: "query"},
		{id: "https://claude.ai/x?", says: "query"},
		{id: "https://user@claude.ai/x", says: "user name"},
		{id: "https://user:pw@claude.ai/x", says: "user name"},
		{id: "https://@claude.ai/x", says: "user name"},
		{id: "https://claude.ai\\@evil.example.net/x", says: "backslash"},
		{id: "https://160.79.104.10/x", says: "IP address"},
		{id: "https://160.79.104.10:443/x", says: "IP address"},
		{id: "https://[::1]/x", says: "IP address"},
		{id: "https://[2607:6bc0::10]:443/x", says: "IP address"},
		{id: "https://0x7f.1/x", says: "reads as an IP address"},
		{id: "https://10.1/x", says: "reads as an IP address"},
		{id: "https://2130706433/x", says: "no dot"},
		{id: "https://Claude.ai/x", says: "capital letters"},
		{id: "https://claude.ai./x", says: "not a valid host name"},
		{id: "https://claude..ai/x", says: "not a valid host name"},
		{id: "https://-claude.ai/x", says: "not a valid host name"},
		{id: "https://claude_ai.com/x", says: "not a valid host name"},
		{id: "https://" + strings.Repeat("a", 64) + ".com/x", says: "not a valid host name"},
		{id: "https://localhost/x", says: "no dot"},
		{id: "https://cabinet.localhost/x", says: ".localhost"},
		{id: "https://batocera.local/x", says: ".local"},
		{id: "https://router.lan/x", says: ".lan"},
		{id: "https://nas.home.arpa/x", says: ".home.arpa"},
		{id: "https://metadata.google.internal/x", says: ".internal"},
		{id: "https://claude.ai:0/x", says: "port"},
		{id: "https://claude.ai:65536/x", says: "port"},
		{id: "https://claude.ai:/x", says: "port"},
		{id: "https://claude.ai:0443/x", says: "port"},
		{id: "https://claude.ai:https/x", says: "not a valid URL"},
		{id: "https://claude.ai/a b", says: "space"},
		{id: "https://claude.ai/a\tb", says: "control"},
		{id: "https://claude.ai/\x00", says: "control"},
		{id: "https://claude.ai/caf\u00e9", says: "outside ASCII"},
		{id: "https://claude.ai/\u202egnp.exe", says: "outside ASCII"},
		{id: "https://claude.ai/%zz", says: "not a valid URL"},
		{id: "https://claude.ai/" + strings.Repeat("a", maxClientIDLen), says: "at most 512"},
	} {
		got, err := parseClientID(c.id)
		switch {
		case c.host != "" && err != nil:
			t.Errorf("parseClientID(%q): %v", c.id, err)
		case c.host != "" && (got.host != c.host || got.port != c.port):
			t.Errorf("parseClientID(%q) = %+v, want %s:%d", c.id, got, c.host, c.port)
		case c.host == "" && err == nil:
			t.Errorf("parseClientID(%q) = %+v, want it refused (%s)", c.id, got, c.says)
		case c.host == "" && (!errors.Is(err, ErrClientID) || !strings.Contains(err.Error(), c.says)):
			t.Errorf("parseClientID(%q): %v; want ErrClientID saying %q", c.id, err, c.says)
		}
		if err != nil {
			checkMessage(t, err)
		}
	}
}

// TestGetRefusesBeforeTheNetwork: a refused URL or host costs no lookup and no connection.
func TestGetRefusesBeforeTheNetwork(t *testing.T) {
	r := newRig(t)
	f := r.fetcher(Options{})
	for _, id := range []string{"https://claude.ai/x?next=http://10.0.0.1/", "https://evil.example.net/client.json", "https://[::1]/x"} {
		if _, err := f.Get(cabinettest.Context(t), id); err == nil {
			t.Errorf("Get(%q) succeeded", id)
		}
	}
	if n := r.lookups.Load(); n != 0 {
		t.Errorf("%d lookups for refused client_ids", n)
	}
	if d := r.dials(); len(d) != 0 {
		t.Errorf("dialed %v for refused client_ids", d)
	}
}

func TestIsURL(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"https://claude.ai/oauth/mcp-oauth-client-metadata", true},
		{"HTTPS://claude.ai/x", true}, // Get says why it is refused
		{"https://", false},
		{"http://claude.ai/x", false},
		{"my-static-client", false},
		{"", false},
		{" https://claude.ai/x", false},
	} {
		if got := IsURL(c.id); got != c.want {
			t.Errorf("IsURL(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}

func TestNewHosts(t *testing.T) {
	for _, c := range []struct {
		name  string
		hosts []string
		host  string
		want  bool
	}{
		{"nil is the default list", nil, "claude.ai", true},
		{"default list has vscode", nil, "vscode.dev", true},
		{"default list is not everything", nil, "evil.example.net", false},
		{"empty allows none", []string{}, "claude.ai", false},
		{"custom", []string{"mcp.example.net"}, "mcp.example.net", true},
		{"custom replaces the default", []string{"mcp.example.net"}, "claude.ai", false},
		{"star", []string{"*"}, "anything.example.net", true},
		{"star among others", []string{"claude.ai", "*"}, "anything.example.net", true},
		{"lower-cased and trimmed", []string{" VSCode.dev "}, "vscode.dev", true},
		{"exact, not a suffix", []string{"claude.ai"}, "evil.claude.ai", false},
	} {
		f := New(Options{Hosts: c.hosts})
		if got := f.allow("https://"+c.host+"/x", c.host) == nil; got != c.want {
			t.Errorf("%s: host %s allowed = %v, want %v", c.name, c.host, got, c.want)
		}
	}
}
