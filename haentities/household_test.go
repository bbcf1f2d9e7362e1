package haentities

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// goldenHousehold are the household states whose payloads are pinned: limits off, a day with time
// left and a bonus, the time up, bedtime with no daily limit, play paused, and hostile text.
func goldenHousehold() []HouseholdState {
	return []HouseholdState{
		{State: LimitOff, LimitMinutes: -1, LeftSeconds: -1, Day: "2026-01-02", ClockTrusted: true},
		{Enabled: true, State: LimitOK, LimitMinutes: 90, BonusMinutes: 15, UsedSeconds: 3599, LeftSeconds: 3001,
			Bedtime: "21:00-07:00", Day: "2026-01-02", ClockTrusted: true},
		{Enabled: true, State: LimitTimeUp, LimitMinutes: 60, UsedSeconds: 3720, LeftSeconds: 0,
			WhyBlocked: "Today's 60 minutes are used up", Day: "2026-01-02", ClockTrusted: true},
		{Enabled: true, State: LimitBedtime, LimitMinutes: -1, UsedSeconds: 600, LeftSeconds: 0, Bedtime: "21:00-07:00",
			WhyBlocked: "Bedtime (21:00-07:00)", Day: "2026-01-02"},
		{Enabled: false, State: LimitPaused, Paused: true, LimitMinutes: 5000, LeftSeconds: -1, WhyBlocked: "Play is paused"},
		{Enabled: true, State: "bogus\x1b[31m", LimitMinutes: -7, BonusMinutes: -3, UsedSeconds: -9, LeftSeconds: 59,
			Bedtime: "21:00\u202e-07:00", WhyBlocked: "\u202eevil\x00 " + strings.Repeat("why ", 100), Profile: "Kid\u200b", Day: "2026\n01"},
	}
}

// householdStates is every golden household state of s, in order.
func householdStates(s Settings) []Message {
	var out []Message
	for _, h := range goldenHousehold() {
		out = append(out, HouseholdStates(s, h, goldenNow)...)
	}
	return append(out, UIModeStates(s, UIModeKid, goldenNow)...)
}

// householdEvents is one limit event of each type.
func householdEvents(s Settings) []Message {
	return []Message{
		LimitEventMessage(s, LimitWarned, goldenCurrent().Game, "5 minutes left", "alice", 5, goldenNow, goldenNow),
		LimitEventMessage(s, LimitReached, goldenCurrent().Game, "Today's 60 minutes are used up", "", 0, goldenNow, goldenNow),
		LimitEventMessage(s, LimitExtended, "", "granted from Home Assistant", "", 15, goldenNow, goldenNow),
		LimitEventMessage(s, LimitRefused, "Tetris\u202e\x1b[1m", "bedtime", "", -4, goldenNow, goldenNow.Add(time.Second)),
	}
}

func TestGoldenHousehold(t *testing.T) {
	s := daemonSettings()
	checkGolden(t, "states_household", render(householdStates(s)))
	checkGolden(t, "events_household", render(householdEvents(s)))
}

