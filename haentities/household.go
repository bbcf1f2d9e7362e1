package haentities

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Household entity keys (design/ha-entities.md, "Household"): a parent's play-time limits. A contract
// with users' HA configurations: never rename one. The names in HouseholdEntities are chosen so HA
// derives exactly these entity ids with the default device name (switch.batocera_limits, …).
const (
	Limits        = "limits"          // switch: the limits are enforced
	DailyLimit    = "daily_limit"     // number: today's limit in minutes
	TimeLeftToday = "time_left_today" // sensor: minutes left today (attributes: limit, bonus, used, …)
	LimitState    = "limit_state"     // sensor enum: LimitOff … LimitPaused
	ExtraTime     = "extra_time"      // button: +15 minutes today
	ExtraTime30   = "extra_time_30"   // button: +30 minutes today
	ExtraTime60   = "extra_time_60"   // button: +60 minutes today
	PausePlay     = "pause_play"      // switch: no play until a parent turns it off
	LimitEvent    = "limit"           // event: LimitWarned … LimitTimeRequested
	Player        = "player"          // select: the household's profiles; who plays from the next game
	UIMode        = "ui_mode"         // select: EmulationStation's user interface mode (UIModeFull …)
	DenyTime      = "deny_time"       // button: no to the player's request for more time
)

// EmulationStation's user interface modes (es-app UIModeController mUIModes), the ui_mode select's
// options: Full shows everything, Kiosk hides the settings, Kid also shows only games marked kidgame.
const (
	UIModeFull  = "Full"
	UIModeKiosk = "Kiosk"
	UIModeKid   = "Kid"
)

// UIModes are the UI modes, in ES's menu order.
var UIModes = []string{UIModeFull, UIModeKiosk, UIModeKid}

// ParseUIMode reads a UI mode (the ui_mode select's command, batocera_set_ui_mode's argument).
func ParseUIMode(payload []byte) (string, error) {
	v := strings.TrimSpace(string(payload))
	if !slices.Contains(UIModes, v) {
		return "", fmt.Errorf("UI mode %q: want Full, Kiosk or Kid", untrusted.Clean(v, 40))
	}
	return v, nil
}

// PlayerNone is the player select's first option: no profile, the cabinet's own rules.
const PlayerNone = "—"

// Limit states (the enum options of limit_state).
const (
	LimitOff     = "off"     // the limits are off
	LimitOK      = "ok"      // time is left
	LimitWarning = "warning" // little time is left
	LimitTimeUp  = "time_up" // today's time is used up
	LimitBedtime = "bedtime" // within the bedtime window
	LimitPaused  = "paused"  // a parent paused play
)

// Event types of the limit event entity.
const (
	LimitWarned   = "warned"   // little time is left (minutes: what is left)
	LimitReached  = "reached"  // the time is up and the game is stopped
	LimitExtended = "extended" // a parent granted time (minutes: how much)
	LimitRefused  = "refused"  // a game was not allowed to start
	// LimitTimeRequested: the player asked for more time from the cabinet (minutes: how much).
	LimitTimeRequested = "time_requested"
)

// MaxDailyLimit is the largest daily limit, in minutes: the whole day. The daily_limit number shows
// it when there is no daily limit, so a parent who types it lifts the limit in effect.
const MaxDailyLimit = 24 * 60

// extraTimes are the minutes each extra-time button grants.
var extraTimes = map[string]int{ExtraTime: 15, ExtraTime30: 30, ExtraTime60: 60}

// ExtraTimeMinutes is the minutes an extra-time button grants; 0 for any other entity.
func ExtraTimeMinutes(entity string) int { return extraTimes[entity] }

