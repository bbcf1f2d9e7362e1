package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/cfaccess"
	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/doctor"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/daemon/oauth"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/daemon/tlsconf"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

type doctorCommand struct{ env *env }

func (c *doctorCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "doctor", "", `Check each layer — configuration, state dir, EmulationStation, the library, the
running game, RetroArch network commands, the MQTT broker, the hook scripts, RomM and
ROMarr when configured, the daemon, and the play-time rules with today's budget and the
clock's trust — and say for every failure what it means and what to do.
Changes nothing. Exits 1 when something is broken.`, &sets)
	asJSON := fs.Bool("json", false, "print JSON")
	verbose := fs.Bool("verbose", false, "show details of every check")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	env, err := doctorEnv(l)
	if err != nil {
		return err
	}
	rep := doctor.Run(ctx, doctor.Checks(env), 5*time.Second)
	if *asJSON {
		if err := rep.WriteJSON(c.env.Stdout); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.env.Stdout, "cabinet %s (commit %s)\n", buildVersion(), buildCommit())
		rep.Write(c.env.Stdout, *verbose)
	}
	if !rep.OK {
		return &codedError{code: exitError}
	}
	return nil
}

// doctorEnv builds the checks' dependencies from the configuration.
func doctorEnv(l *config.Loaded) (doctor.Env, error) {
	cfg := &l.Config
	esc, err := es.New(es.Config{URL: cfg.ESURL, Timeout: 3 * time.Second})
	if err != nil {
		return doctor.Env{}, err
	}
	enabled, port := retroArchNetworkCommands(cfg)
	daemonSt := &daemonStatus{path: cfg.Layout().Socket()}
	env := doctor.Env{
		Config:             doctor.Reading{File: l.File, Err: l.Err, Warnings: l.Warnings},
		Layout:             cfg.Layout(),
		ESURL:              cfg.ESURL,
		ES:                 esc,
		RetroArch:          retroarch.New(cfg.RetroArchAddr, retroarch.WithTimeout(time.Second)),
		RetroArchAddr:      cfg.RetroArchAddr,
		NetworkCommands:    enabled,
		NetworkCommandPort: port,
		Hooks:              rootedLayout(cfg),
		RomsRoot:           cfg.Path("/userdata/roms"),
		RomM:               doctorRomM(cfg),
		ROMarr:             doctorROMarr(cfg),
		MCP:                doctorMCP(cfg),
		Extra:              []doctor.Check{{Name: "daemon", Run: daemonSt.check}},
		PlayTime: doctor.PlayTimeEnv{Rules: householdRules(cfg), Daemon: daemonSt.household, Pads: doctorPads(cfg),
			UIMode: (&uimode.Applier{Settings: cfg.Path(uimode.DefaultSettings), BatoceraConf: l.File}).Read},
		SaveSync: doctor.SaveSyncEnv{Config: saveSync(cfg), Daemon: daemonSt.saveSync},
	}
	// Under a fake root (the simulator, tests) this machine's firewall is
	// not the cabinet's: leave the port unchecked.
	if cfg.Root == "" {
		if fw, err := packaging.RetroArchPortRules(port); err == nil {
			env.RetroArchPortClosed = firewallRulePresent(fw.Present)
		}
	}
	if cfg.MQTTEnabled() {
		id, _ := cfg.CabinetID()
		if id == "" {
			id = "new"
		}
		opts := mqttOptions(cfg, doctorClientID(id))
		env.MQTTBroker, env.MQTTUser = cfg.MQTT.Broker, cfg.MQTT.Username
		env.MQTTConnect = func(ctx context.Context) error {
			conn, err := mqttlink.Dial(ctx, opts)
			if err != nil {
				return err
			}
			conn.Close(ctx)
			return nil
		}
	}
	return env, nil
}

// doctorMCP is MCP over HTTP's certificate and Cloudflare Access as the
// daemon would take them (the same mapping), with a verifier of its own to
// fetch Access's keys.
func doctorMCP(cfg *config.Config) doctor.MCPEnv {
	h := httpConfig(cfg)
	env := doctor.MCPEnv{CertFile: h.TLS.CertFile, KeyFile: h.TLS.KeyFile, TLSOnly: h.TLS.Only, AllowedHosts: h.AllowedHosts}
	if h.TLS.SelfSigned {
		env.SelfSignedCert, _ = tlsconf.SelfSignedPaths(cfg.StatePath())
	}
	if cfg.MCP.OAuth {
		o := &doctor.OAuthEnv{PublicURL: cfg.MCP.PublicURL}
		if h.OAuth == nil {
			_, o.Err = oauth.Issuer(cfg.MCP.PublicURL)
		} else {
			o.PublicURL, o.ClientHosts = h.OAuth.PublicURL, clientHostsShown(h.OAuth.ClientHosts)
			path := cfg.Layout().OAuth()
			o.Clients = func() (int, bool, error) {
				clients, _, limits, err := oauth.Clients(path, time.Now())
				return len(clients), limits.Locked, err
			}
		}
		env.OAuth = o
	}
	a := h.Access
	if a == nil {
		return env
	}
	env.Access = &doctor.AccessEnv{TeamDomain: a.TeamDomain, Audience: a.Audience, Emails: len(a.AllowedEmails), Scopes: a.Scopes}
	v, err := cfaccess.New(a.Options())
	if err != nil {
		env.Access.Err = err
		return env
	}
	env.Access.Fetch = func(ctx context.Context) (int, error) {
		if err := v.Refresh(ctx); err != nil {
			return 0, err
		}
		return v.Stats().Keys, nil
	}
	return env
}

