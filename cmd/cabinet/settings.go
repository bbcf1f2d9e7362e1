package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/daemon/links"
	"github.com/batocera-cabinet/cabinet/daemon/oauth"
	"github.com/batocera-cabinet/cabinet/daemon/oauth/cimd"
	"github.com/batocera-cabinet/cabinet/daemon/osupdate"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/cfaccess"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/selection"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// This file maps the cabinet.* keys to each part's own settings: the
// packages below cmd/ never see the configuration itself.

// thermalZones are the kernel's temperature files, in millidegrees Celsius.
const thermalZones = "/sys/class/thermal/thermal_zone*/temp"

// haSettings builds the Home Assistant settings: the persisted cabinet id
// (generated the first time), the names, and the versions read from the
// (possibly rooted) Batocera tree. The daemon's add its own entities
// (diagnostics, and the controls when cabinet.ha.controls is on), so its
// discovery announces them and turning the controls off clears theirs.
func haSettings(cfg *config.Config, version string, isDaemon bool) (haentities.Settings, error) {
	id, err := cfg.EnsureCabinetID()
	if err != nil {
		return haentities.Settings{}, err
	}
	s := haentities.Settings{
		ID:              id,
		Name:            cfg.Name,
		DiscoveryPrefix: cfg.MQTT.DiscoveryPrefix,
		BaseTopic:       cfg.MQTT.BaseTopic,
		Version:         version,
		BatoceraVersion: batoceraVersion(cfg),
		Model:           firstLine(cfg.Path("/usr/share/batocera/batocera.arch")),
		Daemon:          isDaemon,
		Controls:        isDaemon && cfg.HA.Controls,
		Power:           isDaemon && cfg.HA.Power,
		Household:       isDaemon && cfg.HA.Household,
		SaveSync:        isDaemon && cfg.RomM.SyncSaves,
		MCPClients:      isDaemon && httpConfig(cfg).OAuth != nil, // sign-in on, with a usable public URL
		LimitsOn:        isDaemon && householdRules(cfg).Enabled,
		Profiles:        daemonProfiles(cfg, isDaemon),
		MAC:             cabinetMAC(cfg, isDaemon),
	}
	return s, s.Validate()
}

// cabinetMAC is the device block's MAC address: the daemon chooses and
// keeps it; a hook only reads the kept one (one small read, no route
// lookup or write on ES's path; before a daemon ever ran the block has
// none).
func cabinetMAC(cfg *config.Config, isDaemon bool) string {
	if isDaemon {
		return cfg.EnsureCabinetMAC(defaultRouteMAC)
	}
	return cfg.CabinetMAC()
}

// defaultRouteMAC is the MAC address of the interface the default route
// uses, read from this machine's /proc and /sys (it describes the
// machine, also under cabinet.paths.root).
func defaultRouteMAC() (string, error) {
	iface, err := sysinfo.DefaultInterface("/proc")
	if err != nil {
		return "", err
	}
	return sysinfo.MACAddress("/sys", iface)
}

// journalRules are the journal's rules: settings, the cabinet.tracker.*
// keys, and whether MQTT is on.
func journalRules(cfg *config.Config, settings haentities.Settings) journal.Rules {
	tc := tracker.DefaultConfig()
	tc.MinSession = time.Duration(cfg.Tracker.MinSessionSeconds) * time.Second
	tc.IgnoreScreensaverLaunches = cfg.Tracker.IgnoreScreensaverLaunches
	return journal.Rules{Settings: settings, Tracker: tc, Publishing: cfg.MQTTEnabled()}
}

// mqttOptions maps cabinet.mqtt.* to a connection under clientID: the
// daemon's (cabinet.mqtt.client_id, default cabinet_<id>), a hook's
// (cabinet_<id>_h<pid>, no last will, so it never knocks the daemon's
// session off) or doctor's.
func mqttOptions(cfg *config.Config, clientID string) mqttlink.Options {
	return mqttlink.Options{
		Broker:   cfg.MQTT.Broker,
		Username: cfg.MQTT.Username,
		Password: cfg.MQTT.Password.Reveal(),
		ClientID: clientID,
		CAFile:   cfg.Path(cfg.MQTT.CAFile),
	}
}

