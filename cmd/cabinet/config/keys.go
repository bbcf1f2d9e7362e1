// Package config owns Cabinet's configuration: the `cabinet.*` keys read from
// batocera.conf (or CABINET_CONFIG), overridden by CABINET_<KEY> environment
// variables and --set flags, their defaults, validation and provenance.
//
// The key names are a contract (scripts, docs and users rely on them); every
// key is documented in batocera.conf.d/cabinet.conf and a test keeps the two
// in step.
package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/oauth"
	"github.com/batocera-cabinet/cabinet/daemon/oauth/cimd"
)

// kind says how a value is parsed and validated.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kPath   // absolute path, resolved under cabinet.paths.root
	kSecret // masked everywhere; has a _file twin
	kList   // comma-separated
)

// key describes one cabinet.* key. get/set bind it to a Config field; check
// validates the raw text and says what is expected when it is wrong.
type key struct {
	name   string
	def    string
	kind   kind
	expect string // what a valid value looks like, for error messages
	check  func(v string) bool
	// why, when set, says what is wrong with a value check refused (else expect is shown).
	why func(v string) string
	get func(c *Config) string
	set func(c *Config, v string)
	// fileOf names the secret key a `…_file` key fills.
	fileOf string
}

// keys returns the key table. It is a function, not a package variable, so
// that nothing is built at program start (every ES event starts this binary).
func keys() []key {
	ks := []key{
		{name: "cabinet.name", def: "Batocera", kind: kString, expect: "a device name of 1 to 64 printable characters",
			check: func(v string) bool { return printable(v, 1, 64) },
			get:   func(c *Config) string { return c.Name }, set: func(c *Config, v string) { c.Name = v }},
		{name: "cabinet.id", def: "", kind: kString, expect: "empty (generated once) or 1 to 48 of [a-z0-9_]",
			check: func(v string) bool { return v == "" || IsCabinetID(v) },
			get:   func(c *Config) string { return c.ID }, set: func(c *Config, v string) { c.ID = v }},
		{name: "cabinet.state_dir", def: "/userdata/system/cabinet", kind: kPath, expect: "an absolute directory path",
			check: absPath, get: func(c *Config) string { return c.StateDir }, set: func(c *Config, v string) { c.StateDir = v }},
		{name: "cabinet.paths.root", def: "", kind: kString, expect: "empty or an absolute directory path (a prefix for every system path)",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.Root }, set: func(c *Config, v string) { c.Root = v }},
		{name: "cabinet.es.url", def: "http://127.0.0.1:1234", kind: kString, expect: "an http:// URL such as http://127.0.0.1:1234",
			check: httpURL, get: func(c *Config) string { return c.ESURL }, set: func(c *Config, v string) { c.ESURL = v }},
		{name: "cabinet.retroarch.addr", def: "127.0.0.1:55355", kind: kString, expect: "host:port, such as 127.0.0.1:55355",
			check: hostPort, get: func(c *Config) string { return c.RetroArchAddr }, set: func(c *Config, v string) { c.RetroArchAddr = v }},
		{name: "cabinet.retroarch.screenshot_dir", def: "/userdata/screenshots", kind: kPath, expect: "an absolute directory path",
			check: absPath, get: func(c *Config) string { return c.ScreenshotDir }, set: func(c *Config, v string) { c.ScreenshotDir = v }},
		{name: "cabinet.mqtt.broker", def: "", kind: kString, expect: "empty (MQTT off) or tcp://host:1883, ssl://host:8883 (also mqtt://, mqtts://, ws://, wss://)",
			check: func(v string) bool { return v == "" || brokerURL(v) },
			get:   func(c *Config) string { return c.MQTT.Broker }, set: func(c *Config, v string) { c.MQTT.Broker = v }},
		{name: "cabinet.mqtt.username", def: "", kind: kString, expect: "a user name of at most 256 printable characters",
			check: func(v string) bool { return printable(v, 0, 256) },
			get:   func(c *Config) string { return c.MQTT.Username }, set: func(c *Config, v string) { c.MQTT.Username = v }},
		{name: "cabinet.mqtt.password", def: "", kind: kSecret, expect: "a password of at most 1024 characters on one line",
			check: secretText, get: func(c *Config) string { return c.MQTT.Password.Reveal() }, set: func(c *Config, v string) { c.MQTT.Password = Secret(v) }},
		{name: "cabinet.mqtt.password_file", def: "", kind: kPath, fileOf: "cabinet.mqtt.password", expect: "empty or an absolute file path",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.MQTT.PasswordFile }, set: func(c *Config, v string) { c.MQTT.PasswordFile = v }},
		{name: "cabinet.mqtt.ca_file", def: "", kind: kPath, expect: "empty or an absolute path to a PEM CA bundle",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.MQTT.CAFile }, set: func(c *Config, v string) { c.MQTT.CAFile = v }},
		{name: "cabinet.mqtt.client_id", def: "", kind: kString, expect: "empty (cabinet_<id>) or 1 to 64 of [A-Za-z0-9_-]",
			check: func(v string) bool { return v == "" || clientID(v) },
			get:   func(c *Config) string { return c.MQTT.ClientID }, set: func(c *Config, v string) { c.MQTT.ClientID = v }},
		{name: "cabinet.mqtt.discovery_prefix", def: "homeassistant", kind: kString, expect: "an MQTT topic prefix without wildcards, such as homeassistant",
			check: topicPrefix, get: func(c *Config) string { return c.MQTT.DiscoveryPrefix }, set: func(c *Config, v string) { c.MQTT.DiscoveryPrefix = v }},
		{name: "cabinet.mqtt.base_topic", def: "batocera", kind: kString, expect: "an MQTT topic prefix without wildcards, such as batocera",
			check: topicPrefix, get: func(c *Config) string { return c.MQTT.BaseTopic }, set: func(c *Config, v string) { c.MQTT.BaseTopic = v }},
		{name: "cabinet.mqtt.ha_status_topic", def: "homeassistant/status", kind: kString, expect: "an MQTT topic without wildcards",
			check: topicPrefix, get: func(c *Config) string { return c.MQTT.HAStatusTopic }, set: func(c *Config, v string) { c.MQTT.HAStatusTopic = v }},
		{name: "cabinet.tracker.min_session_seconds", def: "60", kind: kInt, expect: "a whole number of seconds from 0 to 86400",
			check: intRange(0, 86400), get: func(c *Config) string { return strconv.Itoa(c.Tracker.MinSessionSeconds) },
			set: func(c *Config, v string) { c.Tracker.MinSessionSeconds, _ = strconv.Atoi(v) }},
		{name: "cabinet.tracker.ignore_screensaver_launches", def: "1", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.Tracker.IgnoreScreensaverLaunches) },
			set: func(c *Config, v string) { c.Tracker.IgnoreScreensaverLaunches, _ = ParseBool(v) }},
		{name: "cabinet.selected.settle_ms", def: "300", kind: kInt, expect: "a whole number of milliseconds from 1 to 10000",
			check: intRange(1, 10000), get: func(c *Config) string { return strconv.Itoa(c.Selected.SettleMS) },
			set: func(c *Config, v string) { c.Selected.SettleMS, _ = strconv.Atoi(v) }},
		{name: "cabinet.selected.screensaver_picks", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.Selected.ScreensaverPicks) },
			set: func(c *Config, v string) { c.Selected.ScreensaverPicks, _ = ParseBool(v) }},
		{name: "cabinet.mcp.listen", def: "0.0.0.0:8717", kind: kString, expect: "host:port, such as 0.0.0.0:8717 or 127.0.0.1:0",
			check: hostPort, get: func(c *Config) string { return c.MCP.Listen }, set: func(c *Config, v string) { c.MCP.Listen = v }},
		{name: "cabinet.mcp.read_only", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.MCP.ReadOnly) },
			set: func(c *Config, v string) { c.MCP.ReadOnly, _ = ParseBool(v) }},
		{name: "cabinet.mcp.dry_run", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.MCP.DryRun) },
			set: func(c *Config, v string) { c.MCP.DryRun, _ = ParseBool(v) }},
		{name: "cabinet.mcp.power", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.MCP.Power) },
			set: func(c *Config, v string) { c.MCP.Power, _ = ParseBool(v) }},
		{name: "cabinet.mcp.allowed_hosts", def: "", kind: kList, expect: "a comma-separated list of host names or addresses",
			check: hostList, get: func(c *Config) string { return strings.Join(c.MCP.AllowedHosts, ",") },
			set: func(c *Config, v string) { c.MCP.AllowedHosts = splitList(v) }},
		{name: "cabinet.mcp.allowed_origins", def: "", kind: kList, expect: "a comma-separated list of origins such as https://ha.lan",
			check: originList, get: func(c *Config) string { return strings.Join(c.MCP.AllowedOrigins, ",") },
			set: func(c *Config, v string) { c.MCP.AllowedOrigins = splitList(v) }},
		{name: "cabinet.mcp.tls", def: "", kind: kString, expect: "empty or off (plain HTTP), or self-signed",
			check: func(v string) bool { return oneOf(v, "", "off", "self-signed") },
			get:   func(c *Config) string { return c.MCP.TLS }, set: func(c *Config, v string) { c.MCP.TLS = v }},
		{name: "cabinet.mcp.tls_cert_file", def: "", kind: kPath, expect: "empty or an absolute path to a PEM certificate (chain), such as tailscale cert writes",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.MCP.TLSCertFile }, set: func(c *Config, v string) { c.MCP.TLSCertFile = v }},
		{name: "cabinet.mcp.tls_key_file", def: "", kind: kPath, expect: "empty or an absolute path to the certificate's PEM key",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.MCP.TLSKeyFile }, set: func(c *Config, v string) { c.MCP.TLSKeyFile = v }},
		{name: "cabinet.mcp.tls_only", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.MCP.TLSOnly) },
			set: func(c *Config, v string) { c.MCP.TLSOnly, _ = ParseBool(v) }},
		{name: "cabinet.mcp.oauth", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.MCP.OAuth) },
			set: func(c *Config, v string) { c.MCP.OAuth, _ = ParseBool(v) }},
		{name: "cabinet.mcp.public_url", def: "", kind: kString, expect: "empty or the https origin clients use, such as https://cabinet.tail1234.ts.net:8717",
			check: func(v string) bool { _, err := oauth.Issuer(v); return v == "" || err == nil },
			get:   func(c *Config) string { return c.MCP.PublicURL }, set: func(c *Config, v string) { c.MCP.PublicURL = v }},
		{name: "cabinet.mcp.oauth_client_hosts", def: "", kind: kList, expect: "empty (the known clients: " + strings.Join(cimd.DefaultHosts, ", ") + "), * (any public host), off, or host names separated by commas",
			check: func(v string) bool { return v == "*" || v == "off" || hostList(v) },
			get:   func(c *Config) string { return strings.Join(c.MCP.OAuthClientHosts, ",") },
			set:   func(c *Config, v string) { c.MCP.OAuthClientHosts = splitList(v) }},
		{name: "cabinet.mcp.cf_access.team_domain", def: "", kind: kString, expect: "empty or your Zero Trust team domain, such as myteam.cloudflareaccess.com",
			check: func(v string) bool { return v == "" || teamDomain(v) },
			get:   func(c *Config) string { return c.MCP.CFAccess.TeamDomain }, set: func(c *Config, v string) { c.MCP.CFAccess.TeamDomain = v }},
		{name: "cabinet.mcp.cf_access.aud", def: "", kind: kString, expect: "empty or the Access application's AUD tag, 64 hex digits",
			check: func(v string) bool { return v == "" || hexDigits(v, 64) },
			get:   func(c *Config) string { return c.MCP.CFAccess.AUD }, set: func(c *Config, v string) { c.MCP.CFAccess.AUD = v }},
		{name: "cabinet.mcp.cf_access.allowed_emails", def: "", kind: kList, expect: "e-mail addresses (me@example.com) or domains (@example.com) separated by commas or spaces",
			check: emailList, get: func(c *Config) string { return strings.Join(c.MCP.CFAccess.AllowedEmails, ",") },
			set: func(c *Config, v string) { c.MCP.CFAccess.AllowedEmails = splitWords(v) }},
		{name: "cabinet.mcp.cf_access.certs_url", def: "", kind: kString, expect: "empty (https://<team_domain>/cdn-cgi/access/certs) or an https:// URL",
			check: func(v string) bool { return v == "" || httpURL(v) },
			get:   func(c *Config) string { return c.MCP.CFAccess.CertsURL }, set: func(c *Config, v string) { c.MCP.CFAccess.CertsURL = v }},
		{name: "cabinet.mcp.cf_access.scopes", def: "read play", kind: kList, expect: "token scopes separated by spaces or commas, of " + strings.Join(httpauth.Scopes, ", "),
			check: func(v string) bool { _, err := httpauth.ParseScopeList(v); return err == nil },
			get:   func(c *Config) string { return strings.Join(c.MCP.CFAccess.Scopes, " ") },
			set:   func(c *Config, v string) { c.MCP.CFAccess.Scopes, _ = httpauth.ParseScopeList(v) }},
		{name: "cabinet.ha.controls", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.HA.Controls) },
			set: func(c *Config, v string) { c.HA.Controls, _ = ParseBool(v) }},
		{name: "cabinet.ha.power", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.HA.Power) },
			set: func(c *Config, v string) { c.HA.Power, _ = ParseBool(v) }},
		{name: "cabinet.ha.household", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.HA.Household) },
			set: func(c *Config, v string) { c.HA.Household, _ = ParseBool(v) }},
		{name: "cabinet.romm.url", def: "", kind: kString, expect: "empty or an http(s):// URL",
			check: func(v string) bool { return v == "" || httpURL(v) },
			get:   func(c *Config) string { return c.RomM.URL }, set: func(c *Config, v string) { c.RomM.URL = v }},
		{name: "cabinet.romm.token", def: "", kind: kSecret, expect: "a token of at most 1024 characters on one line",
			check: secretText, get: func(c *Config) string { return c.RomM.Token.Reveal() }, set: func(c *Config, v string) { c.RomM.Token = Secret(v) }},
		{name: "cabinet.romm.token_file", def: "", kind: kPath, fileOf: "cabinet.romm.token", expect: "empty or an absolute file path",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.RomM.TokenFile }, set: func(c *Config, v string) { c.RomM.TokenFile = v }},
		{name: "cabinet.romm.ca_file", def: "", kind: kPath, expect: "empty or an absolute path to a PEM CA bundle",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.RomM.CAFile }, set: func(c *Config, v string) { c.RomM.CAFile = v }},
		{name: "cabinet.romm.platform_map", def: "", kind: kList, expect: "empty or <romm slug>:<batocera folder> pairs separated by commas, such as gb:gb,sfam:snes",
			check: platformMap, get: func(c *Config) string { return platformMapText(c.RomM.PlatformMap) },
			set: func(c *Config, v string) { c.RomM.PlatformMap = parsePlatformMap(v) }},
		{name: "cabinet.romm.report_play", def: "1", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.RomM.ReportPlay) },
			set: func(c *Config, v string) { c.RomM.ReportPlay, _ = ParseBool(v) }},
		{name: "cabinet.romm.sync_saves", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.RomM.SyncSaves) },
			set: func(c *Config, v string) { c.RomM.SyncSaves, _ = ParseBool(v) }},
		{name: "cabinet.romm.sync_states", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.RomM.SyncStates) },
			set: func(c *Config, v string) { c.RomM.SyncStates, _ = ParseBool(v) }},
		{name: "cabinet.romm.sync_systems", def: "", kind: kList, expect: "empty (every system whose saves Cabinet can sync) or Batocera system folders separated by commas, such as snes,gba,psx",
			check: systemList, get: func(c *Config) string { return strings.Join(c.RomM.SyncSystems, ",") },
			set: func(c *Config, v string) { c.RomM.SyncSystems = splitList(v) }},
		{name: "cabinet.romm.save_backups", def: "5", kind: kInt, expect: "a whole number of backups per save from 1 to 100",
			check: intRange(1, 100), get: func(c *Config) string { return strconv.Itoa(c.RomM.SaveBackups) },
			set: func(c *Config, v string) { c.RomM.SaveBackups, _ = strconv.Atoi(v) }},
		{name: "cabinet.romm.save_backup_bytes", def: "256M", kind: kString, expect: "a size from 1M to 1T: bytes, or a number with K, M, G or T (powers of 1024)",
			check: func(v string) bool { n, err := ParseSize(v); return err == nil && n >= 1<<20 && n <= 1<<40 },
			get:   func(c *Config) string { return SizeText(c.RomM.SaveBackupBytes) },
			set:   func(c *Config, v string) { c.RomM.SaveBackupBytes, _ = ParseSize(v) }},
		{name: "cabinet.romarr.url", def: "", kind: kString, expect: "empty or an http(s):// URL",
			check: func(v string) bool { return v == "" || httpURL(v) },
			get:   func(c *Config) string { return c.ROMarr.URL }, set: func(c *Config, v string) { c.ROMarr.URL = v }},
		{name: "cabinet.romarr.api_key", def: "", kind: kSecret, expect: "a key of at most 1024 characters on one line",
			check: secretText, get: func(c *Config) string { return c.ROMarr.APIKey.Reveal() }, set: func(c *Config, v string) { c.ROMarr.APIKey = Secret(v) }},
		{name: "cabinet.romarr.api_key_file", def: "", kind: kPath, fileOf: "cabinet.romarr.api_key", expect: "empty or an absolute file path",
			check: func(v string) bool { return v == "" || absPath(v) },
			get:   func(c *Config) string { return c.ROMarr.APIKeyFile }, set: func(c *Config, v string) { c.ROMarr.APIKeyFile = v }},
		{name: "cabinet.library.allow_writes", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.Library.AllowWrites) },
			set: func(c *Config, v string) { c.Library.AllowWrites, _ = ParseBool(v) }},
		{name: "cabinet.library.allow_install", def: "0", kind: kBool, expect: boolExpect,
			check: isBool, get: func(c *Config) string { return boolText(c.Library.AllowInstall) },
			set: func(c *Config, v string) { c.Library.AllowInstall, _ = ParseBool(v) }},
		{name: "cabinet.library.max_install_bytes", def: "64G", kind: kString, expect: "a size from 1M to 1024T: bytes, or a number with K, M, G or T (powers of 1024)",
			check: func(v string) bool { n, err := ParseSize(v); return err == nil && n >= 1<<20 && n <= 1<<50 },
			get:   func(c *Config) string { return SizeText(c.Library.MaxInstallBytes) },
			set:   func(c *Config, v string) { c.Library.MaxInstallBytes, _ = ParseSize(v) }},
		{name: "cabinet.log.level", def: "info", kind: kString, expect: "one of trace, debug, info, warn, error, disabled",
			check: func(v string) bool { return oneOf(v, "trace", "debug", "info", "warn", "error", "disabled") },
			get:   func(c *Config) string { return c.LogLevel }, set: func(c *Config, v string) { c.LogLevel = v }},
	}
	return append(ks, householdKeys()...)
}

