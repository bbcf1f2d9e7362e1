// Package haentities is Cabinet's contract with Home Assistant, as pure data: the entity catalogue,
// the MQTT discovery configs, and the topics and payloads of every state, attribute, availability and
// event message (design/ha-entities.md). It does no I/O; the outbox stores and the MQTT link publishes
// the Messages built here.
package haentities

import (
	"errors"
	"fmt"
	"strings"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Defaults of the settings (cabinet.name, cabinet.mqtt.discovery_prefix, cabinet.mqtt.base_topic).
const (
	DefaultName            = "Batocera"
	DefaultDiscoveryPrefix = "homeassistant"
	DefaultBaseTopic       = "batocera"
	// SupportURL is the origin's support_url on every discovery config.
	SupportURL = "https://github.com/batocera-cabinet/cabinet"
	// Manufacturer of the HA device.
	Manufacturer = "Batocera"
	// OriginName names the publishing software in HA's logs.
	OriginName = "Cabinet"
)

// Caps of published text: HA refuses states longer than 255 characters.
const (
	MaxStateRunes     = 255
	maxAttributeRunes = 1024 // paths and names inside attribute objects
	maxDeviceRunes    = 64
	maxIDLen          = 64
)

// Settings are what the payloads depend on besides the tracker's snapshot.
type Settings struct {
	ID              string // cabinet id, [a-z0-9_], persisted in its own file
	Name            string // device name (cabinet.name); "" means DefaultName
	DiscoveryPrefix string // "" means DefaultDiscoveryPrefix
	BaseTopic       string // "" means DefaultBaseTopic
	Version         string // Cabinet's version (origin sw_version)
	BatoceraVersion string // device sw_version; may be empty
	Model           string // device model: board or architecture; may be empty
	// Daemon says the publisher is `cabinet serve`: its discovery adds the diagnostics, and the controls
	// when Controls is set. A hook's discovery leaves those configs alone (KeptTopics).
	Daemon bool
	// Controls is cabinet.ha.controls: the daemon announces the buttons and the notify entity.
	Controls bool
	// Favorites are the favourites select's options (FavoriteOptions: one per line), which the
	// daemon reads from ES's lists; a string keeps Settings comparable.
	Favorites string
	// Power is cabinet.ha.power: the daemon announces the restart and shutdown buttons.
	Power bool
	// Household is cabinet.ha.household: the daemon announces a parent's controls (the limits and
	// pause_play switches, the daily_limit number, the extra-time buttons) and what LimitsOn does.
	Household bool
	// LimitsOn is cabinet.household.enabled: the daemon announces time_left_today, limit_state and
	// the limit event (so does Household).
	LimitsOn bool
	// Profiles are cabinet.household.profiles, comma-separated: the player select's options after
	// PlayerNone (announced only when there are some).
	Profiles string
	// SaveSync is cabinet.romm.sync_saves: the daemon announces the save_sync sensor and the
	// save_problem event.
	SaveSync bool
	// Achievements is RetroAchievements on in batocera.conf (a retroachievements key on at any
	// level): the hook and the daemon announce the achievement event and the last-achievement
	// sensor, and publish them. Off, a cabinet that can unlock nothing shows no such entities.
	Achievements bool
	// MCPClients is sign-in for MCP clients (cabinet.mcp.oauth with a usable cabinet.mcp.public_url):
	// the daemon announces the mcp_clients sensor.
	MCPClients bool
	// MAC is the default route's interface's address, chosen once and kept in the state dir so the
	// hook and the daemon publish the same device block; "" leaves connections out.
	MAC string
	// Has is what the daemon found this cabinet has (its diagnostics, volume, controllers, update).
	Has Sources
}

// Validate reports the first setting that cannot produce valid topics, naming the key to fix.
func (s Settings) Validate() error {
	if s.ID == "" {
		return errors.New("cabinet id is empty: set cabinet.id or let Cabinet generate one")
	}
	if len(s.ID) > maxIDLen {
		return fmt.Errorf("cabinet id %q is longer than %d characters: set a shorter cabinet.id", s.ID, maxIDLen)
	}
	for i := 0; i < len(s.ID); i++ {
		c := s.ID[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return fmt.Errorf("cabinet id %q may only use a-z, 0-9 and _: fix cabinet.id", s.ID)
		}
	}
	if err := checkTopicPart(s.DiscoveryPrefix); err != nil {
		return fmt.Errorf("cabinet.mqtt.discovery_prefix: %w", err)
	}
	if err := checkTopicPart(s.BaseTopic); err != nil {
		return fmt.Errorf("cabinet.mqtt.base_topic: %w", err)
	}
	return nil
}

// checkTopicPart accepts "" (the default applies) or a topic prefix without wildcards or control
// characters and without a leading or trailing slash.
func checkTopicPart(p string) error {
	if p == "" {
		return nil
	}
	if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return fmt.Errorf("%q has an empty topic level: remove the extra slash", p)
	}
	for _, r := range p {
		if r == '+' || r == '#' || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%q contains %q, which MQTT topics do not allow here", p, r)
		}
	}
	return nil
}

func (s Settings) prefix() string {
	if s.DiscoveryPrefix == "" {
		return DefaultDiscoveryPrefix
	}
	return s.DiscoveryPrefix
}

func (s Settings) base() string {
	if s.BaseTopic == "" {
		return DefaultBaseTopic
	}
	return s.BaseTopic
}

// NodeID is the discovery node id and the device identifier: batocera_<id>.
func (s Settings) NodeID() string { return "batocera_" + s.ID }

// UniqueID is the unique_id of an entity: batocera_<id>_<entity>.
func (s Settings) UniqueID(entity string) string { return s.NodeID() + "_" + entity }

// ConfigTopic is <prefix>/<component>/batocera_<id>/<entity>/config.
func (s Settings) ConfigTopic(component, entity string) string {
	return s.prefix() + "/" + component + "/" + s.NodeID() + "/" + entity + "/config"
}

// StateTopic is <base>/<id>/<entity>.
func (s Settings) StateTopic(entity string) string { return s.base() + "/" + s.ID + "/" + entity }

// AttributesTopic is <base>/<id>/<entity>/attributes.
func (s Settings) AttributesTopic(entity string) string { return s.StateTopic(entity) + "/attributes" }

// CommandTopic is <base>/<id>/<entity>/set (controls).
func (s Settings) CommandTopic(entity string) string { return s.StateTopic(entity) + "/set" }

// CommandEntity returns the entity key of a command topic <base>/<id>/<entity>/set; ok is false for
// any other topic.
func (s Settings) CommandEntity(topic string) (entity string, ok bool) {
	rest, ok := strings.CutPrefix(topic, s.StateTopic(""))
	if !ok {
		return "", false
	}
	entity, ok = strings.CutSuffix(rest, "/set")
	if !ok || entity == "" || strings.ContainsAny(entity, "/+#") {
		return "", false
	}
	return entity, true
}

// AvailabilityTopic is <base>/<id>/status; payloads online/offline.
func (s Settings) AvailabilityTopic() string { return s.base() + "/" + s.ID + "/status" }

// deviceName is the cleaned device name, never empty.
func (s Settings) deviceName() string {
	if n := untrusted.Clean(s.Name, maxDeviceRunes); n != "" {
		return n
	}
	return DefaultName
}
