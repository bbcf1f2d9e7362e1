package haentities

import (
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// allSources is a cabinet with every optional source.
var allSources = Sources{CPUTemperature: true, Audio: true, Controllers: true, Update: true, Network: true, Host: true}

func daemonSettings() Settings {
	s := goldenSettings()
	s.Daemon, s.Controls, s.Power, s.Has, s.MAC = true, true, true, allSources, "b8:27:eb:12:34:56"
	s.Household, s.LimitsOn, s.SaveSync, s.MCPClients = true, true, true, true
	return s
}

func goldenDiagnostics() DiagnosticValues {
	temp, free, load, mem := 47.25, uint64(12_345_678_901), 0.4567, 41.26
	return DiagnosticValues{CPUTemperature: &temp, FreeBytes: &free, BatoceraVersion: "41", CabinetVersion: "0.3.0",
		OutboxDepth: 3, OutboxDropped: 2, MQTTReconnects: 5, Boot: time.Date(2026, 1, 2, 18, 55, 3, 0, zone),
		Load: &load, MemoryUsed: &mem, IPAddress: "192.168.1.42"}
}

// systemStates is every state and event of the power, volume, controller and update entities.
func systemStates(s Settings) []Message {
	pct := 80
	msgs := []Message{PowerStateMessage(s, PowerRunning, goldenNow), PowerStateMessage(s, PowerOff, goldenNow)}
	msgs = append(msgs, AudioStates(s, 65, false, goldenNow)...)
	msgs = append(msgs, AudioStates(s, 0, true, goldenNow)...)
	msgs = append(msgs, ControllerStates(s, nil, goldenNow)...)
	msgs = append(msgs, ControllerStates(s, []Pad{{Name: "Xbox Wireless Controller", Battery: &pct}, {Name: "8BitDo SN30 Pro\u202e"}}, goldenNow)...)
	msgs = append(msgs, ControllerEvent(s, ControllerConnected, "Xbox Wireless Controller", goldenNow),
		ControllerEvent(s, ControllerDisconnected, "Xbox Wireless Controller", goldenNow))
	msgs = append(msgs, UpdateState(s, "", goldenNow), UpdateState(s, "42 2026/02/01", goldenNow))
	msgs = append(msgs, ArtworkState(s, tinyJPEG(), goldenNow), PictureState(s, LastScreenshot, tinyJPEG(), goldenNow))
	msgs = append(msgs, PlayTimeTodayStates(s, PlayDay{}, goldenNow)...)
	msgs = append(msgs, PlayTimeTodayStates(s, PlayDay{Seconds: 5400, Day: "2026-01-02", ClockSet: true, WeekS: 9000,
		Top: []TopGame{{"Street Fighter II' - Champion Edition", 6000}, {"Tetris\u202e\x1b[1m", 3000}}}, goldenNow)...)
	return msgs
}

// tinyJPEG is a 2×2 JPEG, the same bytes every time.
func tinyJPEG() []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2)), nil); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func TestGoldenSystemStates(t *testing.T) {
	checkGolden(t, "states_system", render(systemStates(daemonSettings())))
}

func TestGoldenDaemonDiscovery(t *testing.T) {
	checkGolden(t, "discovery_daemon", render(Discovery(daemonSettings(), goldenNow)))
}

func TestGoldenDiagnosticStates(t *testing.T) {
	s := daemonSettings()
	msgs := DiagnosticStates(s, goldenDiagnostics(), goldenNow)
	msgs = append(msgs, DiagnosticStates(s, DiagnosticValues{CabinetVersion: "dev"}, goldenNow)...)
	checkGolden(t, "states_diagnostics", render(msgs))
}

func keys(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		parts := strings.Split(m.Topic, "/")
		out = append(out, parts[len(parts)-2])
	}
	return out
}

