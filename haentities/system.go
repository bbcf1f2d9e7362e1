package haentities

import (
	"encoding/base64"
	"strconv"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Keys of the daemon's power, volume, controller and update entities (design/ha-entities.md, "Power,
// artwork, volume, controllers, updates"). A contract with users' HA configurations: never rename one.
const (
	RestartES  = "restart_es" // buttons, only with cabinet.ha.power
	Reboot     = "reboot"
	Shutdown   = "shutdown"
	PowerState = "power_state"
	Volume     = "volume" // number 0–100
	Mute       = "mute"   // switch
	// Controllers is the count of game pads (attributes: names, batteries); Controller the event entity.
	Controllers = "controllers"
	Controller  = "controller"
	OSUpdate    = "os" // update.batocera_os ("OS": HA prefixes the device name)
	// Artwork is image.batocera_artwork: the running game's picture, a
	// placeholder when idle.
	Artwork = "artwork"
	// LastScreenshot is image.batocera_last_screenshot: the newest file in
	// the screenshot folder, a placeholder before the first.
	LastScreenshot = "last_screenshot"
	// PlayTimeToday is the logged play since local midnight (seconds),
	// with the week's most played games as attributes.
	PlayTimeToday = "play_time_today"
)

// Host diagnostics (entity_category diagnostic, beside Diagnostics).
const (
	LastBoot   = "last_boot"   // timestamp of the boot: the uptime, without a new state every minute
	Load       = "load"        // 1-minute load average
	MemoryUsed = "memory_used" // % of RAM in use
	IPAddress  = "ip_address"
)

// More HA components.
const (
	ComponentNumber = "number"
	ComponentSwitch = "switch"
	ComponentUpdate = "update"
	ComponentImage  = "image"
	ComponentText   = "text"
	ComponentSelect = "select"
)

// Power states (the enum options of power_state).
const (
	PowerRunning      = "running"
	PowerRestartingES = "restarting_es"
	PowerRebooting    = "rebooting"
	PowerShuttingDown = "shutting_down"
	// PowerOff is published only by the daemon's clean stop during a shutdown, just before offline:
	// "off" means the shutdown reached its end (a smart plug may cut power a margin later).
	PowerOff = "off"
	// PowerStopped is any other clean stop (an upgrade, batocera-services stop, a reboot's end).
	PowerStopped = "stopped"
)

// Event types of the controller event entity.
const (
	ControllerConnected    = "connected"
	ControllerDisconnected = "disconnected"
)

// Sources says which optional sources this cabinet has. The daemon finds out at start; an entity
// whose source is missing is not announced at all (and its config is cleared if it was), rather than
// announced and never given a state. The OS version and the update need Settings.BatoceraVersion too.
type Sources struct {
	CPUTemperature bool // a readable thermal zone
	Audio          bool // batocera-audio: volume and mute
	Controllers    bool // the kernel's input device list
	Update         bool // Batocera's update check
	Network        bool // an interface with a default route and an address
	Host           bool // the kernel's boot time, load and memory figures (/proc)
}

// VolumeStep is the volume slider's step.
const VolumeStep = 5

// PowerButtons is the catalogue of the power buttons (cabinet.ha.power). Category config: HA leaves
// them off default dashboards and away from voice assistants.
func PowerButtons() []Entity {
	button := func(key, name, icon, deviceClass string) Entity {
		return Entity{Key: key, Component: ComponentButton, Name: name, Icon: icon, DeviceClass: deviceClass,
			Command: true, NoState: true, EntityCategory: "config"}
	}
	return []Entity{
		button(RestartES, "Restart EmulationStation", "mdi:restart", "restart"),
		button(Reboot, "Reboot", "mdi:restart-alert", "restart"),
		button(Shutdown, "Shut down", "mdi:power", ""),
	}
}

// systemEntities is every row of the power, volume, controller and update entities, unfiltered.
func systemEntities() []Entity {
	zero, hundred, step := 0.0, 100.0, float64(VolumeStep)
	return []Entity{
		{Key: PowerState, Component: ComponentSensor, Name: "Power state", Icon: "mdi:power-settings", DeviceClass: "enum",
			Options: []string{PowerRunning, PowerRestartingES, PowerRebooting, PowerShuttingDown, PowerOff, PowerStopped}},
		{Key: Volume, Component: ComponentNumber, Name: "Volume", Icon: "mdi:volume-high", Unit: "%",
			Min: &zero, Max: &hundred, Step: &step, Mode: "slider", Command: true},
		{Key: Mute, Component: ComponentSwitch, Name: "Mute", Icon: "mdi:volume-off", Command: true},
		{Key: Controllers, Component: ComponentSensor, Name: "Controllers", Icon: "mdi:gamepad-variant", StateClass: "measurement",
			Attributes: true},
		{Key: Controller, Component: ComponentEvent, Name: "Controller", Icon: "mdi:gamepad-round",
			EventTypes: []string{ControllerConnected, ControllerDisconnected}},
		{Key: OSUpdate, Component: ComponentUpdate, Name: "OS", Icon: "mdi:update"},
		{Key: Artwork, Component: ComponentImage, Name: "Artwork", Image: true, NoState: true},
		{Key: LastScreenshot, Component: ComponentImage, Name: "Last screenshot", Image: true, NoState: true},
		// total_increasing: HA's statistics read the drop at midnight as
		// the start of a new cycle (a daily meter), not as negative play.
		{Key: PlayTimeToday, Component: ComponentSensor, Name: "Play time today", Icon: "mdi:timer-sand-complete",
			DeviceClass: "duration", Unit: "s", StateClass: "total_increasing", Attributes: true},
	}
}

// hostDiagnostics are the host rows of Diagnostics.
func hostDiagnostics(diag func(Entity) Entity) []Entity {
	one, two := 1, 2
	return []Entity{
		diag(Entity{Key: LastBoot, Name: "Last boot", Icon: "mdi:clock-start", DeviceClass: "timestamp"}),
		diag(Entity{Key: Load, Name: "Load (1 min)", Icon: "mdi:chip", StateClass: "measurement", DisplayPrecision: &two}),
		diag(Entity{Key: MemoryUsed, Name: "Memory used", Icon: "mdi:memory", Unit: "%", StateClass: "measurement",
			DisplayPrecision: &one}),
		diag(Entity{Key: IPAddress, Name: "IP address", Icon: "mdi:ip-network"}),
	}
}

// has reports whether this cabinet has the source of a daemon entity.
func (s Settings) has(key string) bool {
	switch key {
	case CPUTemperature:
		return s.Has.CPUTemperature
	case BatoceraVersion:
		return s.BatoceraVersion != ""
	case Volume, Mute:
		return s.Has.Audio
	case Controllers, Controller:
		return s.Has.Controllers
	case OSUpdate:
		return s.Has.Update && s.BatoceraVersion != ""
	case IPAddress:
		return s.Has.Network
	case LastBoot, Load, MemoryUsed:
		return s.Has.Host
	}
	return true
}

// PowerStateMessage is the retained power_state.
func PowerStateMessage(s Settings, state string, at time.Time) Message {
	return retained(s.StateTopic(PowerState), []byte(state), KindState, at)
}

// AudioStates are the retained volume (0–100) and mute states.
func AudioStates(s Settings, level int, muted bool, at time.Time) []Message {
	m := OffState
	if muted {
		m = OnState
	}
	return []Message{
		retained(s.StateTopic(Volume), []byte(strconv.Itoa(min(max(level, 0), 100))), KindState, at),
		retained(s.StateTopic(Mute), []byte(m), KindState, at),
	}
}

// Pad is one game pad as published.
type Pad struct {
	Name    string
	Battery *int // 0–100, nil when the pad reports none
}

// Caps of the controller attributes.
const (
	maxPads        = 32
	maxPadNameRune = 64
)

type controllersAttrs struct {
	Names     []string       `json:"names"`
	Batteries map[string]int `json:"batteries,omitempty"` // name → %
}

// PlayDay is the play-time-today figure (hook/playday computes it).
type PlayDay struct {
	Seconds  int64
	Day      string // the local date it counts ("2006-01-02")
	ClockSet bool   // false: the cabinet's clock is not set yet, the figure adds to the last day known
	Top      []TopGame
	WeekS    int64 // the last seven days' logged play
}

// TopGame is a game's logged play over the week.
type TopGame struct {
	Game    string `json:"game"`
	Seconds int64  `json:"seconds"`
}

type playDayAttrs struct {
	Day      string    `json:"day"`
	ClockSet bool      `json:"clock_set"`
	WeekS    int64     `json:"week_s"`
	TopGames []TopGame `json:"top_games"`
}

// maxTopGames bounds the week's list HA is given.
const maxTopGames = 5

// PlayTimeTodayStates are the retained play-time-today figure and its attributes.
func PlayTimeTodayStates(s Settings, p PlayDay, at time.Time) []Message {
	a := playDayAttrs{Day: clean(p.Day), ClockSet: p.ClockSet, WeekS: max(p.WeekS, 0), TopGames: []TopGame{}}
	for _, g := range p.Top[:min(len(p.Top), maxTopGames)] {
		a.TopGames = append(a.TopGames, TopGame{Game: untrusted.Clean(g.Game, maxDetailRunes), Seconds: max(g.Seconds, 0)})
	}
	return []Message{
		retained(s.StateTopic(PlayTimeToday), []byte(strconv.FormatInt(max(p.Seconds, 0), 10)), KindState, at),
		retained(s.AttributesTopic(PlayTimeToday), marshal(a), KindState, at),
	}
}

// ControllerStates are the retained controllers count and its attributes (names, battery % of the
// pads that report one).
func ControllerStates(s Settings, pads []Pad, at time.Time) []Message {
	if len(pads) > maxPads {
		pads = pads[:maxPads]
	}
	a := controllersAttrs{Names: []string{}}
	for _, p := range pads {
		n := untrusted.Clean(p.Name, maxPadNameRune)
		if n == "" {
			n = "Controller"
		}
		a.Names = append(a.Names, n)
		if p.Battery != nil && *p.Battery >= 0 && *p.Battery <= 100 {
			if a.Batteries == nil {
				a.Batteries = map[string]int{}
			}
			a.Batteries[n] = *p.Battery
		}
	}
	return []Message{
		retained(s.StateTopic(Controllers), []byte(strconv.Itoa(len(pads))), KindState, at),
		retained(s.AttributesTopic(Controllers), marshal(a), KindState, at),
	}
}

type controllerEvent struct {
	EventType string `json:"event_type"`
	Name      string `json:"name"`
}

// ControllerEvent is a controller event (ControllerConnected or ControllerDisconnected), not
// retained, time-sensitive: a pad plugged in an hour ago is no news.
func ControllerEvent(s Settings, kind, name string, at time.Time) Message {
	n := untrusted.Clean(name, maxPadNameRune)
	p := controllerEvent{EventType: kind, Name: n}
	return event(s.StateTopic(Controller), marshal(p), KindTimeSensitive, kind+"/"+n+"@"+at.UTC().Format(time.RFC3339Nano), at)
}

type updateState struct {
	Installed string `json:"installed_version"`
	Latest    string `json:"latest_version,omitempty"`
	Title     string `json:"title"`
}

// UpdateState is the retained state of update.batocera_os: the installed version and, once Batocera's
// update check has answered, the latest one (equal when up to date). Before the first answer HA shows
// the installed version and an unknown latest one.
func UpdateState(s Settings, latest string, at time.Time) Message {
	u := updateState{Installed: cleanVersion(s.BatoceraVersion), Latest: cleanVersion(latest), Title: "Batocera"}
	return retained(s.StateTopic(OSUpdate), marshal(u), KindState, at)
}

// ImageContentType is the one content type of every published picture.
const ImageContentType = "image/jpeg"

// ArtworkState is the retained picture of image.batocera_artwork: a JPEG
// (daemon/artwork), base64-encoded so the payload stays text.
func ArtworkState(s Settings, jpeg []byte, at time.Time) Message {
	return PictureState(s, Artwork, jpeg, at)
}

// PictureState is the retained picture of an image entity (Artwork,
// LastScreenshot).
func PictureState(s Settings, entity string, jpeg []byte, at time.Time) Message {
	return retained(s.StateTopic(entity), []byte(base64.StdEncoding.EncodeToString(jpeg)), KindState, at)
}
