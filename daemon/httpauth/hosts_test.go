package httpauth

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGuardHosts: Hosts is the list the guard checks a Host against (the
// daemon hands it to mcp-go's own check): loopback, the machine's name
// and .local, the configured hosts trimmed and lowercased, no empty entry,
// sorted; every entry passes the guard's check, and the list is a copy.
func TestGuardHosts(t *testing.T) {
	g := New(Options{TokenPath: filepath.Join(t.TempDir(), "token"),
		AllowedHosts: []string{" Cabinet.Example.com ", "", "cabinet.tail0000.ts.net"}})
	hosts := g.Hosts()
	if !slices.IsSorted(hosts) {
		t.Errorf("Hosts not sorted: %v", hosts)
	}
	want := []string{"localhost", "127.0.0.1", "::1", "cabinet.example.com", "cabinet.tail0000.ts.net"}
	if h, err := os.Hostname(); err == nil && h != "" {
		want = append(want, strings.ToLower(h), strings.ToLower(h)+".local")
	}
	for _, w := range want {
		if !slices.Contains(hosts, w) {
			t.Errorf("Hosts lacks %q: %v", w, hosts)
		}
	}
	if slices.Contains(hosts, "") {
		t.Errorf("Hosts has an empty entry: %q", hosts)
	}
	for _, h := range hosts {
		if !g.hostAllowed(h) {
			t.Errorf("%q is in Hosts but the guard refuses it", h)
		}
	}
	hosts[0] = "evil.example"
	if g.hostAllowed("evil.example") || slices.Contains(g.Hosts(), "evil.example") {
		t.Error("changing the list Hosts returned changed the guard's")
	}
}