// doctorRomM is the RomM client the library tools would use (the same
// settings), with a shorter timeout.
func doctorRomM(cfg *config.Config) doctor.RomMEnv {
	s := toolsSettings(cfg).RomM
	env := doctor.RomMEnv{URL: s.URL, HasToken: s.Token != "", Platforms: platforms.Default().WithOverrides(s.PlatformMap)}
	if s.URL == "" {
		return env
	}
	c, err := romm.New(romm.Config{URL: s.URL, Token: s.Token, CAFile: s.CAFile, Timeout: 3 * time.Second})
	if err != nil {
		env.Err = err
		return env
	}
	env.Client = c
	return env
}

// doctorROMarr is the ROMarr client the romarr_* tools would use, with a
// shorter timeout.
func doctorROMarr(cfg *config.Config) doctor.ROMarrEnv {
	s := toolsSettings(cfg).ROMarr
	env := doctor.ROMarrEnv{URL: s.URL, HasKey: s.APIKey != ""}
	if s.URL == "" {
		return env
	}
	c, err := romarr.New(romarr.Config{URL: s.URL, APIKey: s.APIKey, Timeout: 3 * time.Second})
	if err != nil {
		env.Err = err
		return env
	}
	env.Client = c
	return env
}

// defaultNetworkCmdPort is RetroArch's network_cmd_port when batocera.conf
// does not set it.
const defaultNetworkCmdPort = 55355

// retroArchNetworkCommands reads global.retroarch.network_cmd_enable and
// global.retroarch.network_cmd_port from batocera.conf.
func retroArchNetworkCommands(cfg *config.Config) (enabled bool, port int) {
	b, err := os.ReadFile(cfg.Path(config.DefaultFile))
	if err != nil {
		return false, defaultNetworkCmdPort
	}
	return parseNetworkCommands(string(b))
}

// parseNetworkCommands reads both keys as batocera-settings-get does (the
// first occurrence); a missing or invalid port is 55355.
func parseNetworkCommands(conf string) (enabled bool, port int) {
	port = defaultNetworkCmdPort
	if v, ok := batoconf.Get([]byte(conf), "global.retroarch.network_cmd_enable"); ok {
		enabled, _ = config.ParseBool(strings.Trim(v, `" `))
	}
	if v, ok := batoconf.Get([]byte(conf), "global.retroarch.network_cmd_port"); ok {
		if p, err := strconv.Atoi(strings.Trim(v, `" `)); err == nil && p >= 1 && p <= 65535 {
			port = p
		}
	}
	return enabled, port
}

// firewallRulePresent runs script (packaging.FirewallScript.Present) with
// sh under a deadline: exit 0 means the rule is in place, 1 that it is
// not, 127 that there is no iptables; anything else is an error.
func firewallRulePresent(script string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", script)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.WaitDelay = 100 * time.Millisecond // a child holding stderr must not outlive the deadline
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			return false, nil
		case errors.As(err, &exit) && exit.ExitCode() == 127:
			return false, fmt.Errorf("check the firewall rule: %w", packaging.ErrNoFirewallTool)
		}
		return false, fmt.Errorf("check the firewall rule: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
}

// rootedLayout is where the hook scripts live on this cabinet (under
// cabinet.paths.root in tests and the simulator).
func rootedLayout(cfg *config.Config) packaging.Layout {
	l := packaging.DefaultLayout()
	l.ESScripts = cfg.Path(l.ESScripts)
	l.UserScripts = cfg.Path(l.UserScripts)
	l.RunDir = cfg.RunDir()
	l.Entries = cfg.Path(l.Entries)
	if cfg.Root == "" {
		return l
	}
	// Under a fake tree the scripts call the binary installed there (cabinet
	// install under cabinet.paths.root), else this one (the simulator).
	if installed := cfg.Path(l.Binary); fileExists(installed) {
		l.Binary = installed
	} else if exe, err := os.Executable(); err == nil {
		l.Binary = exe
	}
	return l
}

// daemonStatus is `cabinet serve`'s status over its socket, asked once:
// the daemon check and the play-time check (today's budget) share it.
type daemonStatus struct {
	path  string
	mu    sync.Mutex
	asked bool
	st    daemon.Status
	err   error
}

func (s *daemonStatus) get(ctx context.Context) (daemon.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.asked {
		s.err = socket.Status(ctx, s.path, &s.st)
		s.asked = true
	}
	return s.st, s.err
}