// householdKeys are the play-time rules' keys (package household's).
func householdKeys() []key {
	var ks []key
	for _, hk := range household.Keys() {
		name := hk.Name
		ks = append(ks, key{name: name, def: hk.Default, kind: kString, expect: hk.Expect,
			check: func(v string) bool { return household.Check(name, v) == nil },
			why: func(v string) string {
				if err := household.Check(name, v); err != nil {
					return err.Error()
				}
				return ""
			},
			get: func(c *Config) string { return c.Household.Values[name] },
			set: func(c *Config, v string) {
				if c.Household.Values == nil {
					c.Household.Values = map[string]string{}
				}
				c.Household.Values[name] = v
			}})
	}
	return ks
}

// KeyDoc is one key's name, default and whether it is a secret, for docs
// and the consistency test with batocera.conf.d/cabinet.conf.
type KeyDoc struct {
	Name    string
	Default string
	Secret  bool
}

// Keys lists every known key in table order.
func Keys() []KeyDoc {
	ks := keys()
	out := make([]KeyDoc, len(ks))
	for i, k := range ks {
		out[i] = KeyDoc{Name: k.name, Default: k.def, Secret: k.kind == kSecret}
	}
	return out
}

// EnvName maps a key to its environment variable: cabinet.mqtt.broker →
// CABINET_MQTT_BROKER.
func EnvName(key string) string {
	return strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func lookupKey(ks []key, name string) (key, bool) {
	for _, k := range ks {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}

// CheckValue says whether value is valid for a known cabinet.* key, in
// the words Load would use.
func CheckValue(name, value string) error {
	k, ok := lookupKey(keys(), name)
	if !ok {
		return fmt.Errorf("%s", unknownKey(keys(), name, "this command"))
	}
	if !k.check(value) {
		if k.kind == kSecret {
			return fmt.Errorf("%s: want %s", name, k.expect)
		}
		return fmt.Errorf("%s = %q: want %s", name, clip(value), k.expect)
	}
	return nil
}

// SecretFileKey is the `…_file` key that fills the secret key name
// (cabinet.mqtt.password → cabinet.mqtt.password_file); ok is false when
// name is not a secret.
func SecretFileKey(name string) (fileKey string, ok bool) {
	for _, k := range keys() {
		if k.fileOf == name {
			return k.name, true
		}
	}
	return "", false
}
