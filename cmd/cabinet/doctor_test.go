package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging"
)

func TestDoctorParseNetworkCommands(t *testing.T) {
	for _, tt := range []struct {
		name    string
		conf    string
		enabled bool
		port    int
	}{
		{"empty", "", false, 55355},
		{"enabled, default port", "global.retroarch.network_cmd_enable=true\n", true, 55355},
		{"quoted, spaced, CRLF", "  global.retroarch.network_cmd_enable = \"true\"\r\nglobal.retroarch.network_cmd_port= \"4242\"\r\n", true, 4242},
		{"first occurrence wins", "global.retroarch.network_cmd_port=4242\nglobal.retroarch.network_cmd_enable=false\nglobal.retroarch.network_cmd_enable=true\nglobal.retroarch.network_cmd_port=5000\n", false, 4242},
		{"commented out", "#global.retroarch.network_cmd_enable=true\n# global.retroarch.network_cmd_port=4242\n", false, 55355},
		{"invalid port", "global.retroarch.network_cmd_enable=1\nglobal.retroarch.network_cmd_port=70000\n", true, 55355},
		{"invalid first port hides a later one", "global.retroarch.network_cmd_port=abc\nglobal.retroarch.network_cmd_port=4242\n", false, 55355},
		{"other scopes do not count", "snes.retroarch.network_cmd_enable=true\nsnes.retroarch.network_cmd_port=4242\n", false, 55355},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enabled, port := parseNetworkCommands(tt.conf)
			if enabled != tt.enabled || port != tt.port {
				t.Errorf("parseNetworkCommands(%q) = %v, %d; want %v, %d", tt.conf, enabled, port, tt.enabled, tt.port)
			}
		})
	}
}

// The rule check maps Present's exit status (fake scripts here: nothing
// touches this machine's firewall).
func TestDoctorFirewallRulePresent(t *testing.T) {
	for _, tt := range []struct {
		name, script string
		closed       bool
		err          string // contained in the error ("": none)
		noTool       bool
	}{
		{"in place", "exit 0", true, "", false},
		{"absent", "echo 'iptables: Bad rule' >&2; exit 1", false, "", false},
		{"no iptables", "cabinet-no-such-iptables -C INPUT", false, "no firewall tool", true},
		{"not root", "echo 'Permission denied (you must be root)' >&2; exit 4", false, "you must be root", false},
		{"hangs", "sleep 10", false, "killed", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			closed, err := firewallRulePresent(tt.script)(ctx)
			if closed != tt.closed || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("closed, err = %v, %v; want %v, error containing %q", closed, err, tt.closed, tt.err)
			}
			if errors.Is(err, packaging.ErrNoFirewallTool) != tt.noTool {
				t.Errorf("error %v: is ErrNoFirewallTool = %v, want %v", err, !tt.noTool, tt.noTool)
			}
		})
	}
}