// TestDiscoverySets checks which publisher announces what: the hook only play tracking, the daemon its
// diagnostics too, and the controls only while they are on; and that a hook keeps exactly the daemon's
// configs, so neither publisher ever clears the other's entities.
func TestDiscoverySets(t *testing.T) {
	play := []string{NowPlaying, Playing, NowPlayingSystem, LastSession, LastSessionLength, PlayTime, GameSession, Screensaver, Activity, Cabinet}
	diag := []string{CPUTemperature, FreeSpace, BatoceraVersion, CabinetVersion, OutboxDepth, OutboxDropped, MQTTReconnects,
		LastBoot, Load, MemoryUsed, IPAddress}
	// A cabinet with no thermal zone, no batocera.version, no network: those are not announced.
	bareDiag := []string{FreeSpace, CabinetVersion, OutboxDepth, OutboxDropped, MQTTReconnects}
	sys := []string{PowerState, Volume, Mute, Controllers, Controller, OSUpdate, Artwork, LastScreenshot, PlayTimeToday}
	ctl := []string{QuitGame, PauseGame, SaveState, LoadState, Screenshot, ResetGame, ShowMessage, Play, Favorite, PlayRequest}
	pwr := []string{RestartES, Reboot, Shutdown}
	hh := []string{Limits, DailyLimit, TimeLeftToday, LimitState, ExtraTime, ExtraTime30, ExtraTime60, PausePlay, LimitEvent, UIMode, DenyTime}
	hhKept := []string{Limits, DailyLimit, TimeLeftToday, LimitState, ExtraTime, ExtraTime30, ExtraTime60, PausePlay, LimitEvent, Player, UIMode, DenyTime}
	limits := []string{TimeLeftToday, LimitState, LimitEvent} // what a parent reads
	saves := []string{SaveSyncKey, SaveProblemKey}
	mcp := []string{MCPClientsKey}
	sel := []string{SelectedGame, SelectedSystem, SelectedMarquee} // the selection feed: always the daemon's
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	tests := []struct {
		name              string
		daemon, ctrl, pow bool
		household, lim    bool
		saveSync, mcp     bool
		has               Sources
		noVersion         bool
		want, wantKept    []string
	}{
		{"hook", false, false, false, false, false, false, false, allSources, false, play, cat(diag, sys, ctl, pwr, hhKept, saves, mcp, sel)},
		{"hook with everything on", false, true, true, true, true, true, true, allSources, false, play, cat(diag, sys, ctl, pwr, hhKept, saves, mcp, sel)},
		{"daemon", true, false, false, false, false, false, false, allSources, false, cat(play, diag, sys, sel), nil},
		{"daemon with controls", true, true, false, false, false, false, false, allSources, false, cat(play, diag, sys, ctl, sel), nil},
		{"daemon with power", true, false, true, false, false, false, false, allSources, false, cat(play, diag, sys, pwr, sel), nil},
		{"daemon with household controls", true, false, false, true, false, false, false, allSources, false, cat(play, diag, sys, hh, sel), nil},
		{"daemon with limits on only", true, false, false, false, true, false, false, allSources, false, cat(play, diag, sys, limits, sel), nil},
		{"daemon with save sync", true, false, false, false, false, true, false, allSources, false, cat(play, diag, sys, saves, sel), nil},
		{"daemon with sign-in", true, false, false, false, false, false, true, allSources, false, cat(play, diag, sys, mcp, sel), nil},
		{"daemon with everything", true, true, true, true, true, true, true, allSources, false, cat(play, diag, sys, ctl, pwr, hh, saves, mcp, sel), nil},
		// No dead entities: what the cabinet lacks is not announced (power state always is).
		{"daemon on a bare machine", true, false, false, false, false, false, false, Sources{}, true, cat(play, bareDiag, []string{PowerState, Artwork, LastScreenshot, PlayTimeToday}, sel), nil},
		{"update needs the installed version", true, false, false, false, false, false, false, Sources{Update: true}, true, cat(play, bareDiag, []string{PowerState, Artwork, LastScreenshot, PlayTimeToday}, sel), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goldenSettings()
			s.Daemon, s.Controls, s.Power, s.Has = tt.daemon, tt.ctrl, tt.pow, tt.has
			s.Household, s.LimitsOn, s.SaveSync, s.MCPClients = tt.household, tt.lim, tt.saveSync, tt.mcp
			if tt.noVersion {
				s.BatoceraVersion = ""
			}
			msgs := Discovery(s, goldenNow)
			if got := keys(msgs); !slices.Equal(got, tt.want) {
				t.Errorf("Discovery keys = %v, want %v", got, tt.want)
			}
			topics := DiscoveryTopics(s)
			for i, m := range msgs {
				if topics[i] != m.Topic {
					t.Errorf("DiscoveryTopics[%d] = %q, want %q", i, topics[i], m.Topic)
				}
			}
			kept := KeptTopics(s)
			var keptKeys []string
			for _, k := range kept {
				parts := strings.Split(k, "/")
				keptKeys = append(keptKeys, parts[len(parts)-2])
				if slices.Contains(topics, k) {
					t.Errorf("topic %q is both announced and kept", k)
				}
			}
			if !slices.Equal(keptKeys, tt.wantKept) {
				t.Errorf("KeptTopics keys = %v, want %v", keptKeys, tt.wantKept)
			}
		})
	}
}

