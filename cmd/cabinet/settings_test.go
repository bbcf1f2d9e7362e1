package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/doctor"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator"
)

// The daemon's configuration as mapped from the file the simulator writes:
// every path under the fake tree, the versions read from it, the daemon's
// own entities, MQTT under the daemon's client id.
func TestDaemonConfigFromCabinetKeys(t *testing.T) {
	cab, err := simulator.Start(simulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cab.Close()
	conf, err := cab.WriteConfig(t.TempDir(), "cabinet.mqtt.broker=tcp://127.0.0.1:1883", "cabinet.mqtt.password=pw-secret",
		"cabinet.ha.controls=1", "cabinet.tracker.min_session_seconds=30", "cabinet.mcp.read_only=1")
	if err != nil {
		t.Fatal(err)
	}
	l := config.Load(config.Inputs{Environ: []string{"CABINET_CONFIG=" + conf}})
	if l.Err != nil {
		t.Fatal(l.Err)
	}
	got, err := daemonConfig(l, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	c := got.Config
	id := c.Rules.Settings.ID
	checks := []struct {
		what      string
		got, want any
	}{
		{"state dir", c.Layout.State, cab.Path("/userdata/system/cabinet")},
		{"run dir", c.Layout.Run, cab.Path("/var/run/cabinet")},
		{"socket", c.Layout.Socket(), filepath.Join(cab.Path("/var/run/cabinet"), "cabinet.sock")},
		{"settings version", c.Rules.Settings.BatoceraVersion, "42"},
		{"thermal zones", c.Diagnostics.ThermalZones, cab.Path("/sys/class/thermal/thermal_zone*/temp")},
		{"daemon entities", c.Rules.Settings.Daemon && c.Rules.Settings.Controls, true},
		{"name", c.Rules.Settings.Name, "Simulated Cabinet"},
		{"publishing", c.Rules.Publishing, true},
		{"min session", c.Rules.Tracker.MinSession, 30 * time.Second},
		{"screensaver launches", c.Rules.Tracker.IgnoreScreensaverLaunches, tracker.DefaultConfig().IgnoreScreensaverLaunches},
		{"client id", c.MQTT.ClientID, "cabinet_" + id},
		{"password", c.MQTT.Password, "pw-secret"},
		{"secrets", strings.Join(c.Secrets, ","), "pw-secret"},
		{"tools es", c.Tools.ESURL, cab.ESURL()},
		{"tools retroarch", c.Tools.RetroArchAddr, cab.RetroArchAddr()},
		{"tools read only", c.Tools.ReadOnly, true},
		{"tools name", c.Tools.Name, "Simulated Cabinet"},
		{"tools state", c.Tools.Paths.StateDir, cab.Path("/userdata/system/cabinet")},
		{"tools version file", c.Tools.Paths.BatoceraVersion, cab.Path("/usr/share/batocera/batocera.version")},
		{"tools /proc", c.Tools.Paths.LoadAvg, "/proc/loadavg"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.what, ch.got, ch.want)
		}
	}
	if id == "" {
		t.Error("no cabinet id")
	}
	// A hook's settings announce neither diagnostics nor controls.
	s, err := haSettings(&l.Config, "1.2.3", false)
	if err != nil || s.Daemon || s.Controls || s.ID != id {
		t.Errorf("hook settings = %+v, %v", s, err)
	}
	// MQTT off: no broker in the daemon's options.
	off := config.Load(config.Inputs{Environ: []string{"CABINET_CONFIG=" + conf, "CABINET_MQTT_BROKER="}})
	if got, _ := daemonConfig(off, "1.2.3"); got.Config.MQTT.Broker != "" || got.Config.Rules.Publishing {
		t.Errorf("MQTT off: %+v", got.Config.MQTT)
	}
}

// doctor's daemon check reads the daemon's status over its socket and
// says when MCP over HTTP does not listen, naming the key to change.
func TestDaemonCheckShowsHTTPTaken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cabinet.sock")
	st := daemon.Status{PID: 42, Version: "1.2.3", MCPHTTPError: "cannot listen on 0.0.0.0:8717: address already in use; free the port or set cabinet.mcp.listen to another address"}
	srv := &socket.Server{Path: path, Status: func() any { return st }}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	r := (&daemonStatus{path: path}).check(ctx, nil)
	if r.Status != doctor.Warn || !strings.Contains(r.Detail, "0.0.0.0:8717") || !strings.Contains(r.Hint, "cabinet.mcp.listen") {
		t.Errorf("daemon check = %+v; want a warning naming the address and cabinet.mcp.listen", r)
	}
	st.MCPHTTPError, st.MCPHTTP = "", "127.0.0.1:8717"
	if r := (&daemonStatus{path: path}).check(ctx, nil); r.Status != doctor.OK || !strings.Contains(strings.Join(r.Facts, " "), "127.0.0.1:8717") {
		t.Errorf("daemon check when listening = %+v", r)
	}
	cancel()
	if r := (&daemonStatus{path: filepath.Join(t.TempDir(), "none.sock")}).check(context.Background(), nil); r.Status != doctor.Warn || !strings.Contains(r.Detail, "not running") {
		t.Errorf("no daemon: %+v", r)
	}
}