// HouseholdEntities is the catalogue of the household entities, in publishing order. A parent uses the
// controls daily: they are normal entities, not config ones. Commands use QoS 1 (Config), so a press
// the broker redelivers carries MQTT's DUP flag and the daemon can ignore it.
func HouseholdEntities() []Entity {
	zero, most, one := 0.0, float64(MaxDailyLimit), 1.0
	wholeMinutes := 0
	button := func(key, name string) Entity {
		return Entity{Key: key, Component: ComponentButton, Name: name, Icon: "mdi:timer-plus-outline", Command: true, NoState: true}
	}
	return []Entity{
		{Key: Limits, Component: ComponentSwitch, Name: "Limits", Icon: "mdi:account-child", Command: true, Confirmed: true},
		{Key: DailyLimit, Component: ComponentNumber, Name: "Daily limit", Icon: "mdi:timer-cog-outline", Unit: "min",
			Min: &zero, Max: &most, Step: &one, Mode: "box", Command: true, Confirmed: true},
		{Key: TimeLeftToday, Component: ComponentSensor, Name: "Time left today", Icon: "mdi:av-timer",
			DeviceClass: "duration", Unit: "min", DisplayPrecision: &wholeMinutes, Attributes: true},
		{Key: LimitState, Component: ComponentSensor, Name: "Limit state", Icon: "mdi:traffic-light", DeviceClass: "enum",
			Options: []string{LimitOff, LimitOK, LimitWarning, LimitTimeUp, LimitBedtime, LimitPaused}},
		// Named for their entity ids: "+15 min" would make button.batocera_15_min.
		button(ExtraTime, "Extra time"),
		button(ExtraTime30, "Extra time 30"),
		button(ExtraTime60, "Extra time 60"),
		{Key: PausePlay, Component: ComponentSwitch, Name: "Pause play", Icon: "mdi:pause-octagon", Command: true, Confirmed: true},
		{Key: LimitEvent, Component: ComponentEvent, Name: "Limit", Icon: "mdi:timer-alert-outline",
			EventTypes: []string{LimitWarned, LimitReached, LimitExtended, LimitRefused, LimitTimeRequested}},
		{Key: Player, Component: ComponentSelect, Name: "Player", Icon: "mdi:account-switch", Command: true, Confirmed: true},
		{Key: UIMode, Component: ComponentSelect, Name: "UI mode", Icon: "mdi:human-child", Command: true, Confirmed: true,
			Options: UIModes},
		{Key: DenyTime, Component: ComponentButton, Name: "Deny time", Icon: "mdi:timer-off-outline", Command: true, NoState: true},
	}
}

// playerOptions are the player select's options: PlayerNone, then Settings.Profiles.
func playerOptions(s Settings) []string {
	out := []string{PlayerNone}
	if s.Profiles != "" {
		out = append(out, strings.Split(s.Profiles, ",")...)
	}
	return out
}

// ParsePlayer reads the player select's command: a profile's name, or "" for PlayerNone.
func ParsePlayer(s Settings, payload []byte) (string, error) {
	v := strings.TrimSpace(string(payload))
	if v == PlayerNone {
		return "", nil
	}
	if !slices.Contains(playerOptions(s), v) {
		return "", fmt.Errorf("%q is not one of the household's players (%s)", untrusted.Clean(v, 40), s.Profiles)
	}
	return v, nil
}

// householdOn says whether the setting that gates a household entity is on (cabinet.ha.household for
// the controls, it or cabinet.household.enabled for what a parent reads); ok is false for any other
// entity.
func householdOn(s Settings, key string) (on, ok bool) {
	switch key {
	case Limits, DailyLimit, ExtraTime, ExtraTime30, ExtraTime60, PausePlay, UIMode, DenyTime:
		return s.Household, true
	case TimeLeftToday, LimitState, LimitEvent:
		return s.Household || s.LimitsOn, true
	case Player:
		return (s.Household || s.LimitsOn) && s.Profiles != "", true
	}
	return false, false
}

// HouseholdState is what the household rules say now (daemon/household fills it in).
type HouseholdState struct {
	Enabled      bool   // the limits are on
	State        string // one of the Limit* states; "" reads as LimitOff
	LimitMinutes int    // today's daily limit; -1: none
	BonusMinutes int    // extra time granted today
	UsedSeconds  int64  // play counted today
	LeftSeconds  int64  // play left today; -1: unlimited
	Bedtime      string // "21:00-07:00", or "" for none
	WhyBlocked   string // why play is not allowed now; "" when it is
	Paused       bool   // a parent paused play
	Day          string // the local date counted ("2006-01-02")
	ClockTrusted bool   // the cabinet's clock is set: the day is the real one
	Profile      string // whose time this is (the running game's player, else Player); "" the cabinet's
	Player       string // the player chosen now; "" none
}

// timeLeftAttrs are time_left_today's attributes. Every key is always there, null when it has no
// value, so templates read None rather than fail on a missing key.
type timeLeftAttrs struct {
	Limit        *int    `json:"limit"` // minutes, without the bonus; null: no daily limit
	Bonus        int     `json:"bonus"` // minutes
	Used         int64   `json:"used"`  // whole minutes
	Bedtime      *string `json:"bedtime"`
	WhyBlocked   *string `json:"why_blocked"`
	Profile      *string `json:"profile"`
	Day          *string `json:"day"`
	ClockTrusted bool    `json:"clock_trusted"`
}

