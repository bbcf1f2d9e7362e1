package haentities

import (
	"slices"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// device is HA's device block: the same on every config of a cabinet. Only keys HA's device schema
// knows may appear (an unknown one makes HA drop the whole config).
type device struct {
	Identifiers []string `json:"identifiers"`
	// Connections ties the device to the network's view of the cabinet (HA merges devices that share
	// a MAC, and Wake-on-LAN automations find it): [["mac", "aa:bb:…"]].
	Connections  [][2]string `json:"connections,omitempty"`
	Name         string      `json:"name"`
	Manufacturer string      `json:"manufacturer"`
	Model        string      `json:"model,omitempty"`
	SWVersion    string      `json:"sw_version,omitempty"`
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
	PayloadOn           string   `json:"payload_on,omitempty"`
	PayloadOff          string   `json:"payload_off,omitempty"`
	Min                 *float64 `json:"min,omitempty"`
	Max                 *float64 `json:"max,omitempty"`
	Step                *float64 `json:"step,omitempty"`
	Mode                string   `json:"mode,omitempty"`
	ImageTopic          string   `json:"image_topic,omitempty"`
	ImageEncoding       string   `json:"image_encoding,omitempty"`
	ContentType         string   `json:"content_type,omitempty"`
	Retain              *bool    `json:"retain,omitempty"`
	Optimistic          *bool    `json:"optimistic,omitempty"`
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
	var conns [][2]string
	if s.MAC != "" {
		conns = [][2]string{{"mac", s.MAC}}
	}
	return device{
		Identifiers:  []string{s.NodeID()},
		Connections:  conns,
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
		Min:              e.Min,
		Max:              e.Max,
		Step:             e.Step,
		Mode:             e.Mode,
		QoS:              1, // HA subscribes at the entity's qos: 1 keeps the broker→HA leg reliable
		Device:           s.device(),
		Origin:           s.origin(),
	}
	if !e.NoState {
		c.StateTopic = s.StateTopic(e.Key)
	}
	switch e.Key {
	case Favorite:
		c.Options = favoriteOptions(s)
	case Player:
		c.Options = playerOptions(s)
	}
	if e.Attributes {
		c.JSONAttributesTopic = s.AttributesTopic(e.Key)
	}
	if e.Image {
		c.ImageTopic, c.ImageEncoding, c.ContentType = s.StateTopic(e.Key), "b64", ImageContentType
	}
	if e.Command {
		// HA publishes commands with this retain flag: a retained "PRESS" would replay at every
		// reconnect of the cabinet. Said explicitly, though false is HA's default.
		retain := false
		c.CommandTopic, c.Retain = s.CommandTopic(e.Key), &retain
		if e.Confirmed && !e.NoState {
			c.Optimistic = &retain // false
		}
		switch e.Component {
		case ComponentButton:
			c.PayloadPress = PayloadPress
		case ComponentSwitch:
			c.PayloadOn, c.PayloadOff = OnState, OffState
		}
	}
	if !e.NoAvailability {
		c.AvailabilityTopic = s.AvailabilityTopic()
	}
	return retained(s.ConfigTopic(e.Component, e.Key), marshal(c), KindDiscovery, at)
}

// Catalogue is every entity the publisher of s announces, in publishing order: play tracking (with
// the achievements when RetroAchievements is on), then
// for the daemon the diagnostics and the power, volume, controller and update entities whose source
// this cabinet has (Settings.Has), its controls, its power buttons, the household entities, the
// save sync entities and the MCP clients sensor when their settings are on.
func Catalogue(s Settings) []Entity {
	cat := PlayTracking()
	if s.Achievements {
		cat = append(cat, AchievementEntities()...)
	}
	if !s.Daemon {
		return cat
	}
	for _, e := range daemonEntities() {
		if s.has(e.Key) && settingOn(s, e) {
			cat = append(cat, e)
		}
	}
	return cat
}

// TakesCommands says whether an entity s announces takes Home Assistant's commands: the link
// subscribes to <base>/<id>/+/set only then.
func (s Settings) TakesCommands() bool {
	return slices.ContainsFunc(Catalogue(s), func(e Entity) bool { return e.Command })
}

// announces says whether the daemon of s announces a daemon entity: a builder publishes nothing on
// the topics of an entity that is not announced.
func (s Settings) announces(key string) bool {
	if !s.Daemon || !s.has(key) {
		return false
	}
	for _, e := range daemonEntities() {
		if e.Key == key {
			return settingOn(s, e)
		}
	}
	return false
}

// daemonEntities is every entity only the daemon announces, whatever this cabinet has or has on.
func daemonEntities() []Entity {
	return slices.Concat(Diagnostics(), systemEntities(), Controls(), PlayEntities(), PowerButtons(), HouseholdEntities(),
		SaveSyncEntities(), MCPClientsEntities(), SelectedEntities())
}

// settingOn says whether the setting that gates a daemon entity is on: the household entities with
// theirs, the save sync entities with cabinet.romm.sync_saves, the MCP clients sensor with sign-in
// (cabinet.mcp.oauth), the power buttons with cabinet.ha.power, the other buttons and the notify
// entity with cabinet.ha.controls; the others have none.
func settingOn(s Settings, e Entity) bool {
	if on, ok := householdOn(s, e.Key); ok {
		return on
	}
	if on, ok := saveSyncOn(s, e.Key); ok {
		return on
	}
	if on, ok := playOn(s, e.Key); ok {
		return on
	}
	if e.Key == MCPClientsKey {
		return s.MCPClients
	}
	switch e.Component {
	case ComponentButton:
		return buttonOn(s, e.Key)
	case ComponentNotify:
		return s.Controls
	}
	return true
}

// buttonOn says whether a button's switch is on: the power buttons with cabinet.ha.power, the others
// with cabinet.ha.controls.
func buttonOn(s Settings, key string) bool {
	switch key {
	case RestartES, Reboot, Shutdown:
		return s.Power
	}
	return s.Controls
}

// Discovery builds the configs of every entity of Catalogue(s), in order. Turning a setting off drops
// its configs from the set, so the outbox clears them (hook/store Tx.RecordDiscovery).
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
// daemon's diagnostics, controls, household, save sync and MCP clients entities. A hook never updates
// those entities, and clearing their configs whenever it runs without the daemon (a daemon stopped
// before a shutdown's last events) would delete them in HA and lose their history and
// customisations. The daemon owns every config: nil.
func KeptTopics(s Settings) []string {
	if s.Daemon {
		return nil
	}
	var out []string
	for _, e := range daemonEntities() {
		out = append(out, s.ConfigTopic(e.Component, e.Key))
	}
	return out
}

// ClearConfig is the empty retained message that makes HA remove the entity of a config topic. It is
// the only empty retained payload Cabinet ever sends.
func ClearConfig(topic string, at time.Time) Message {
	return retained(topic, []byte{}, KindDiscovery, at)
}
