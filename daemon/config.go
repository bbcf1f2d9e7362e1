package daemon

import (
	"reflect"

	"github.com/batocera-cabinet/cabinet/daemon/cfaccess"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/daemon/links"
	"github.com/batocera-cabinet/cabinet/daemon/selection"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/paths"
)

// Config is the daemon's own configuration: cmd/cabinet maps the cabinet.*
// keys to it, and maps them again after every edit of the file. Each part
// has its own section, so what a change needs to rebuild is derived by
// comparing sections (see changes), not kept by hand.
type Config struct {
	Layout paths.Layout
	// Rules are the journal's: Home Assistant settings (the daemon's own
	// entities included), tracker rules, whether MQTT is on.
	Rules journal.Rules
	// MQTT is the link's connection (Broker "" means MQTT is off);
	// BirthTopic is Home Assistant's status topic.
	MQTT       mqttlink.Options
	BirthTopic string
	// Tools is what the MCP tools are built from; the watcher and the name
	// cache reach ES at the same Tools.ESURL.
	Tools links.Settings
	// HTTP is MCP over HTTP; it applies at the next start.
	HTTP HTTP
	// Diagnostics is what the diagnostic entities read.
	Diagnostics Diagnostics
	// System is where the cabinet's own tools and kernel files are.
	System   System
	LogLevel string
	// Secrets are scrubbed from every log line.
	Secrets []string
	// RomM is where play sessions are reported (off unless paired).
	RomM rommreport.Config
	// Household is the play-time rules (cabinet.household.*).
	Household household.Rules
	// SaveSync is the syncing of the games' saves with RomM (cabinet.romm.sync_*).
	SaveSync savesync.Config
	// Selection is the selection feed's (cabinet.selected.*).
	Selection selection.Config
}

// HTTP is MCP over Streamable HTTP.
type HTTP struct {
	Listen         string // cabinet.mcp.listen
	AllowedHosts   []string
	AllowedOrigins []string
	TLS            TLS
	// Access is Cloudflare Access (cabinet.mcp.cf_access.*); nil: off,
	// and the assertion header is ignored.
	Access *Access
	// OAuth is the cabinet's own authorization server (cabinet.mcp.oauth);
	// nil: off, and its paths answer a JSON 404.
	OAuth *OAuth
}

// OAuth is sign-in for MCP clients (package oauth).
type OAuth struct {
	// PublicURL is the https origin clients use (cabinet.mcp.public_url);
	// its host joins the Host allow-list.
	PublicURL string
	// ClientHosts are the hosts whose client metadata documents are read:
	// nil the known clients' (cimd.DefaultHosts), {"*"} any public host,
	// empty and non-nil none.
	ClientHosts []string
}

// Access is the Cloudflare Access application whose assertions MCP over
// HTTP accepts, as cfaccess.Options take it, and the scopes its identities
// get.
type Access struct {
	TeamDomain    string
	Audience      string
	AllowedEmails []string
	CertsURL      string // "": the team's
	Scopes        []string
}

// Options are the verifier's options.
func (a *Access) Options() cfaccess.Options {
	return cfaccess.Options{TeamDomain: a.TeamDomain, Audience: a.Audience, AllowedEmails: a.AllowedEmails, CertsURL: a.CertsURL}
}

// TLS is the certificate MCP over HTTP serves: files (cabinet.mcp.tls_cert_file
// and tls_key_file, resolved) or a self-signed pair kept in the state dir;
// neither is plain HTTP only. Plain HTTP is served on the same port beside
// TLS unless Only (cabinet.mcp.tls_only).
type TLS struct {
	CertFile, KeyFile string
	SelfSigned        bool
	Only              bool
}

// On reports whether a certificate is configured.
func (t TLS) On() bool { return t.SelfSigned || t.CertFile != "" || t.KeyFile != "" }

// Diagnostics are the sources of the diagnostic entities (the Batocera
// version is the settings').
type Diagnostics struct {
	ThermalZones string // glob of the kernel's temperature files
}

// System names the cabinet's own tools and the kernel files the daemon
// reads for the power, volume, controller, update and host entities
// (resolved under cabinet.paths.root by cmd/cabinet; "" means none).
type System struct {
	// ShutdownFlag is the file ES leaves for Batocera's shutdown
	// (/tmp/shutdown.please): present at a clean stop, the stop is a
	// shutdown's.
	ShutdownFlag string
	Proc         string // /proc: boot time, load, memory, routes
	Sys          string // /sys: the default interface's MAC, the pads' batteries
	InputDevices string // /proc/bus/input/devices: the game pads
	Audio        string // batocera-audio
	// Upgrade and BatoceraConfig hold Batocera's update check
	// (batocera-upgrade --check-upgrade, before it batocera-config canupdate).
	Upgrade        string
	BatoceraConfig string
	// ESSettings is EmulationStation's es_settings.cfg (the UI mode);
	// ESInit its init script, which restarts it.
	ESSettings string
	ESInit     string
}

// Loaded is one reading of the configuration.
type Loaded struct {
	Config   Config
	Warnings []string
	// Err is set when some values are invalid: Config then holds their
	// defaults (at start), and a reload keeps the configuration in force.
	Err error
}

// changes says what a new configuration needs from the running daemon.
type changes struct {
	rules, link, tools, es bool
	// http and layout apply at the next start: the listener, the store and
	// the socket are open.
	http, layout bool
}

func diff(old, cur *Config) changes {
	return changes{
		rules: !reflect.DeepEqual(old.Rules, cur.Rules),
		// The link's topics come from the settings (availability, commands).
		link: old.MQTT != cur.MQTT || old.BirthTopic != cur.BirthTopic || old.Rules.Settings != cur.Rules.Settings,
		// The save tools that change files come with cabinet.romm.sync_saves.
		tools:  !reflect.DeepEqual(old.Tools, cur.Tools) || old.SaveSync.Asked != cur.SaveSync.Asked,
		es:     old.Tools.ESURL != cur.Tools.ESURL,
		http:   !reflect.DeepEqual(old.HTTP, cur.HTTP),
		layout: old.Layout != cur.Layout,
	}
}

// mqttEnabled reports whether a broker is configured.
func (c *Config) mqttEnabled() bool { return c.MQTT.Broker != "" }
