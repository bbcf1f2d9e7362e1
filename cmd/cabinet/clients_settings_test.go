package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
)

// TestMCPClientsSetting: the daemon announces sensor.batocera_mcp_clients
// exactly when it serves sign-in (daemon.HTTP.OAuth: cabinet.mcp.oauth with
// a usable cabinet.mcp.public_url); a hook never does.
func TestMCPClientsSetting(t *testing.T) {
	tests := []struct {
		name   string
		sets   []string
		daemon bool
		want   bool
	}{
		{"off", nil, true, false},
		{"on", []string{"cabinet.mcp.oauth=1", "cabinet.mcp.public_url=https://cabinet.example:8717"}, true, true},
		{"on without a public URL", []string{"cabinet.mcp.oauth=1"}, true, false},
		{"public URL without oauth", []string{"cabinet.mcp.public_url=https://cabinet.example:8717"}, true, false},
		{"hook", []string{"cabinet.mcp.oauth=1", "cabinet.mcp.public_url=https://cabinet.example:8717"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			conf := filepath.Join(root, "cabinet.conf")
			if err := os.WriteFile(conf, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			l := config.Load(config.Inputs{Environ: []string{"CABINET_CONFIG=" + conf},
				Sets: append([]string{"cabinet.paths.root=" + root}, tt.sets...)})
			if l.Err != nil {
				t.Fatal(l.Err)
			}
			s, err := haSettings(&l.Config, "test", tt.daemon)
			if err != nil {
				t.Fatal(err)
			}
			if s.MCPClients != tt.want {
				t.Errorf("MCPClients = %v, want %v", s.MCPClients, tt.want)
			}
			if tt.daemon {
				dl, err := daemonConfig(l, "test")
				if err != nil {
					t.Fatal(err)
				}
				if got := dl.Config.Rules.Settings.MCPClients; got != (dl.Config.HTTP.OAuth != nil) {
					t.Errorf("MCPClients = %v with HTTP.OAuth %+v", got, dl.Config.HTTP.OAuth)
				}
			}
		})
	}
}
