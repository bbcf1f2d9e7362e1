package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/doctor"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
	"github.com/batocera-cabinet/cabinet/packaging/deploy"
	"github.com/batocera-cabinet/cabinet/packaging/install"
)

type installCommand struct{ env *env }

// saveFlag collects repeated --save key=value.
type saveFlag []batoconf.KV

func (s *saveFlag) String() string { return fmt.Sprint(*s) }
func (s *saveFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("want key=value, such as cabinet.mqtt.broker=tcp://homeassistant.lan:1883")
	}
	if !strings.HasPrefix(k, "cabinet.") {
		return fmt.Errorf("%s: --save writes cabinet.* settings only (set other keys with batocera-settings-set)", k)
	}
	if _, secret := config.SecretFileKey(k); secret {
		return fmt.Errorf("%s is a secret: use --save-secret %s, which reads it from a prompt or standard input, never from the command line", k, k)
	}
	if err := config.CheckValue(k, val); err != nil {
		return err
	}
	*s = append(*s, batoconf.KV{Key: k, Value: val})
	return nil
}

// secretFlag collects repeated --save-secret KEY.
type secretFlag []string

func (s *secretFlag) String() string { return strings.Join(*s, " ") }
func (s *secretFlag) Set(v string) error {
	if _, ok := config.SecretFileKey(v); !ok {
		return fmt.Errorf("%s is not a secret key (secrets: cabinet.mqtt.password, cabinet.romm.token, cabinet.romarr.api_key); save other keys with --save", v)
	}
	*s = append(*s, v)
	return nil
}

// startTimeout bounds the wait for a started daemon to answer on its
// socket: it answers within a second on a Pi; a binary that cannot start
// has been restarted twice by the service loop by then.
const startTimeout = 15 * time.Second

func (c *installCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	var saves saveFlag
	var secrets secretFlag
	fs := newFlags(c.env, "install", "", `Install or upgrade Cabinet on this cabinet (as root): the binary in
/userdata/system/cabinet/bin (the previous one kept as cabinet.prev), the EmulationStation
and configgen scripts, the Batocera service (enabled in system.services and started), the
MCP token if there is none; then it waits for the daemon and prints cabinet doctor's
report. Run again with the same binary, it changes nothing; with another, it is the
upgrade, rolled back if the new daemon does not answer. From a computer, use
cabinet deploy instead.`, &sets)
	fs.Var(&saves, "save", "save a cabinet.* setting into batocera.conf: key=value (repeatable)")
	fs.Var(&secrets, "save-secret", "save a secret (cabinet.mqtt.password…) read from a prompt or standard input (repeatable)")
	dryRun := fs.Bool("dry-run", false, "print every change as a diff and change nothing")
	closePort := fs.Bool("close-retroarch-port", false, "keep RetroArch's command port to this machine (a firewall rule added at every service start)")
	binary := fs.String("binary", "", "install this binary instead of the running one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	l := loadConfig(c.env, sets)
	if l.Err != nil {
		return fmt.Errorf("fix the configuration first:\n%v", l.Err)
	}
	cfg := &l.Config
	src := *binary
	if src == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the running binary: %w; pass --binary FILE", err)
		}
		src = exe
	}
	var port *bool
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "close-retroarch-port" {
			port = closePort
		}
	})
	vals, err := readSecrets(c.env, secrets)
	if err != nil {
		return err
	}
	t := installTarget(l)
	svc := serviceFor(c.env, cfg)
	netCmds, raPort := retroArchNetworkCommands(cfg)
	if port != nil && *port {
		if _, err := exec.LookPath(packaging.FirewallTool); err != nil {
			return fmt.Errorf("--close-retroarch-port: %w", packaging.ErrNoFirewallTool)
		}
	}
	o := install.Options{
		Source: src, Version: buildVersion(), Commit: buildCommit(), StoreSchema: store.SchemaVersion,
		Saves: saves, Secrets: vals, ClosePort: port, RetroArchPort: raPort, RemoveFirewall: removeFirewall, DryRun: *dryRun,
		HasToken: func() bool {
			_, err := httpauth.ReadToken(cfg.Layout().Token())
			return err == nil
		},
		NewToken:     func() error { _, err := httpauth.NewToken(cfg.Layout().Token()); return err },
		ReadSchema:   store.ReadSchema,
		StartTimeout: startTimeout,
		Out:          c.env.Stdout,
	}
	if *binary != "" {
		v, err := readVersionJSON(ctx, *binary)
		if err != nil {
			return fmt.Errorf("--binary %s is not a Cabinet this one can install: %w", *binary, err)
		}
		o.Version, o.Commit, o.StoreSchema = v.Version, v.Commit, uint64(v.StoreSchema)
	}
	res, err := install.Install(ctx, t, svc, o)
	if *dryRun || err != nil {
		return err
	}
	out := c.env.Stdout
	switch {
	case len(res.Changed) == 0:
		fmt.Fprintf(out, "Nothing to change: Cabinet %s is installed and running.\n", o.Version)
	case res.Upgraded:
		fmt.Fprintf(out, "Upgraded Cabinet from %s to %s:\n", res.From, res.To)
	default:
		fmt.Fprintf(out, "Installed Cabinet %s:\n", o.Version)
	}
	entries := false
	for _, ch := range res.Changed {
		fmt.Fprintf(out, "  %s\n", ch)
		entries = entries || strings.Contains(ch, t.Layout.Entries) || strings.Contains(ch, "es_systems_cabinet.cfg")
	}
	if entries {
		reloadForEntries(ctx, out, cfg.ESURL)
	}
	fmt.Fprintln(out)
	// The report with the settings just saved.
	l = loadConfig(c.env, sets)
	denv, err := doctorEnv(l)
	if err != nil {
		return err
	}
	rep := doctor.Run(ctx, doctor.Checks(denv), 5*time.Second)
	rep.Write(out, false)
	if netCmds && !res.PortClosed {
		fmt.Fprintf(out, "\nRetroArch's network commands are on: its command port (UDP %d) takes commands from anyone on the LAN, without a password.\n"+
			"  cabinet install --close-retroarch-port keeps it to this machine (the MCP tools and Home Assistant go through Cabinet).\n", raPort)
	}
	nextSteps(out, &l.Config)
	return nil
}