// Caps of the household text.
const (
	maxBedtimeRunes = 32
	maxDayRunes     = 32
)

// HouseholdStates builds the retained states of the household entities s announces, in catalogue
// order: the limits and pause_play switches (ON/OFF), daily_limit (today's limit in minutes;
// MaxDailyLimit when there is none: the whole day), time_left_today (whole minutes, rounded down;
// None, which HA reads as unknown, when play is unlimited) with its attributes, and limit_state (an
// unknown state publishes None).
func HouseholdStates(s Settings, h HouseholdState, at time.Time) []Message {
	var out []Message
	st := func(entity, v string) {
		if s.announces(entity) {
			out = append(out, retained(s.StateTopic(entity), []byte(v), KindState, at))
		}
	}
	limit := MaxDailyLimit
	if h.LimitMinutes >= 0 {
		limit = min(h.LimitMinutes, MaxDailyLimit)
	}
	left := NoneState
	if h.LeftSeconds >= 0 {
		left = strconv.FormatInt(h.LeftSeconds/60, 10)
	}
	state := h.State
	switch state {
	case "":
		state = LimitOff
	case LimitOff, LimitOK, LimitWarning, LimitTimeUp, LimitBedtime, LimitPaused:
	default:
		state = NoneState
	}
	st(Limits, onOff(h.Enabled))
	st(DailyLimit, strconv.Itoa(limit))
	st(TimeLeftToday, left)
	if s.announces(TimeLeftToday) {
		out = append(out, retained(s.AttributesTopic(TimeLeftToday), marshal(newTimeLeftAttrs(h)), KindState, at))
	}
	st(LimitState, state)
	st(PausePlay, onOff(h.Paused))
	player := h.Player
	if player == "" {
		player = PlayerNone
	}
	st(Player, player)
	return out
}

func newTimeLeftAttrs(h HouseholdState) timeLeftAttrs {
	a := timeLeftAttrs{
		Bonus:        max(h.BonusMinutes, 0),
		Used:         max(h.UsedSeconds, 0) / 60,
		Bedtime:      optional(untrusted.Clean(h.Bedtime, maxBedtimeRunes)),
		WhyBlocked:   optional(clean(h.WhyBlocked)),
		Profile:      optional(untrusted.Clean(h.Profile, maxDeviceRunes)),
		Day:          optional(untrusted.Clean(h.Day, maxDayRunes)),
		ClockTrusted: h.ClockTrusted,
	}
	if h.LimitMinutes >= 0 {
		l := min(h.LimitMinutes, MaxDailyLimit)
		a.Limit = &l
	}
	return a
}

// optional is nil for "": a JSON null.
func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

type limitEvent struct {
	EventType string  `json:"event_type"`
	Game      *string `json:"game"`
	Detail    *string `json:"detail"`
	Minutes   int     `json:"minutes"`
	At        string  `json:"at"`
	Profile   *string `json:"profile"` // whose time; null for the cabinet's own
}

// LimitEventMessage is a limit event: kind is one of LimitWarned, LimitReached, LimitExtended,
// LimitRefused; game the game concerned ("" for none), detail a short reason, minutes what is left
// (warned) or granted (extended); when is the moment it happened, at when the message is built. Not
// retained; time-sensitive: a late "time is up" would notify a parent at the wrong time.
func LimitEventMessage(s Settings, kind, game, detail, profile string, minutes int, when, at time.Time) Message {
	p := limitEvent{EventType: kind, Game: optional(clean(game)), Detail: optional(clean(detail)), Minutes: max(minutes, 0),
		At: formatTime(when), Profile: optional(untrusted.Clean(profile, maxDeviceRunes))}
	key := kind + "/" + strconv.Itoa(p.Minutes) + "@" + when.UTC().Format(time.RFC3339Nano)
	return event(s.StateTopic(LimitEvent), marshal(p), KindTimeSensitive, key, at)
}

// UIModeStates is the ui_mode select's retained state when s announces it: one of UIModes; anything
// else publishes None (HA shows unknown).
func UIModeStates(s Settings, mode string, at time.Time) []Message {
	if !s.announces(UIMode) {
		return nil
	}
	if !slices.Contains(UIModes, mode) {
		mode = NoneState
	}
	return []Message{retained(s.StateTopic(UIMode), []byte(mode), KindState, at)}
}