// hookClientID and doctorClientID name short-lived connections apart from
// the daemon's.
func hookClientID(id string) string   { return fmt.Sprintf("cabinet_%s_h%d", id, os.Getpid()) }
func doctorClientID(id string) string { return fmt.Sprintf("cabinet_%s_doctor%d", id, os.Getpid()) }

// toolsSettings maps what the MCP tools are built from: the ES and RetroArch
// addresses, the system paths under cabinet.paths.root (/proc stays the
// real one: it describes this machine), the name and the MCP switches.
func toolsSettings(cfg *config.Config) links.Settings {
	p := tools.DefaultPaths()
	p.ThermalZones = cfg.Path(p.ThermalZones)
	p.BatoceraVersion = cfg.Path(p.BatoceraVersion)
	p.StateDir = cfg.StatePath()
	p.ScreenshotDir = cfg.ScreenshotPath()
	return links.Settings{ESURL: cfg.ESURL, RetroArchAddr: cfg.RetroArchAddr, Paths: p, Name: cfg.Name,
		ReadOnly: cfg.MCP.ReadOnly, DryRun: cfg.MCP.DryRun, Power: cfg.MCP.Power, Audio: cfg.Path(sysaudio.DefaultBin), Root: cfg.Root,
		RomM: links.RomMSettings{URL: cfg.RomM.URL, Token: rommToken(cfg), CAFile: resolvedFile(cfg, cfg.RomM.CAFile),
			PlatformMap: cfg.RomM.PlatformMap, DeviceID: rommDeviceID(cfg)},
		ROMarr:      links.ROMarrSettings{URL: cfg.ROMarr.URL, APIKey: cfg.ROMarr.APIKey.Reveal()},
		AllowWrites: cfg.Library.AllowWrites, AllowInstall: cfg.Library.AllowInstall,
		MaxInstallBytes: cfg.Library.MaxInstallBytes, InstallLock: cfg.Layout().InstallLock()}
}

// resolvedFile is a configured file path under cabinet.paths.root, or ""
// when none is set.
func resolvedFile(cfg *config.Config, p string) string {
	if p == "" {
		return ""
	}
	return cfg.Path(p)
}

// daemonConfig maps a configuration reading to the daemon's. Only the
// cabinet id can make it fail (unreadable, or a state dir it cannot be
// written to).
func daemonConfig(l *config.Loaded, version string) (daemon.Loaded, error) {
	cfg := &l.Config
	settings, err := haSettings(cfg, version, true)
	if err != nil {
		return daemon.Loaded{}, fmt.Errorf("home assistant settings: %w", err)
	}
	settings.Achievements = l.RetroAchievements // the achievement entities are announced only then
	clientID := cfg.MQTT.ClientID
	if clientID == "" {
		clientID = "cabinet_" + settings.ID
	}
	rules := journalRules(cfg, settings)
	rules.BatoceraConf = l.File // an achievement's hardcore setting
	dc := daemon.Config{
		Layout:      cfg.Layout(),
		Rules:       rules,
		BirthTopic:  cfg.MQTT.HAStatusTopic,
		Tools:       toolsSettings(cfg),
		HTTP:        httpConfig(cfg),
		Diagnostics: daemon.Diagnostics{ThermalZones: cfg.Path(thermalZones)},
		System:      systemPaths(cfg),
		LogLevel:    cfg.LogLevel,
		Secrets:     cfg.Secrets(),
		Household:   householdRules(cfg),
		Selection: selection.Config{Settle: time.Duration(cfg.Selected.SettleMS) * time.Millisecond,
			Screensaver: cfg.Selected.ScreensaverPicks},
	}
	if cfg.MQTTEnabled() {
		dc.MQTT = mqttOptions(cfg, clientID)
	}
	dc.RomM = rommReport(cfg)
	if dc.RomM.Token != "" {
		dc.Secrets = append(dc.Secrets, dc.RomM.Token)
	}
	dc.SaveSync = saveSync(cfg)
	if t := dc.SaveSync.Token; t != "" && t != dc.RomM.Token {
		dc.Secrets = append(dc.Secrets, t)
	}
	err = l.Err
	if aerr := checkAccess(dc.HTTP.Access); aerr != nil {
		// As with any invalid value: the default (off) is used, and a
		// reload with it is refused.
		dc.HTTP.Access = nil
		err = errors.Join(err, aerr)
	}
	return daemon.Loaded{Config: dc, Warnings: l.Warnings, Err: err}, nil
}

