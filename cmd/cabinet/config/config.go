package config

import (
	"path/filepath"
	"strings"

	"github.com/batocera-cabinet/cabinet/hook/paths"
)

// Secret holds a credential. Its String and JSON forms are masked so that a
// secret passed to a logger or printed by mistake never shows; call Reveal
// where the real value is needed (the MQTT dial, an HTTP header).
type Secret string

// Mask is what a set secret prints as.
const Mask = "********"

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Mask
}

// GoString masks %#v too.
func (s Secret) GoString() string { return s.String() }

// MarshalText masks JSON and zerolog output.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

// Config is the effective configuration. Paths are as written; use Path and
// the helpers below to get them resolved under cabinet.paths.root.
type Config struct {
	Name          string
	ID            string
	StateDir      string
	Root          string
	ESURL         string
	RetroArchAddr string
	ScreenshotDir string
	MQTT          MQTT
	Tracker       Tracker
	Selected      Selected
	MCP           MCP
	HA            HA
	RomM          RomM
	ROMarr        ROMarr
	Library       Library
	Household     Household
	LogLevel      string
}

// Household holds the play-time rules' keys (cabinet.household.*) as
// written: package household owns what they mean (its Keys, Check and
// Parse are the rules' contract).
type Household struct {
	Values map[string]string
	// Profiles are the cabinet.household.profile.<name>.<rule> keys (each checked): the rules of
	// the players cabinet.household.profiles lists.
	Profiles map[string]string
}

// Merged is every cabinet.household.* key, the profiles' too, for household.Parse.
func (h Household) Merged() map[string]string {
	m := make(map[string]string, len(h.Values)+len(h.Profiles))
	for k, v := range h.Values {
		m[k] = v
	}
	for k, v := range h.Profiles {
		m[k] = v
	}
	return m
}

// MQTT is the broker link.
type MQTT struct {
	Broker          string
	Username        string
	Password        Secret
	PasswordFile    string
	CAFile          string
	ClientID        string
	DiscoveryPrefix string
	BaseTopic       string
	HAStatusTopic   string
}

// Tracker holds the play-tracking rules.
type Tracker struct {
	MinSessionSeconds         int
	IgnoreScreensaverLaunches bool
}

// Selected holds the selection feed's keys (cabinet.selected.*): what is under
// ES's cursor, debounced.
type Selected struct {
	SettleMS         int  // a selection must hold this long to be published
	ScreensaverPicks bool // the screensaver's random games are published too
}

// MCP holds the MCP server switches.
type MCP struct {
	Listen         string
	ReadOnly       bool
	DryRun         bool
	Power          bool // batocera_power (restart ES, reboot, shut down)
	AllowedHosts   []string
	AllowedOrigins []string
	// TLS is cabinet.mcp.tls ("", "off" or "self-signed"); TLSCertFile
	// and TLSKeyFile name a certificate to serve instead (as written: see
	// Path); TLSOnly refuses plain HTTP.
	TLS                     string
	TLSCertFile, TLSKeyFile string
	TLSOnly                 bool
	CFAccess                CFAccess
	// OAuth is cabinet.mcp.oauth: the cabinet's own authorization server,
	// for clients that sign in (needs PublicURL, cabinet.mcp.public_url).
	OAuth     bool
	PublicURL string
	// OAuthClientHosts (cabinet.mcp.oauth_client_hosts) are the hosts whose
	// client metadata documents are read: empty is the known clients'
	// (package cimd's DefaultHosts), "*" any public host, "off" none.
	OAuthClientHosts []string
}

// CFAccess is cabinet.mcp.cf_access.*: the Cloudflare Access application
// whose assertions MCP over HTTP accepts (off while TeamDomain is empty).
type CFAccess struct {
	TeamDomain    string
	AUD           string
	AllowedEmails []string
	CertsURL      string
	Scopes        []string
}

// On reports whether any cabinet.mcp.cf_access.* key that turns the check
// on is set (a half-set one is an error the daemon reports).
func (a CFAccess) On() bool {
	return a.TeamDomain != "" || a.AUD != "" || len(a.AllowedEmails) > 0 || a.CertsURL != ""
}

// HA holds Home Assistant options.
type HA struct {
	Controls  bool
	Power     bool // the restart, reboot and shutdown buttons
	Household bool // the play-time controls (limits, today's limit, extra time, pause)
}

// RomM is the household's RomM server.
type RomM struct {
	URL       string
	Token     Secret
	TokenFile string
	// CAFile is a home CA bundle for RomM's TLS.
	CAFile string
	// PlatformMap overrides the RomM slug → Batocera folder mapping
	// (cabinet.romm.platform_map=<romm slug>:<batocera folder>,…).
	PlatformMap map[string]string
	// ReportPlay sends activity and play sessions to RomM once the cabinet
	// is paired (cabinet.romm.report_play).
	ReportPlay bool
	// SyncSaves syncs the games' saves with RomM once the cabinet is paired with the assets
	// scopes (cabinet.romm.sync_saves); SyncStates adds the auto state; SyncSystems limits
	// it to these systems (none: every covered one).
	SyncSaves, SyncStates bool
	SyncSystems           []string
	// SaveBackups and SaveBackupBytes bound the backups a sync keeps.
	SaveBackups     int
	SaveBackupBytes int64
}

// ROMarr is the household's ROMarr server.
type ROMarr struct {
	URL        string
	APIKey     Secret
	APIKeyFile string
}

// Library holds the library write switches and the install cap.
type Library struct {
	AllowWrites, AllowInstall bool
	MaxInstallBytes           int64 // what one install may write
}

// Default returns the configuration with every key at its default.
func Default() Config {
	var c Config
	for _, k := range keys() {
		k.set(&c, k.def)
	}
	return c
}

// Path resolves a system path (such as /userdata/system/batocera.conf) under
// cabinet.paths.root, so tests and the simulator run on a fake tree. An
// empty root leaves the path unchanged.
func (c *Config) Path(p string) string { return ResolvePath(c.Root, p) }

// ResolvePath joins root and an absolute system path.
func ResolvePath(root, p string) string {
	if root == "" || p == "" {
		return p
	}
	return filepath.Join(root, strings.TrimPrefix(p, "/"))
}

// StatePath is the resolved state directory (store, log, token, id).
func (c *Config) StatePath() string { return c.Path(c.StateDir) }

// RunDir is the tmpfs directory for the daemon socket and the screensaver
// flag (/var/run/cabinet): /userdata may be vfat, which has no sockets.
func (c *Config) RunDir() string { return c.Path("/var/run/cabinet") }

// Layout names the files in the state and run dirs.
func (c *Config) Layout() paths.Layout { return paths.Layout{State: c.StatePath(), Run: c.RunDir()} }

// ScreenshotPath is the resolved RetroArch screenshot folder.
func (c *Config) ScreenshotPath() string { return c.Path(c.ScreenshotDir) }

// MQTTEnabled reports whether a broker is configured.
func (c *Config) MQTTEnabled() bool { return c.MQTT.Broker != "" }

// Secrets lists the non-empty secret values, for log redaction.
func (c *Config) Secrets() []string {
	var out []string
	for _, s := range []Secret{c.MQTT.Password, c.RomM.Token, c.ROMarr.APIKey} {
		if s != "" {
			out = append(out, s.Reveal())
		}
	}
	return out
}
