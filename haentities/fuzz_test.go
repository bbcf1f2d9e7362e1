package haentities

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzPayloads: whatever ES, RomM or a hostile file name puts in a session, every payload stays valid:
// UTF-8, never an empty retained payload, text states within 255 characters, attributes and events JSON
// objects that keep the text.
func FuzzPayloads(f *testing.F) {
	f.Add("Super Mario Bros. (World)", "nes", "/userdata/roms/nes/smb.nes", "Nintendo", "random video")
	f.Add("\u202eevil\x00\xff", "", "", "\u200b", "")
	f.Add(strings.Repeat("ア", 300), "snes\n", "a\"b\\c", "x", "dim")
	f.Fuzz(func(t *testing.T, game, system, rom, systemName, ssType string) {
		s := Settings{ID: "fuzz", Name: systemName, Model: rom, BatoceraVersion: game, Daemon: true, Controls: true,
			Household: true, SaveSync: true, MCPClients: true}
		sess := Session{ID: "20260102T190000.000Z-1c2d3e4f", Game: game, System: system, SystemName: systemName,
			Rom: rom, Source: "es", Started: goldenNow, Ended: goldenNow.Add(time.Minute), Duration: time.Minute}
		snap := Snapshot{Online: true, Activity: ActivityPlaying, Playing: true, Current: sess, Screensaver: true,
			ScreensaverType: ssType, Last: sess, PlayTime: time.Hour}
		msgs := append(States(s, snap, goldenNow), SessionStart(s, sess, goldenNow), SessionEnd(s, sess, goldenNow))
		msgs = append(msgs, Discovery(s, goldenNow)...)
		msgs = append(msgs, DiagnosticStates(s, DiagnosticValues{BatoceraVersion: game, CabinetVersion: rom}, goldenNow)...)
		msgs = append(msgs, HouseholdStates(s, HouseholdState{State: ssType, Bedtime: system, WhyBlocked: game, Profile: systemName,
			Day: rom, LimitMinutes: len(game) - 5, LeftSeconds: int64(len(rom)) - 5}, goldenNow)...)
		msgs = append(msgs, LimitEventMessage(s, LimitRefused, game, rom, system, len(system)-3, goldenNow, goldenNow))
		msgs = append(msgs, SaveSyncStates(s, SaveSyncState{State: ssType, LastError: game, UploadsToday: len(rom) - 5}, goldenNow)...)
		msgs = append(msgs, SaveProblemMessage(s, SaveProblem{Kind: ssType, Game: game, System: system, ROM: rom, Slot: systemName,
			Detail: game, Todo: rom}, goldenNow))
		msgs = append(msgs, MCPClientsStates(s, MCPClientsState{Clients: []MCPClient{{ID: rom, Name: game, Kind: ssType,
			Scopes: []string{system, systemName}, LastRequest: goldenNow}}}, goldenNow)...)
		for _, m := range msgs {
			if !utf8.Valid(m.Payload) {
				t.Fatalf("%s: invalid UTF-8 %q", m.Topic, m.Payload)
			}
			if m.Retain && len(m.Payload) == 0 {
				t.Fatalf("%s: empty retained payload", m.Topic)
			}
			isJSON := strings.HasSuffix(m.Topic, "/attributes") || strings.HasSuffix(m.Topic, "/config") || !m.Retain
			if isJSON {
				var obj map[string]any
				if err := json.Unmarshal(m.Payload, &obj); err != nil {
					t.Fatalf("%s: not a JSON object: %v\n%s", m.Topic, err, m.Payload)
				}
				continue
			}
			if n := utf8.RuneCount(m.Payload); n > MaxStateRunes {
				t.Fatalf("%s: %d characters", m.Topic, n)
			}
			if strings.ContainsAny(string(m.Payload), "\n\r\t\x00\u202e\u200b") {
				t.Fatalf("%s: control or invisible character left in %q", m.Topic, m.Payload)
			}
		}
	})
}

// FuzzCommandEntity: a command topic parses to an entity key only when rebuilding its command topic
// gives the same topic back.
func FuzzCommandEntity(f *testing.F) {
	f.Add("batocera/abc/pause_game/set")
	f.Add("batocera/abc/a/b/set")
	f.Add("batocera/abc//set")
	f.Fuzz(func(t *testing.T, topic string) {
		s := Settings{ID: "abc"}
		entity, ok := s.CommandEntity(topic)
		if !ok {
			return
		}
		if entity == "" || strings.ContainsAny(entity, "/+#") || s.CommandTopic(entity) != topic {
			t.Fatalf("CommandEntity(%q) = %q", topic, entity)
		}
	})
}

// FuzzHouseholdCommands: whatever arrives on a household command topic, only an exact ON/OFF sets a
// switch, only an exact PRESS presses, and a daily limit read is whole minutes in range that the
// same payload always gives (HA's "90" and "90.0" alike).
func FuzzHouseholdCommands(f *testing.F) {
	for _, s := range []string{"90", "90.0", "1440", "1441", "-0", "ON", "OFF", "PRESS", "9e1", "0x10", "1.5", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		if on, err := ParseSwitch([]byte(payload)); err == nil && payload != onOff(on) {
			t.Fatalf("ParseSwitch(%q) = %v", payload, on)
		}
		if err := ParsePress([]byte(payload)); (err == nil) != (payload == PayloadPress) {
			t.Fatalf("ParsePress(%q) = %v", payload, err)
		}
		m, err := ParseLimitMinutes([]byte(payload))
		if err != nil {
			if m != 0 {
				t.Fatalf("ParseLimitMinutes(%q) = %d with an error", payload, m)
			}
			return
		}
		if m < 0 || m > MaxDailyLimit {
			t.Fatalf("ParseLimitMinutes(%q) = %d, out of range", payload, m)
		}
		if strings.Trim(payload, "0123456789.-") != "" {
			t.Fatalf("ParseLimitMinutes(%q) accepted a character outside digits, '.' and '-'", payload)
		}
		if back, err := ParseLimitMinutes([]byte(strconv.Itoa(m))); err != nil || back != m {
			t.Fatalf("ParseLimitMinutes(%q) = %d, but %d reads back as %d, %v", payload, m, m, back, err)
		}
	})
}