// installTarget is where install puts everything on this machine.
func installTarget(l *config.Loaded) install.Target {
	cfg := &l.Config
	lay := packaging.DefaultLayout()
	lay.Binary = cfg.Path(lay.Binary)
	lay.ESScripts = cfg.Path(lay.ESScripts)
	lay.Entries = cfg.Path(lay.Entries)
	lay.UserScripts = cfg.Path(lay.UserScripts)
	lay.ServicesDir = cfg.Path(lay.ServicesDir)
	lay.RunDir = cfg.RunDir()
	return install.Target{
		Layout: lay, Conf: l.File, StateDir: cfg.StatePath(),
		SecretsDir: path.Join(cfg.StateDir, "secrets"), SecretsPath: cfg.Path,
	}
}

// serviceFor drives the installed service script. Under cabinet.paths.root
// (tests, a fake tree) the daemon it starts must see the same root.
func serviceFor(e *env, cfg *config.Config) *install.ScriptService {
	t := packaging.DefaultLayout()
	env := append([]string(nil), e.Environ...)
	if cfg.Root != "" {
		env = append(env, config.EnvName("cabinet.paths.root")+"="+cfg.Root)
	}
	sock := cfg.Layout().Socket()
	return &install.ScriptService{
		File: path.Join(cfg.Path(t.ServicesDir), t.ServiceName),
		Env:  env,
		Ping: func(ctx context.Context) error {
			var st daemon.Status
			return socket.Status(ctx, sock, &st)
		},
		StderrFile: path.Join(cfg.RunDir(), "serve.stderr"),
	}
}