// The TLS and Cloudflare Access keys map to the daemon's HTTP section:
// files under cabinet.paths.root, tls=off over the files, Access only
// when set, and settings the verifier refuses reported as invalid with
// Access left off.
func TestHTTPConfigRemoteKeys(t *testing.T) {
	aud := strings.Repeat("ab", 32)
	tests := []struct {
		name     string
		sets     []string
		want     daemon.TLS
		access   bool
		wantErr  string
		wantHost []string
	}{
		{name: "defaults"},
		{name: "files", sets: []string{"cabinet.mcp.tls_cert_file=/userdata/c.crt", "cabinet.mcp.tls_key_file=/userdata/c.key"},
			want: daemon.TLS{CertFile: "<root>/userdata/c.crt", KeyFile: "<root>/userdata/c.key"}},
		{name: "off wins over files", sets: []string{"cabinet.mcp.tls=off", "cabinet.mcp.tls_cert_file=/c.crt", "cabinet.mcp.tls_key_file=/c.key", "cabinet.mcp.tls_only=1"},
			want: daemon.TLS{Only: true}},
		{name: "self-signed", sets: []string{"cabinet.mcp.tls=self-signed"}, want: daemon.TLS{SelfSigned: true}},
		{name: "access", sets: []string{"cabinet.mcp.cf_access.team_domain=t.cloudflareaccess.com", "cabinet.mcp.cf_access.aud=" + aud,
			"cabinet.mcp.allowed_hosts=cabinet.example.com"}, access: true, wantHost: []string{"cabinet.example.com"}},
		{name: "access without aud", sets: []string{"cabinet.mcp.cf_access.team_domain=t.cloudflareaccess.com"},
			wantErr: "cabinet.mcp.cf_access.aud must be"},
		{name: "certs URL not https", sets: []string{"cabinet.mcp.cf_access.team_domain=t.cloudflareaccess.com", "cabinet.mcp.cf_access.aud=" + aud,
			"cabinet.mcp.cf_access.certs_url=http://certs.example/keys"}, wantErr: "must be https"},
	}
	for _, tt := range tests {
		// Everything under a fake root, the file an empty one: nothing of
		// this machine's is read or written.
		root := t.TempDir()
		conf := filepath.Join(root, "cabinet.conf")
		if err := os.WriteFile(conf, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		l := config.Load(config.Inputs{Environ: []string{"CABINET_CONFIG=" + conf},
			Sets: append([]string{"cabinet.paths.root=" + root}, tt.sets...)})
		tt.want.CertFile = strings.ReplaceAll(tt.want.CertFile, "<root>", root)
		tt.want.KeyFile = strings.ReplaceAll(tt.want.KeyFile, "<root>", root)
		if l.Err != nil {
			t.Fatalf("%s: %v", tt.name, l.Err)
		}
		dl, err := daemonConfig(l, "test")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		h := dl.Config.HTTP
		if h.TLS != tt.want || (h.Access != nil) != tt.access || strings.Join(h.AllowedHosts, ",") != strings.Join(tt.wantHost, ",") {
			t.Errorf("%s: TLS %+v access %+v hosts %v; want %+v, access %v", tt.name, h.TLS, h.Access, h.AllowedHosts, tt.want, tt.access)
		}
		if got := ""; dl.Err != nil || tt.wantErr != "" {
			if dl.Err != nil {
				got = dl.Err.Error()
			}
			if tt.wantErr == "" || !strings.Contains(got, tt.wantErr) {
				t.Errorf("%s: error %q, want %q", tt.name, got, tt.wantErr)
			}
		}
		if tt.access && (h.Access.Audience != aud || strings.Join(h.Access.Scopes, " ") != "read play") {
			t.Errorf("%s: access %+v", tt.name, h.Access)
		}
	}
}
