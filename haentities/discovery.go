package haentities

import (
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// device is HA's device block: the same on every config of a cabinet. Only keys HA's device schema
// knows may appear (an unknown one makes HA drop the whole config).
type device struct {
	Identifiers  []string `json:"identifiers"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"manufacturer"`
	Model        string   `json:"model,omitempty"`
	SWVersion    string   `json:"sw_version,omitempty"`
}

// origin names the publisher in HA's logs; unknown keys make HA drop the config too.
type origin struct {
	Name       string `json:"name"`
	SWVersion  string `json:"sw_version,omitempty"`
	SupportURL string `json:"support_url"`
}

// config is one discovery payload, with full key names (easier to review than abbreviations). No
// object_id (deprecated, ignored from HA 2026.4) and no default_entity_id: HA derives entity ids from
// the device and entity names.
type config struct {
	Name                string   `json:"name"`
	UniqueID            string   `json:"unique_id"`
	StateTopic          string   `json:"state_topic,omitempty"`
	JSONAttributesTopic string   `json:"json_attributes_topic,omitempty"`
	CommandTopic        string   `json:"command_topic,omitempty"`
	PayloadPress        string   `json:"payload_press,omitempty"`
	Retain              *bool    `json:"retain,omitempty"`
	AvailabilityTopic   string   `json:"availability_topic,omitempty"`
	DeviceClass         string   `json:"device_class,omitempty"`
	StateClass          string   `json:"state_class,omitempty"`
	Unit                string   `json:"unit_of_measurement,omitempty"`
	DisplayPrecision    *int     `json:"suggested_display_precision,omitempty"`
	Options             []string `json:"options,omitempty"`
	EventTypes          []string `json:"event_types,omitempty"`
	Icon                string   `json:"icon,omitempty"`
	EntityCategory      string   `json:"entity_category,omitempty"`
	ExpireAfter         int      `json:"expire_after,omitempty"`
	QoS                 int      `json:"qos"`
	Device              device   `json:"device"`
	Origin              origin   `json:"origin"`
}

func (s Settings) device() device {
	return device{
		Identifiers:  []string{s.NodeID()},
		Name:         s.deviceName(),
		Manufacturer: Manufacturer,
		Model:        untrusted.Clean(s.Model, maxDeviceRunes),
		SWVersion:    untrusted.Clean(s.BatoceraVersion, maxDeviceRunes),
	}
}

func (s Settings) origin() origin {
	return origin{Name: OriginName, SWVersion: untrusted.Clean(s.Version, maxDeviceRunes), SupportURL: SupportURL}
}

// Config builds the discovery config of one entity (retained, QoS 1).
func Config(s Settings, e Entity, at time.Time) Message {
	c := config{
		Name:             e.Name,
		UniqueID:         s.UniqueID(e.Key),
		DeviceClass:      e.DeviceClass,
		StateClass:       e.StateClass,
		Unit:             e.Unit,
		DisplayPrecision: e.DisplayPrecision,
		Options:          e.Options,
		EventTypes:       e.EventTypes,
		Icon:             e.Icon,
		EntityCategory:   e.EntityCategory,
		ExpireAfter:      e.ExpireAfter,
		QoS:              1, // HA subscribes at the entity's qos: 1 keeps the broker→HA leg reliable
		Device:           s.device(),
		Origin:           s.origin(),
	}
	if !e.NoState {
		c.StateTopic = s.StateTopic(e.Key)
	}
	if e.Attributes {
		c.JSONAttributesTopic = s.AttributesTopic(e.Key)
	}
	if e.Command {
		// HA publishes commands with this retain flag: a retained "PRESS" would replay at every
		// reconnect of the cabinet. Said explicitly, though false is HA's default.
		retain := false
		c.CommandTopic, c.Retain = s.CommandTopic(e.Key), &retain
		if e.Component == ComponentButton {
			c.PayloadPress = PayloadPress
		}
	}
	if !e.NoAvailability {
		c.AvailabilityTopic = s.AvailabilityTopic()
	}
	return retained(s.ConfigTopic(e.Component, e.Key), marshal(c), KindDiscovery, at)
}

// Catalogue is every entity the publisher of s announces, in publishing order: play tracking, then
// for the daemon its diagnostics, and its controls when they are on.
func Catalogue(s Settings) []Entity {
	cat := PlayTracking()
	if s.Daemon {
		cat = append(cat, Diagnostics()...)
		if s.Controls {
			cat = append(cat, Controls()...)
		}
	}
	return cat
}

// Discovery builds the configs of every entity of Catalogue(s), in order. Turning a setting off drops
// its configs from the set, so the outbox clears them (outbox.Tx.RecordDiscovery).
func Discovery(s Settings, at time.Time) []Message {
	cat := Catalogue(s)
	out := make([]Message, 0, len(cat))
	for _, e := range cat {
		out = append(out, Config(s, e, at))
	}
	return out
}

// DiscoveryTopics lists the config topics Discovery publishes, so stale retained configs (topics
// published before and not in this list) can be cleared with ClearConfig.
func DiscoveryTopics(s Settings) []string {
	cat := Catalogue(s)
	out := make([]string, 0, len(cat))
	for _, e := range cat {
		out = append(out, s.ConfigTopic(e.Component, e.Key))
	}
	return out
}

// KeptTopics lists the config topics the publisher of s neither announces nor clears: for a hook, the
// daemon's diagnostics and controls. A hook never updates those entities, and clearing their configs
// whenever it runs without the daemon (a daemon stopped before a shutdown's last events) would delete
// them in HA and lose their history and customisations. The daemon owns every config: nil.
func KeptTopics(s Settings) []string {
	if s.Daemon {
		return nil
	}
	var out []string
	for _, e := range append(Diagnostics(), Controls()...) {
		out = append(out, s.ConfigTopic(e.Component, e.Key))
	}
	return out
}

// ClearConfig is the empty retained message that makes HA remove the entity of a config topic. It is
// the only empty retained payload Cabinet ever sends.
func ClearConfig(topic string, at time.Time) Message {
	return retained(topic, []byte{}, KindDiscovery, at)
}