// readSecrets reads each --save-secret value: at a prompt without echo on
// a terminal, else one line each from standard input (how cabinet deploy
// sends them over ssh).
func readSecrets(e *env, keys []string) ([]install.Secret, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var out []install.Secret
	in := bufio.NewReader(io.LimitReader(e.Stdin, 64<<10))
	term := deploy.IsTerminal(e.Stdin)
	for _, k := range keys {
		var v string
		var err error
		if term {
			fmt.Fprintf(e.Stderr, "%s: ", k)
			v, err = readHidden(e.Stdin)
			fmt.Fprintln(e.Stderr)
		} else {
			v, err = in.ReadString('\n')
			if errors.Is(err, io.EOF) && v != "" {
				err = nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("read %s from standard input (one line per --save-secret): %v", k, err)
		}
		v = strings.TrimRight(v, "\r\n")
		if v == "" {
			return nil, fmt.Errorf("%s: empty; nothing was changed", k)
		}
		if err := config.CheckValue(k, v); err != nil {
			return nil, err
		}
		fk, _ := config.SecretFileKey(k)
		out = append(out, install.Secret{Key: k, FileKey: fk, Value: v})
	}
	return out, nil
}

// nextSteps ends the install with what the household does next.
func nextSteps(w io.Writer, cfg *config.Config) {
	host := lanAddress(cfg)
	fmt.Fprintln(w, "\nNext:")
	if !cfg.MQTTEnabled() {
		fmt.Fprintln(w, "  Home Assistant: tell Cabinet where your MQTT broker is (Home Assistant's Mosquitto add-on, for one):")
		fmt.Fprintln(w, "    cabinet install --save cabinet.mqtt.broker=tcp://homeassistant.lan:1883 --save cabinet.mqtt.username=USER --save-secret cabinet.mqtt.password")
	} else {
		fmt.Fprintf(w, "  Home Assistant: the device %q appears under Settings → Devices & services → MQTT at the next event.\n", cfg.Name)
	}
	fmt.Fprintln(w, "  Claude Code, over SSH (after ssh-copy-id root@"+host+"):")
	fmt.Fprintf(w, "    claude mcp add cabinet -- ssh root@%s /userdata/system/cabinet/bin/cabinet mcp\n", host)
	if port := listenPort(cfg.MCP.Listen); port != "" {
		// Plain HTTP answers on the same port unless cabinet.mcp.tls_only.
		scheme := "http"
		if cfg.MCP.TLSOnly && cfg.MCP.TLS != "off" && (cfg.MCP.TLS == "self-signed" || cfg.MCP.TLSCertFile != "") {
			scheme = "https"
		}
		fmt.Fprintln(w, "  Claude Code, over the LAN with the bearer token:")
		fmt.Fprintf(w, "    claude mcp add --transport http cabinet %s://%s:%s/mcp --header \"Authorization: Bearer $(ssh root@%s /userdata/system/cabinet/bin/cabinet token show)\"\n", scheme, host, port, host)
	}
}

// lanAddress is how another machine reaches this one: the first private
// IPv4 address, else the host name.
func lanAddress(cfg *config.Config) string {
	if h, _, err := net.SplitHostPort(cfg.MCP.Listen); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
		return h
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsPrivate() {
				return n.IP.String()
			}
		}
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "batocera.local"
}

func listenPort(listen string) string {
	if _, p, err := net.SplitHostPort(listen); err == nil {
		return p
	}
	return ""
}

type uninstallCommand struct{ env *env }

func (c *uninstallCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "uninstall", "", `Stop and disable the service and remove every file cabinet install wrote
(a file changed since is left, and listed). The state dir (store, history, token, id)
and the cabinet.* settings stay, so a reinstall picks up where it left off; --purge
removes them too and clears the cabinet from the MQTT broker, so the device leaves
Home Assistant instead of lingering unavailable.`, &sets)
	purge := fs.Bool("purge", false, "also remove the state dir and every cabinet.* setting, and clear the broker")
	dryRun := fs.Bool("dry-run", false, "say what would be removed and change nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	cfg := &l.Config
	t := installTarget(l)
	if !*dryRun {
		if err := runFromElsewhere(c.env, filepath.Dir(t.Layout.Binary)); err != nil {
			return err
		}
	}
	o := install.UninstallOptions{Purge: *purge, DryRun: *dryRun, Out: c.env.Stdout,
		RemoveFirewall: removeFirewall}
	if *purge && cfg.MQTTEnabled() {
		o.ClearBroker = func(ctx context.Context) (string, error) { return clearBroker(ctx, cfg) }
	}
	res, err := install.Uninstall(ctx, t, serviceFor(c.env, cfg), o)
	if err != nil || *dryRun {
		return err
	}
	out := c.env.Stdout
	fmt.Fprintln(out, "Uninstalled Cabinet:")
	for _, r := range res.Removed {
		fmt.Fprintf(out, "  %s\n", r)
	}
	for _, r := range res.Left {
		fmt.Fprintf(out, "  left %s\n", r)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(out, "  %s\n", n)
	}
	return nil
}