// household is the play-time report in the status (nil: the daemon has
// none yet).
func (s *daemonStatus) household(ctx context.Context) (*household.Report, error) {
	st, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.Household, nil
}

// saveSync is the save sync's status (nil: the daemon has none yet).
func (s *daemonStatus) saveSync(ctx context.Context) (*savesync.Status, error) {
	st, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.SaveSync, nil
}

// check reports from the daemon's status: whether it runs, its MQTT link,
// its outbox, MCP over HTTP, and whether it refused a configuration edit
// (it then keeps the last good one).
func (s *daemonStatus) check(ctx context.Context, _ []doctor.Result) doctor.Result {
	st, err := s.get(ctx)
	if errors.Is(err, socket.ErrNotRunning) {
		return doctor.Result{Status: doctor.Warn, Detail: "cabinet serve is not running: each hook records its event itself",
			Hint: "run cabinet install, which installs and starts the service (README: \"From the demo to your own cabinet\"), for the MQTT last will, live configuration and MCP on the LAN"}
	}
	if err != nil {
		return doctor.Result{Status: doctor.Fail, Detail: fmt.Sprintf("cabinet serve does not answer on %s", s.path),
			Hint: "restart it: batocera-services stop cabinet; batocera-services start cabinet"}
	}
	facts := []string{fmt.Sprintf("outbox: %d waiting, %d dropped, %d expired; %d sessions logged; %d MQTT reconnects",
		st.OutboxDepth, st.OutboxDropped, st.OutboxExpired, st.Sessions, st.Reconnects)}
	if st.MCPHTTP != "" {
		facts = append(facts, "MCP over HTTP on "+st.MCPHTTP)
	}
	if r := st.RomM; r != nil {
		facts = append(facts, fmt.Sprintf("RomM play history: %d session(s) delivered, %d waiting, %d unmatched (RomM does not have the game)",
			r.Delivered, r.Waiting, r.Unmatched))
		if r.LastError != "" {
			facts = append(facts, "RomM's last failure (retried with backoff): "+r.LastError)
		}
		if r.Device != "" {
			facts = append(facts, r.Device)
		}
	}
	switch {
	case st.ConfigError != "":
		return doctor.Result{Status: doctor.Fail, Detail: fmt.Sprintf("cabinet serve (pid %d) refused the last configuration edit and keeps the last good one: %s", st.PID, st.ConfigError),
			Hint: "fix the key it names; the daemon applies the file as soon as it is valid", Facts: facts}
	case st.MQTTEnabled && !st.MQTTConnected:
		detail := fmt.Sprintf("cabinet serve (pid %d) is not connected to the MQTT broker", st.PID)
		if st.MQTTError != "" {
			detail += ": " + st.MQTTError
		}
		return doctor.Result{Status: doctor.Fail, Detail: detail, Hint: "check the broker and cabinet.mqtt.*; the daemon retries on its own", Facts: facts}
	case st.MCPHTTPError != "":
		hint := "set cabinet.mcp.listen to a free address (or stop what holds it) and restart the service; hooks, MQTT and `cabinet mcp` work meanwhile"
		if strings.HasPrefix(st.MCPHTTPError, "mcp tls:") {
			hint = "fix the certificate (the mcp-tls check above says how); cabinet serve tries it again every minute, and hooks, MQTT and `cabinet mcp` work meanwhile"
		}
		return doctor.Result{Status: doctor.Warn, Detail: fmt.Sprintf("cabinet serve (pid %d) runs, but MCP over HTTP does not: %s", st.PID, st.MCPHTTPError),
			Hint: hint, Facts: facts}
	case st.RomM != nil && st.RomM.DeviceProblem:
		return doctor.Result{Status: doctor.Warn, Detail: fmt.Sprintf("cabinet serve (pid %d) runs, but RomM does not know the cabinet's device", st.PID),
			Hint: "run `cabinet romm pair` again (play sessions still reach RomM's history)", Facts: facts}
	}
	detail := fmt.Sprintf("cabinet serve %s runs (pid %d, since %s)", st.Version, st.PID, st.Started.Format(time.RFC3339))
	if st.RomM != nil && st.RomM.Device != "" {
		detail += "; RomM had forgotten the cabinet's device, which registered again (--verbose for the ids)"
	}
	if n := st.PendingRequests; n > 0 {
		detail += fmt.Sprintf("; following %d library request(s) (library_requests lists them)", n)
	}
	return doctor.Result{Status: doctor.OK, Detail: detail, Facts: facts}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// doctorPads reads the game pads connected, for the play-time check (nil where the kernel's list
// is not: not a cabinet).
func doctorPads(cfg *config.Config) func() ([]controllers.Pad, error) {
	sp := systemPaths(cfg)
	if _, err := os.Stat(sp.InputDevices); err != nil {
		return nil
	}
	return controllers.Scanner{InputDevices: sp.InputDevices, Sys: sp.Sys}.Scan
}