// TestDaemonConfigs checks the rules of ha-entities.md on the daemon's own configs.
func TestDaemonConfigs(t *testing.T) {
	s := daemonSettings()
	for _, m := range Discovery(s, goldenNow)[len(PlayTracking()):] {
		var cfg map[string]any
		if err := json.Unmarshal(m.Payload, &cfg); err != nil {
			t.Fatalf("%s: %v", m.Topic, err)
		}
		key := keys([]Message{m})[0]
		if cfg["availability_topic"] != s.AvailabilityTopic() {
			t.Errorf("%s: availability_topic %v", key, cfg["availability_topic"])
		}
		power := slices.Contains([]string{RestartES, Reboot, Shutdown}, key)
		switch {
		case cfg["entity_category"] == "diagnostic":
			// Published every minute, they expire after three; mcp_clients is published on change.
			want := any(float64(180))
			if key == MCPClientsKey {
				want = nil
			}
			if !strings.Contains(m.Topic, "/sensor/") || cfg["expire_after"] != want {
				t.Errorf("%s: a diagnostic %s with expire_after %v, want a sensor with %v", m.Topic, key, cfg["expire_after"], want)
			}
			if cfg["state_topic"] != s.StateTopic(key) || cfg["command_topic"] != nil {
				t.Errorf("%s: state_topic %v command_topic %v", key, cfg["state_topic"], cfg["command_topic"])
			}
		case strings.Contains(m.Topic, "/sensor/"), strings.Contains(m.Topic, "/event/"), strings.Contains(m.Topic, "/update/"):
			if cfg["state_topic"] != s.StateTopic(key) || cfg["command_topic"] != nil || cfg["expire_after"] != nil {
				t.Errorf("%s: state_topic %v command_topic %v expire_after %v", key, cfg["state_topic"], cfg["command_topic"], cfg["expire_after"])
			}
			if strings.Contains(m.Topic, "/update/") && (cfg["payload_install"] != nil || cfg["command_topic"] != nil) {
				t.Errorf("%s: the update entity has an install button", key)
			}
		case strings.Contains(m.Topic, "/image/"):
			if cfg["image_topic"] != s.StateTopic(key) || cfg["image_encoding"] != "b64" || cfg["content_type"] != ImageContentType ||
				cfg["state_topic"] != nil || cfg["command_topic"] != nil {
				t.Errorf("%s: image_topic %v encoding %v content_type %v", key, cfg["image_topic"], cfg["image_encoding"], cfg["content_type"])
			}
		case strings.Contains(m.Topic, "/text/"), strings.Contains(m.Topic, "/select/"):
			if cfg["state_topic"] != s.StateTopic(key) || cfg["command_topic"] != s.CommandTopic(key) || cfg["retain"] != false ||
				cfg["optimistic"] != false {
				t.Errorf("%s: state_topic %v command_topic %v retain %v optimistic %v", key, cfg["state_topic"], cfg["command_topic"],
					cfg["retain"], cfg["optimistic"])
			}
		case strings.Contains(m.Topic, "/number/"), strings.Contains(m.Topic, "/switch/"):
			if cfg["state_topic"] != s.StateTopic(key) || cfg["command_topic"] != s.CommandTopic(key) || cfg["retain"] != false {
				t.Errorf("%s: state_topic %v command_topic %v retain %v", key, cfg["state_topic"], cfg["command_topic"], cfg["retain"])
			}
		case power:
			if cfg["entity_category"] != "config" || cfg["command_topic"] != s.CommandTopic(key) || cfg["retain"] != false {
				t.Errorf("%s: power buttons are config entities: entity_category %v command_topic %v retain %v", key,
					cfg["entity_category"], cfg["command_topic"], cfg["retain"])
			}
		default:
			if cfg["command_topic"] != "batocera/0a1b2c3d/"+key+"/set" || cfg["retain"] != false {
				t.Errorf("%s: command_topic %v retain %v", key, cfg["command_topic"], cfg["retain"])
			}
			if _, ok := cfg["state_topic"]; ok {
				t.Errorf("%s: has a state_topic", key)
			}
			if _, ok := cfg["entity_category"]; ok {
				t.Errorf("%s: controls are normal entities, got entity_category %v", key, cfg["entity_category"])
			}
			wantPress := strings.Contains(m.Topic, "/button/")
			if got := cfg["payload_press"] == PayloadPress; got != wantPress {
				t.Errorf("%s: payload_press %v", key, cfg["payload_press"])
			}
		}
	}
}