// clearBroker removes the cabinet's retained discovery configs and states
// from the broker (an empty retained payload on each), so Home Assistant
// drops the device.
func clearBroker(ctx context.Context, cfg *config.Config) (string, error) {
	id, err := cfg.CabinetID()
	if err != nil || id == "" {
		return "", fmt.Errorf("no cabinet id: nothing was published")
	}
	s := haentities.Settings{ID: id, DiscoveryPrefix: cfg.MQTT.DiscoveryPrefix, BaseTopic: cfg.MQTT.BaseTopic}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	conn, err := mqttlink.Dial(ctx, mqttOptions(cfg, fmt.Sprintf("cabinet_%s_uninstall%d", id, os.Getpid())))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	prefix := cfg.MQTT.DiscoveryPrefix
	topics, err := conn.Retained(ctx, []string{prefix + "/+/" + s.NodeID() + "/+/config", path.Dir(s.AvailabilityTopic()) + "/#"}, 500*time.Millisecond)
	if err != nil {
		return "", err
	}
	msgs := make([]haentities.Message, len(topics))
	for i, topic := range topics {
		msgs[i] = haentities.ClearConfig(topic, time.Now())
	}
	if n, err := conn.Publish(ctx, msgs); err != nil {
		return "", fmt.Errorf("cleared %d of %d retained messages: %w", n, len(msgs), err)
	}
	return fmt.Sprintf("%d retained messages from the broker (discovery configs and states)", len(msgs)), nil
}

// removeFirewall removes the rule install --close-retroarch-port had the
// service add.
func removeFirewall(ctx context.Context, port int) error {
	fw, err := packaging.RetroArchPortRules(port)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "sh", "-c", fw.Remove).CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// reexecEnv marks the copy runFromElsewhere started.
const reexecEnv = "CABINET_UNINSTALL_COPY"

// runFromElsewhere re-executes this uninstall from a copy in the temporary
// directory when the running binary lives in dir, which uninstall removes.
// On FUSE (exFAT, NTFS) a running file that is deleted turns into a hidden
// .fuse_hidden file until the process exits, and keeps its folder from
// being removed; a copy on tmpfs holds nothing on /userdata.
func runFromElsewhere(e *env, dir string) error {
	if p := os.Getenv(reexecEnv); p != "" {
		os.Remove(p) // the copy is running: its name can go
		return nil
	}
	exe, err := os.Executable()
	if err != nil || !strings.HasPrefix(exe, dir+string(filepath.Separator)) {
		return nil
	}
	f, err := os.CreateTemp("", "cabinet-uninstall-*")
	if err != nil {
		return fmt.Errorf("copy the binary out of %s before removing it: %w", dir, err)
	}
	in, err := os.Open(exe)
	if err == nil {
		_, err = io.Copy(f, in)
		in.Close()
	}
	if err == nil {
		err = f.Chmod(0o755)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("copy the binary out of %s before removing it: %w", dir, err)
	}
	env := append(append([]string(nil), e.Environ...), reexecEnv+"="+f.Name())
	err = syscall.Exec(f.Name(), os.Args, env)
	os.Remove(f.Name())
	return fmt.Errorf("run the copy of the binary: %w", err)
}

// reloadForEntries asks ES to read its systems again, so Cabinet's entries
// show without a restart (GET /reloadgames re-reads every es_systems_*.cfg).
func reloadForEntries(ctx context.Context, out io.Writer, esURL string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	esc, err := es.New(es.Config{URL: esURL, Timeout: 5 * time.Second})
	if err == nil {
		err = esc.ReloadGames(ctx)
	}
	if err != nil {
		fmt.Fprintf(out, "  EmulationStation did not reload its game lists (%v): restart it, or choose Update gamelists in its menu, to see the Cabinet system.\n", err)
		return
	}
	fmt.Fprintln(out, "  EmulationStation reloaded its game lists: the Cabinet system (ask for more time, time left) is there.")
}
