package haentities

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSettingsValidate(t *testing.T) {
	tests := []struct {
		name    string
		s       Settings
		wantErr string
	}{
		{"ok", Settings{ID: "0a1b_2c"}, ""},
		{"ok custom topics", Settings{ID: "x", DiscoveryPrefix: "ha", BaseTopic: "home/arcade"}, ""},
		{"empty id", Settings{}, "cabinet id is empty"},
		{"upper case id", Settings{ID: "Cab"}, "a-z, 0-9 and _"},
		{"dot in id", Settings{ID: "batocera.local"}, "a-z, 0-9 and _"},
		{"long id", Settings{ID: strings.Repeat("a", 65)}, "longer than"},
		{"wildcard base", Settings{ID: "x", BaseTopic: "a/+"}, "cabinet.mqtt.base_topic"},
		{"slash prefix", Settings{ID: "x", DiscoveryPrefix: "/ha"}, "cabinet.mqtt.discovery_prefix"},
		{"double slash", Settings{ID: "x", BaseTopic: "a//b"}, "empty topic level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTopicsAndIDs(t *testing.T) {
	s := Settings{ID: "abc"}
	checks := []struct{ got, want string }{
		{s.UniqueID(NowPlaying), "batocera_abc_now_playing"},
		{s.ConfigTopic(ComponentSensor, NowPlaying), "homeassistant/sensor/batocera_abc/now_playing/config"},
		{s.StateTopic(Activity), "batocera/abc/activity"},
		{s.AttributesTopic(LastSession), "batocera/abc/last_session/attributes"},
		{s.AvailabilityTopic(), "batocera/abc/status"},
		{s.CommandTopic("quit_game"), "batocera/abc/quit_game/set"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestDiscoveryContract checks the rules of ha-entities.md on every config, independently of the
// golden files: unique ids, the identical device and origin blocks, no object_id, the availability
// topic everywhere except where the catalogue says otherwise.
func TestDiscoveryContract(t *testing.T) {
	s := goldenSettings()
	msgs := Discovery(s, goldenNow)
	wantKeys := []string{NowPlaying, Playing, NowPlayingSystem, LastSession, LastSessionLength, PlayTime, GameSession, Screensaver, Activity, Cabinet}
	if len(msgs) != len(wantKeys) {
		t.Fatalf("Discovery returned %d configs, want %d", len(msgs), len(wantKeys))
	}
	var firstDevice, firstOrigin any
	seen := map[string]bool{}
	for i, m := range msgs {
		var cfg map[string]any
		if err := json.Unmarshal(m.Payload, &cfg); err != nil {
			t.Fatalf("%s: payload is not JSON: %v", m.Topic, err)
		}
		uid, _ := cfg["unique_id"].(string)
		if want := "batocera_0a1b2c3d_" + wantKeys[i]; uid != want {
			t.Errorf("%s: unique_id %q, want %q", m.Topic, uid, want)
		}
		if seen[uid] {
			t.Errorf("duplicate unique_id %q", uid)
		}
		seen[uid] = true
		if !strings.HasPrefix(m.Topic, "homeassistant/") || !strings.HasSuffix(m.Topic, "/batocera_0a1b2c3d/"+wantKeys[i]+"/config") {
			t.Errorf("config topic %q", m.Topic)
		}
		for _, banned := range []string{"object_id", "obj_id", "default_entity_id"} {
			if _, ok := cfg[banned]; ok {
				t.Errorf("%s: has %s", m.Topic, banned)
			}
		}
		if !m.Retain || m.QoS != 1 || m.Kind != KindDiscovery {
			t.Errorf("%s: retain=%v qos=%d kind=%v, want retained QoS 1 discovery", m.Topic, m.Retain, m.QoS, m.Kind)
		}
		if firstDevice == nil {
			firstDevice, firstOrigin = cfg["device"], cfg["origin"]
		} else if !reflect.DeepEqual(cfg["device"], firstDevice) || !reflect.DeepEqual(cfg["origin"], firstOrigin) {
			t.Errorf("%s: device/origin block differs from the first config", m.Topic)
		}
		_, hasAvail := cfg["availability_topic"]
		wantAvail := wantKeys[i] != Activity && wantKeys[i] != GameSession && wantKeys[i] != Cabinet
		if hasAvail != wantAvail {
			t.Errorf("%s: availability_topic present=%v, want %v", m.Topic, hasAvail, wantAvail)
		}
		if cfg["state_topic"] != "batocera/0a1b2c3d/"+wantKeys[i] {
			t.Errorf("%s: state_topic %v", m.Topic, cfg["state_topic"])
		}
	}
	dev := firstDevice.(map[string]any)
	if dev["name"] != "Arcade Cabinet" || dev["manufacturer"] != "Batocera" || dev["sw_version"] != "41 2025/01/15" {
		t.Errorf("device block %v", dev)
	}
	if got := DiscoveryTopics(s); len(got) != len(msgs) || got[0] != msgs[0].Topic {
		t.Errorf("DiscoveryTopics = %v", got)
	}
}

func TestDefaultDeviceName(t *testing.T) {
	for _, name := range []string{"", " \u200b\t"} {
		m := Config(Settings{ID: "x", Name: name}, PlayTracking()[0], goldenNow)
		if !strings.Contains(string(m.Payload), `"name":"Batocera","manufacturer"`) {
			t.Errorf("name %q: payload %s lacks the default device name", name, m.Payload)
		}
	}
}

// TestStatesNeverEmpty checks every retained payload of every golden snapshot: never empty, at most 255
// characters for text states, valid JSON objects for attributes.
func TestStatesNeverEmpty(t *testing.T) {
	for _, g := range goldenSnapshots() {
		msgs := States(goldenSettings(), g.snap, goldenNow)
		if last := msgs[len(msgs)-1]; last.Kind != KindAvailability {
			t.Errorf("%s: last message is %v, want availability", g.name, last.Kind)
		}
		for _, m := range msgs {
			if len(m.Payload) == 0 {
				t.Errorf("%s: %s has an empty retained payload", g.name, m.Topic)
			}
			if !m.Retain || m.QoS != 1 {
				t.Errorf("%s: %s retain=%v qos=%d", g.name, m.Topic, m.Retain, m.QoS)
			}
			if strings.HasSuffix(m.Topic, "/attributes") {
				var obj map[string]any
				if err := json.Unmarshal(m.Payload, &obj); err != nil {
					t.Errorf("%s: %s is not a JSON object: %s", g.name, m.Topic, m.Payload)
				}
				continue
			}
			if n := utf8.RuneCount(m.Payload); n > MaxStateRunes {
				t.Errorf("%s: %s has %d characters", g.name, m.Topic, n)
			}
		}
	}
}

func TestEventKinds(t *testing.T) {
	s := goldenSettings()
	start := SessionStart(s, goldenCurrent(), goldenNow)
	end := SessionEnd(s, goldenLast(), goldenNow)
	cab := CabinetEvent(s, CabinetReboot, goldenNow, goldenNow.Add(time.Second))
	for _, c := range []struct {
		m    Message
		kind Kind
		key  string
	}{
		{start, KindTimeSensitive, "session_start/" + goldenCurrent().ID},
		{end, KindSessionEnd, goldenLast().ID},
		{cab, KindTimeSensitive, "reboot@2026-01-02T20:15:00Z"},
	} {
		if c.m.Retain || c.m.QoS != 1 || c.m.Kind != c.kind || c.m.Key != c.key {
			t.Errorf("%s: retain=%v qos=%d kind=%v key=%q, want not retained, QoS 1, %v, %q", c.m.Topic, c.m.Retain, c.m.QoS, c.m.Kind, c.m.Key, c.kind, c.key)
		}
	}
	if !cab.Created.Equal(goldenNow.Add(time.Second)) {
		t.Errorf("Created = %v", cab.Created)
	}
	var p map[string]any
	if err := json.Unmarshal(end.Payload, &p); err != nil || p["duration_s"] != float64(750) || p["event_type"] != "session_end" {
		t.Errorf("session_end payload %s (%v)", end.Payload, err)
	}
}