func TestDiagnosticStates(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		temp *float64
		want string // "" means no cpu_temperature state
	}{
		{"normal", f(47), "47.0"},
		{"rounded", f(61.96), "62.0"},
		{"unknown", nil, ""},
		{"nan", f(math.NaN()), ""},
		{"inf", f(math.Inf(1)), ""},
		{"absurd", f(1e6), ""},
		{"too cold", f(-100), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := DiagnosticStates(daemonSettings(), DiagnosticValues{CPUTemperature: tt.temp, BatoceraVersion: "None"}, goldenNow)
			got := ""
			for _, m := range msgs {
				if !m.Retain || m.QoS != 1 || m.Kind != KindState || len(m.Payload) == 0 {
					t.Errorf("%s: retain=%v qos=%d kind=%v payload %q", m.Topic, m.Retain, m.QoS, m.Kind, m.Payload)
				}
				switch {
				case strings.HasSuffix(m.Topic, "/"+CPUTemperature):
					got = string(m.Payload)
				case strings.HasSuffix(m.Topic, "/"+BatoceraVersion), strings.HasSuffix(m.Topic, "/"+FreeSpace),
					strings.HasSuffix(m.Topic, "/"+CabinetVersion):
					t.Errorf("unknown figure published: %s %q", m.Topic, m.Payload)
				}
			}
			if got != tt.want {
				t.Errorf("cpu_temperature = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCommandEntity(t *testing.T) {
	s := Settings{ID: "abc", BaseTopic: "home/arcade"}
	tests := []struct {
		topic, want string
		ok          bool
	}{
		{"home/arcade/abc/pause_game/set", "pause_game", true},
		{"home/arcade/abc/anything/set", "anything", true},
		{"home/arcade/abc//set", "", false},
		{"home/arcade/abc/pause_game", "", false},
		{"home/arcade/abc/a/b/set", "", false},
		{"home/arcade/abd/pause_game/set", "", false},
		{"batocera/abc/pause_game/set", "", false},
		{"home/arcade/abc/+/set", "", false},
	}
	for _, tt := range tests {
		got, ok := s.CommandEntity(tt.topic)
		if got != tt.want || ok != tt.ok {
			t.Errorf("CommandEntity(%q) = %q, %v; want %q, %v", tt.topic, got, ok, tt.want, tt.ok)
		}
	}
}