// TestHouseholdEntityIDs: the names make HA derive the entity ids of design/ha-entities.md with the
// default device name.
func TestHouseholdEntityIDs(t *testing.T) {
	want := []string{"switch.batocera_limits", "number.batocera_daily_limit", "sensor.batocera_time_left_today",
		"sensor.batocera_limit_state", "button.batocera_extra_time", "button.batocera_extra_time_30",
		"button.batocera_extra_time_60", "switch.batocera_pause_play", "event.batocera_limit", "select.batocera_player",
		"select.batocera_ui_mode", "button.batocera_deny_time"}
	var got []string
	for _, e := range HouseholdEntities() {
		id := e.Component + "." + haSlug("Batocera "+e.Name)
		got = append(got, id)
		if id != e.Component+".batocera_"+e.Key {
			t.Errorf("%s: HA derives %s from the name %q", e.Key, id, e.Name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("entity ids %v, want %v", got, want)
	}
}

// TestHouseholdConfigs: the controls are QoS 1 (a redelivered command carries DUP), never retained
// by HA, not config entities; switches and the number show only the daemon's confirmed state.
func TestHouseholdConfigs(t *testing.T) {
	s := daemonSettings()
	for _, e := range HouseholdEntities() {
		var cfg map[string]any
		if err := json.Unmarshal(Config(s, e, goldenNow).Payload, &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg["qos"] != float64(1) || cfg["entity_category"] != nil || cfg["availability_topic"] != s.AvailabilityTopic() {
			t.Errorf("%s: qos %v entity_category %v availability %v", e.Key, cfg["qos"], cfg["entity_category"], cfg["availability_topic"])
		}
		switch e.Component {
		case ComponentSwitch, ComponentNumber, ComponentSelect:
			if cfg["state_topic"] != s.StateTopic(e.Key) || cfg["command_topic"] != s.CommandTopic(e.Key) ||
				cfg["retain"] != false || cfg["optimistic"] != false {
				t.Errorf("%s: state_topic %v command_topic %v retain %v optimistic %v", e.Key, cfg["state_topic"],
					cfg["command_topic"], cfg["retain"], cfg["optimistic"])
			}
		case ComponentButton:
			if cfg["command_topic"] != s.CommandTopic(e.Key) || cfg["retain"] != false || cfg["payload_press"] != PayloadPress ||
				cfg["state_topic"] != nil || cfg["optimistic"] != nil {
				t.Errorf("%s: %v", e.Key, cfg)
			}
			if ExtraTimeMinutes(e.Key) == 0 && e.Key != DenyTime {
				t.Errorf("%s: a button that grants no time", e.Key)
			}
		default:
			if cfg["command_topic"] != nil || cfg["state_topic"] != s.StateTopic(e.Key) {
				t.Errorf("%s: command_topic %v state_topic %v", e.Key, cfg["command_topic"], cfg["state_topic"])
			}
		}
	}
	n := Config(s, HouseholdEntities()[1], goldenNow)
	if !strings.Contains(string(n.Payload), `"min":0,"max":1440,"step":1,"mode":"box"`) ||
		!strings.Contains(string(n.Payload), `"unit_of_measurement":"min"`) {
		t.Errorf("daily_limit config %s", n.Payload)
	}
	// The existing switch keeps its config: optimistic is said only where the catalogue asks.
	for _, e := range systemEntities() {
		if e.Key == Mute && strings.Contains(string(Config(s, e, goldenNow).Payload), "optimistic") {
			t.Errorf("mute's config changed: %s", Config(s, e, goldenNow).Payload)
		}
	}
}

// TestHouseholdStates checks which states each setting publishes and the numbers a parent sees.
func TestHouseholdStates(t *testing.T) {
	ok := HouseholdState{Enabled: true, State: LimitOK, LimitMinutes: 90, BonusMinutes: 15, UsedSeconds: 3599, LeftSeconds: 3001}
	none := HouseholdState{State: LimitOff, LimitMinutes: -1, LeftSeconds: -1}
	tests := []struct {
		name               string
		daemon, hh, limits bool
		h                  HouseholdState
		want               map[string]string // state topic key → payload; attributes are checked below
	}{
		{"off", true, false, false, ok, map[string]string{}},
		{"hook", false, true, true, ok, map[string]string{}},
		{"limits on", true, false, true, ok, map[string]string{TimeLeftToday: "50", LimitState: LimitOK}},
		{"household", true, true, false, ok, map[string]string{Limits: "ON", DailyLimit: "90", TimeLeftToday: "50",
			LimitState: LimitOK, PausePlay: "OFF"}},
		{"unlimited", true, true, true, none, map[string]string{Limits: "OFF", DailyLimit: "1440", TimeLeftToday: NoneState,
			LimitState: LimitOff, PausePlay: "OFF"}},
		{"zero value", true, true, true, HouseholdState{}, map[string]string{Limits: "OFF", DailyLimit: "0", TimeLeftToday: "0",
			LimitState: LimitOff, PausePlay: "OFF"}},
		{"paused, huge limit, unknown state", true, true, true,
			HouseholdState{Enabled: true, State: "later", Paused: true, LimitMinutes: 5000, LeftSeconds: 59},
			map[string]string{Limits: "ON", DailyLimit: "1440", TimeLeftToday: "0", LimitState: NoneState, PausePlay: "ON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goldenSettings()
			s.Daemon, s.Household, s.LimitsOn = tt.daemon, tt.hh, tt.limits
			got := map[string]string{}
			for _, m := range HouseholdStates(s, tt.h, goldenNow) {
				if !m.Retain || m.QoS != 1 || m.Kind != KindState || len(m.Payload) == 0 {
					t.Errorf("%s: retain=%v qos=%d kind=%v payload %q", m.Topic, m.Retain, m.QoS, m.Kind, m.Payload)
				}
				if m.Topic == s.AttributesTopic(TimeLeftToday) {
					continue
				}
				key := strings.TrimPrefix(m.Topic, s.StateTopic(""))
				if !s.announces(key) {
					t.Errorf("state of %s, which is not announced", key)
				}
				got[key] = string(m.Payload)
			}
			if len(got) != len(tt.want) {
				t.Errorf("states %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestTimeLeftAttributes(t *testing.T) {
	s := daemonSettings()
	attrs := func(h HouseholdState) map[string]any {
		t.Helper()
		for _, m := range HouseholdStates(s, h, goldenNow) {
			if m.Topic == s.AttributesTopic(TimeLeftToday) {
				var a map[string]any
				if err := json.Unmarshal(m.Payload, &a); err != nil {
					t.Fatal(err)
				}
				return a
			}
		}
		t.Fatal("no attributes")
		return nil
	}
	a := attrs(HouseholdState{LimitMinutes: 90, BonusMinutes: 15, UsedSeconds: 3599, Bedtime: "21:00-07:00",
		WhyBlocked: "a\x00b", Day: "2026-01-02", ClockTrusted: true})
	want := map[string]any{"limit": float64(90), "bonus": float64(15), "used": float64(59), "bedtime": "21:00-07:00",
		"why_blocked": "ab", "profile": nil, "day": "2026-01-02", "clock_trusted": true}
	for k, v := range want {
		if got, ok := a[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if len(a) != len(want) {
		t.Errorf("attributes %v, want the keys of %v", a, want)
	}
	if a := attrs(HouseholdState{LimitMinutes: -1}); a["limit"] != nil || a["bedtime"] != nil || a["why_blocked"] != nil {
		t.Errorf("no limit: %v", a)
	}
}

func TestLimitEventMessage(t *testing.T) {
	s := daemonSettings()
	m := LimitEventMessage(s, LimitExtended, "Tetris", "granted", "", 30, goldenNow, goldenNow.Add(time.Second))
	if m.Retain || m.QoS != 1 || m.Kind != KindTimeSensitive || m.Key != "extended/30@2026-01-02T20:15:00Z" ||
		m.Topic != "batocera/0a1b2c3d/limit" || !m.Created.Equal(goldenNow.Add(time.Second)) {
		t.Errorf("message %+v", m)
	}
	var p map[string]any
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"event_type": "extended", "game": "Tetris", "detail": "granted", "minutes": float64(30),
		"at": "2026-01-02T21:15:00+01:00", "profile": nil}
	for k, v := range want {
		if got, ok := p[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if len(p) != len(want) {
		t.Errorf("payload %s", m.Payload)
	}
	other := LimitEventMessage(s, LimitExtended, "Tetris", "granted", "", 15, goldenNow, goldenNow)
	if other.Key == m.Key {
		t.Errorf("two grants at the same moment share the key %q", m.Key)
	}
}

func TestTakesCommands(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		want bool
	}{
		{"hook", Settings{ID: "x", Controls: true, Household: true}, false},
		{"daemon, nothing on", Settings{ID: "x", Daemon: true}, false},
		{"daemon, limits read only", Settings{ID: "x", Daemon: true, LimitsOn: true}, false},
		{"daemon, household", Settings{ID: "x", Daemon: true, Household: true}, true},
		{"daemon, controls", Settings{ID: "x", Daemon: true, Controls: true}, true},
		{"daemon, power", Settings{ID: "x", Daemon: true, Power: true}, true},
		{"daemon, save sync", Settings{ID: "x", Daemon: true, SaveSync: true}, false},
		{"daemon, sign-in", Settings{ID: "x", Daemon: true, MCPClients: true}, false},
		{"daemon, audio", Settings{ID: "x", Daemon: true, Has: Sources{Audio: true}}, true},
	}
	for _, tt := range tests {
		if got := tt.s.TakesCommands(); got != tt.want {
			t.Errorf("%s: TakesCommands() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseCommands(t *testing.T) {
	minutes := []struct {
		in   string
		want int // -1: refused
	}{
		{"0", 0}, {"90", 90}, {"90.0", 90}, {"1440", 1440}, {"1440.000", 1440}, {"-0", 0}, {"007", 7},
		{"", -1}, {"-5", -1}, {"1441", -1}, {"90.5", -1}, {" 90", -1}, {"90\n", -1}, {"+90", -1}, {"9e1", -1},
		{"0x5a", -1}, {"inf", -1}, {"NaN", -1}, {"1_0", -1}, {"9-0", -1}, {"1.2.3", -1}, {".", -1}, {"1e400", -1},
		{strings.Repeat("0", 30) + "1", -1},
	}
	for _, tt := range minutes {
		got, err := ParseLimitMinutes([]byte(tt.in))
		if tt.want < 0 {
			if err == nil || !strings.Contains(err.Error(), "0 to 1440") {
				t.Errorf("ParseLimitMinutes(%q) = %d, %v; want an error naming the range", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseLimitMinutes(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for in, want := range map[string]bool{"ON": true, "OFF": false} {
		if got, err := ParseSwitch([]byte(in)); err != nil || got != want {
			t.Errorf("ParseSwitch(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"on", "", "ON ", "1", "true"} {
		if _, err := ParseSwitch([]byte(in)); err == nil {
			t.Errorf("ParseSwitch(%q) accepted", in)
		}
	}
	if err := ParsePress([]byte("PRESS")); err != nil {
		t.Errorf("ParsePress(PRESS) = %v", err)
	}
	for _, in := range []string{"press", "", "PRESS\n", "ON"} {
		if err := ParsePress([]byte(in)); err == nil {
			t.Errorf("ParsePress(%q) accepted", in)
		}
	}
	for key, want := range map[string]int{ExtraTime: 15, ExtraTime30: 30, ExtraTime60: 60, PauseGame: 0, "": 0} {
		if got := ExtraTimeMinutes(key); got != want {
			t.Errorf("ExtraTimeMinutes(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestPlayerSelect: the player select is announced only when the household has profiles (its
// options "—" then theirs), shows the player chosen, and reads a command as a profile or none.
func TestPlayerSelect(t *testing.T) {
	s := daemonSettings()
	s.Household = true
	if s.announces(Player) {
		t.Error("announced without profiles")
	}
	s.Profiles = "alice,bob"
	if !s.announces(Player) {
		t.Fatal("not announced with profiles")
	}
	var e Entity
	for _, c := range HouseholdEntities() {
		if c.Key == Player {
			e = c
		}
	}
	cfg := string(Config(s, e, goldenNow).Payload)
	if !strings.Contains(cfg, `"options":["—","alice","bob"]`) || !strings.Contains(cfg, `"command_topic":"`+s.CommandTopic(Player)+`"`) {
		t.Errorf("config %s", cfg)
	}
	for payload, want := range map[string]string{"alice": "alice", "—": "", " bob ": "bob"} {
		if got, err := ParsePlayer(s, []byte(payload)); err != nil || got != want {
			t.Errorf("%q: %q %v", payload, got, err)
		}
	}
	if _, err := ParsePlayer(s, []byte("carol")); err == nil || !strings.Contains(err.Error(), "alice,bob") {
		t.Errorf("an unknown player: %v", err)
	}
	msgs := HouseholdStates(s, HouseholdState{Player: "bob", LimitMinutes: -1, LeftSeconds: -1}, goldenNow)
	found := false
	for _, m := range msgs {
		found = found || m.Topic == s.StateTopic(Player) && string(m.Payload) == "bob"
	}
	if !found {
		t.Errorf("the player's state is not published: %v", msgs)
	}
}
