package haentities

// Entity keys: the <entity> part of unique_ids and topics. They are a contract with users' HA
// configurations: never rename one.
const (
	NowPlaying        = "now_playing"
	Playing           = "playing"
	NowPlayingSystem  = "now_playing_system"
	LastSession       = "last_session"
	LastSessionLength = "last_session_length"
	PlayTime          = "play_time"
	GameSession       = "game_session"
	Screensaver       = "screensaver"
	Activity          = "activity"
	Cabinet           = "cabinet"
)

// HA components used by the catalogue.
const (
	ComponentSensor       = "sensor"
	ComponentBinarySensor = "binary_sensor"
	ComponentEvent        = "event"
	ComponentButton       = "button"
	ComponentNotify       = "notify"
)

// Activity states (the enum options of the activity sensor).
const (
	ActivityMenu        = "menu"
	ActivityScreensaver = "screensaver"
	ActivityPlaying     = "playing"
	ActivityOff         = "off"
)

// Event types of the game_session event entity.
const (
	EventSessionStart = "session_start"
	EventSessionEnd   = "session_end"
)

// Event types of the cabinet event entity.
const (
	CabinetStart    = "start"
	CabinetWake     = "wake"
	CabinetSleep    = "sleep"
	CabinetQuit     = "quit"
	CabinetReboot   = "reboot"
	CabinetShutdown = "shutdown"
)

// Entity is one row of the catalogue: everything its discovery config says. The daemon's diagnostics
// and controls are added as more rows (EntityCategory, ExpireAfter, Command, NoState, Confirmed are
// there for them).
type Entity struct {
	Key         string // entity key, e.g. NowPlaying
	Component   string // sensor, binary_sensor, event, button, notify…
	Name        string // short feature name; HA prefixes the device name
	Icon        string // mdi:…; "" keeps HA's default
	DeviceClass string
	StateClass  string
	Unit        string
	// DisplayPrecision is suggested_display_precision; nil leaves it out.
	DisplayPrecision *int
	Options          []string // enum options
	EventTypes       []string // event components
	Attributes       bool     // has <state topic>/attributes (json_attributes_topic)
	// NoAvailability leaves the availability topic out: the entity keeps working while the cabinet is
	// offline (activity shows "off"; cabinet and session events fire next to the offline message).
	NoAvailability bool
	EntityCategory string // "", "diagnostic" or "config" (sensors refuse "config")
	ExpireAfter    int    // seconds; 0 leaves it out
	Command        bool   // has <state topic>/set (buttons, notify)
	NoState        bool   // no state topic (buttons, notify)
	// Confirmed says optimistic false explicitly on a command entity with a state: HA shows a change
	// only once the daemon's retained state confirms it.
	Confirmed bool
	// Image has an image_topic (base64 JPEG) instead of a state topic.
	Image bool
	// Min, Max, Step and Mode are a number's range and widget.
	Min, Max, Step *float64
	Mode           string
}

// PlayTracking is the catalogue of the entities the hook and the daemon publish for play tracking,
// in publishing order.
func PlayTracking() []Entity {
	zero := 0
	return []Entity{
		{Key: NowPlaying, Component: ComponentSensor, Name: "Now playing", Icon: "mdi:gamepad-variant", Attributes: true},
		{Key: Playing, Component: ComponentBinarySensor, Name: "Playing", Icon: "mdi:controller", DeviceClass: "running"},
		{Key: NowPlayingSystem, Component: ComponentSensor, Name: "Now playing system", Icon: "mdi:television-classic"},
		{Key: LastSession, Component: ComponentSensor, Name: "Last session", Icon: "mdi:history", Attributes: true},
		{Key: LastSessionLength, Component: ComponentSensor, Name: "Last session length", Icon: "mdi:timer-outline",
			DeviceClass: "duration", Unit: "min", StateClass: "measurement", DisplayPrecision: &zero},
		{Key: PlayTime, Component: ComponentSensor, Name: "Play time", Icon: "mdi:timer-sand",
			DeviceClass: "duration", Unit: "s", StateClass: "total_increasing"},
		{Key: GameSession, Component: ComponentEvent, Name: "Game session", Icon: "mdi:gamepad-variant-outline",
			EventTypes: []string{EventSessionStart, EventSessionEnd}, NoAvailability: true},
		{Key: Screensaver, Component: ComponentBinarySensor, Name: "Screensaver", Icon: "mdi:monitor-shimmer", Attributes: true},
		{Key: Activity, Component: ComponentSensor, Name: "Activity", Icon: "mdi:list-status", DeviceClass: "enum",
			Options: []string{ActivityMenu, ActivityScreensaver, ActivityPlaying, ActivityOff}, NoAvailability: true},
		{Key: Cabinet, Component: ComponentEvent, Name: "Cabinet", Icon: "mdi:power",
			EventTypes:     []string{CabinetStart, CabinetWake, CabinetSleep, CabinetQuit, CabinetReboot, CabinetShutdown},
			NoAvailability: true},
	}
}
