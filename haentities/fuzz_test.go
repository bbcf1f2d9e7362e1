package haentities

import (
	"encoding/json"
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
		s := Settings{ID: "fuzz", Name: systemName, Model: rom, BatoceraVersion: game, Daemon: true, Controls: true}
		sess := Session{ID: "20260102T190000.000Z-1c2d3e4f", Game: game, System: system, SystemName: systemName,
			Rom: rom, Source: "es", Started: goldenNow, Ended: goldenNow.Add(time.Minute), Duration: time.Minute}
		snap := Snapshot{Online: true, Activity: ActivityPlaying, Playing: true, Current: sess, Screensaver: true,
			ScreensaverType: ssType, Last: sess, PlayTime: time.Hour}
		msgs := append(States(s, snap, goldenNow), SessionStart(s, sess, goldenNow), SessionEnd(s, sess, goldenNow))
		msgs = append(msgs, Discovery(s, goldenNow)...)
		msgs = append(msgs, DiagnosticStates(s, DiagnosticValues{BatoceraVersion: game, CabinetVersion: rom}, goldenNow)...)
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