// daemonProfiles are the household's profiles for the player select (the daemon's only).
func daemonProfiles(cfg *config.Config, isDaemon bool) string {
	if !isDaemon {
		return ""
	}
	return strings.Join(householdRules(cfg).ProfileNames(), ",")
}

// householdRules are the play-time rules of cabinet.household.* (the
// loader has checked every value already: an invalid one holds its default).
func householdRules(cfg *config.Config) household.Rules {
	r, _ := household.Parse(cfg.Household.Merged())
	return r
}

// httpConfig maps cabinet.mcp.listen, the Host and Origin allow-lists,
// the TLS keys (files resolved under cabinet.paths.root) and
// cabinet.mcp.cf_access.*.
func httpConfig(cfg *config.Config) daemon.HTTP {
	h := daemon.HTTP{Listen: cfg.MCP.Listen, AllowedHosts: cfg.MCP.AllowedHosts, AllowedOrigins: cfg.MCP.AllowedOrigins}
	if cfg.MCP.TLS != "off" {
		h.TLS = daemon.TLS{CertFile: resolvedFile(cfg, cfg.MCP.TLSCertFile), KeyFile: resolvedFile(cfg, cfg.MCP.TLSKeyFile),
			SelfSigned: cfg.MCP.TLS == "self-signed"}
	}
	h.TLS.Only = cfg.MCP.TLSOnly
	if a := cfg.MCP.CFAccess; a.On() {
		h.Access = &daemon.Access{TeamDomain: a.TeamDomain, Audience: a.AUD, AllowedEmails: a.AllowedEmails,
			CertsURL: a.CertsURL, Scopes: a.Scopes}
	}
	if issuer, err := oauth.Issuer(cfg.MCP.PublicURL); cfg.MCP.OAuth && err == nil {
		// (An OAuth switch without a usable public URL leaves sign-in off:
		// doctor says why.)
		h.OAuth = &daemon.OAuth{PublicURL: issuer, ClientHosts: clientHosts(cfg.MCP.OAuthClientHosts)}
	}
	return h
}

// clientHosts maps cabinet.mcp.oauth_client_hosts: empty the known
// clients' hosts (nil), "off" none, else the list ("*" any public host).
func clientHosts(v []string) []string {
	switch {
	case len(v) == 0:
		return nil
	case len(v) == 1 && v[0] == "off":
		return []string{}
	}
	return v
}

// clientHostsShown is clientHosts as doctor names them.
func clientHostsShown(v []string) []string {
	if v == nil {
		return cimd.DefaultHosts
	}
	return v
}

// checkAccess checks cabinet.mcp.cf_access.* as a whole, as the verifier
// will (each key alone was checked by config.Load): the team domain and
// the audience together, and a certs URL that is https or loopback.
func checkAccess(a *daemon.Access) error {
	if a == nil {
		return nil
	}
	_, err := cfaccess.New(a.Options())
	return err
}

// systemPaths are the cabinet's tools and kernel files, under
// cabinet.paths.root (the simulator's fakes); /proc stays the real one for
// the host figures (boot, load, memory, the default route): it describes
// this machine.
func systemPaths(cfg *config.Config) daemon.System {
	return daemon.System{
		ShutdownFlag:   cfg.Path("/tmp/shutdown.please"),
		Proc:           "/proc",
		Sys:            cfg.Path("/sys"),
		InputDevices:   cfg.Path("/proc/bus/input/devices"),
		Audio:          cfg.Path(sysaudio.DefaultBin),
		Upgrade:        cfg.Path(osupdate.DefaultUpgrade),
		BatoceraConfig: cfg.Path(osupdate.DefaultConfig),
		ESSettings:     cfg.Path(uimode.DefaultSettings),
		ESInit:         cfg.Path(uimode.DefaultInitScript),
	}
}

// rommReport is where play sessions go: RomM, once the cabinet is paired
// with the RomM of cabinet.romm.url, unless cabinet.romm.report_play is
// off. A configured token carries no device of the cabinet's, so only a
// paired one reports.
func rommReport(cfg *config.Config) rommreport.Config {
	if !cfg.RomM.ReportPlay || cfg.RomM.URL == "" {
		return rommreport.Config{}
	}
	p, err := rommStore(cfg).Load()
	if err != nil || p.URL != cfg.RomM.URL || p.DeviceID == "" {
		return rommreport.Config{}
	}
	since := p.PairedAt
	if !p.ReportSince.IsZero() && p.ReportSince.Before(since) {
		since = p.ReportSince
	}
	return rommreport.Config{URL: cfg.RomM.URL, Token: p.Token, CAFile: resolvedFile(cfg, cfg.RomM.CAFile), DeviceID: p.DeviceID,
		Since: since, Root: cfg.Root, PlatformMap: cfg.RomM.PlatformMap, PairingDir: rommStore(cfg).Dir, Device: cabinetDevice(cfg)}
}

// saveSync is the save sync's configuration: on when cabinet.romm.sync_saves is and the cabinet
// is paired with the RomM of cabinet.romm.url with the scopes it needs; else Problem says what
// to do (doctor and the start say it). Like the reporting, only a paired token syncs: a
// configured one has no device of the cabinet's.
func saveSync(cfg *config.Config) savesync.Config {
	c := savesync.Config{Asked: cfg.RomM.SyncSaves, States: cfg.RomM.SyncStates, Systems: cfg.RomM.SyncSystems,
		Keep: cfg.RomM.SaveBackups, MaxBytes: cfg.RomM.SaveBackupBytes, Saves: cfg.Path("/userdata/saves"),
		Root: cfg.Root, PlatformMap: cfg.RomM.PlatformMap}
	if !c.Asked {
		return c
	}
	if cfg.RomM.URL == "" {
		c.Problem = "cabinet.romm.sync_saves is on, but cabinet.romm.url is not set: set it to RomM's address and run `cabinet romm pair --sync-saves`"
		return c
	}
	p, err := rommStore(cfg).Load()
	if err != nil || p.URL != cfg.RomM.URL || p.DeviceID == "" {
		c.Problem = "cabinet.romm.sync_saves is on, but the cabinet is not paired with " + cfg.RomM.URL + " as a device: run `cabinet romm pair --sync-saves`"
		return c
	}
	if !pairing.CanSyncSaves(p.Scopes) {
		c.Problem = "cabinet.romm.sync_saves is on, but the cabinet was paired without RomM's assets.read and assets.write: run `cabinet romm pair --sync-saves`"
		return c
	}
	c.On = true
	c.URL, c.Token, c.CAFile, c.DeviceID = cfg.RomM.URL, p.Token, resolvedFile(cfg, cfg.RomM.CAFile), p.DeviceID
	return c
}

// batoceraVersion reads /usr/share/batocera/batocera.version ("41
// 2024/11/28 19:07") and returns its first word, "" when absent. The file,
// not the batocera-version command: the command inserts flag letters that
// change when Cabinet itself is installed.
func batoceraVersion(cfg *config.Config) string {
	if f := strings.Fields(firstLine(cfg.Path("/usr/share/batocera/batocera.version"))); len(f) > 0 {
		return f[0]
	}
	return ""
}

func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}
