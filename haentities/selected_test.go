package haentities

import (
	"encoding/json"
	"strings"
	"testing"
)

// goldenSelections are the selection feed's shapes: nothing yet, a system in the carousel, a
// game with ES's details and marquee, the screensaver's game, the running game, and hostile
// text from argv and scrapers.
func goldenSelections() []Selected {
	return []Selected{
		{},
		{System: "snes", SystemName: "Super Nintendo Entertainment System", Source: "es", At: goldenNow},
		{System: "nes", SystemName: "Nintendo Entertainment System", Game: "Super Mario Bros. (World)",
			ROM: "/userdata/roms/nes/Super Mario Bros. (World).nes", GameID: "0c598aff052e6240ed442843b7d22ba9",
			Details: GameDetails{Genre: "Platform", Players: "1-2", Developer: "Nintendo R&D4", Year: 1985},
			Image:   "/userdata/roms/nes/images/Super Mario Bros. (World)-marquee.png", Source: "es", At: goldenNow},
		{System: "mame", Game: "Street Fighter II' - Champion Edition", ROM: "/userdata/roms/mame/sf2ce.zip",
			GameID: "a1b2", Source: "screensaver", At: goldenNow},
		{System: "nes", SystemName: "Nintendo Entertainment System", ROM: "/userdata/roms/nes/Tetris (USA).nes",
			GameID: "ff00", Source: "playing", At: goldenNow},
		{System: "snes\u200b", Game: "\u202eevil\x1b[31m\tname " + strings.Repeat("long ", 80), ROM: "/userdata/roms/snes/a\xffb.sfc",
			GameID: "../../x", Details: GameDetails{Genre: "Action\u202e" + strings.Repeat("genre ", 40), Players: "1\n2", Year: 42},
			Image: "/userdata/roms/snes/images/\x1b]0;x.png", Source: "es", At: goldenNow},
	}
}

// selectedStates is every state of the selection feed's shapes, and a marquee.
func selectedStates(s Settings) []Message {
	var msgs []Message
	for _, sel := range goldenSelections() {
		msgs = append(msgs, SelectedStates(s, sel, goldenNow)...)
	}
	return append(msgs, SelectedMarqueeState(s, tinyJPEG(), goldenNow)...)
}

func TestGoldenSelectedStates(t *testing.T) {
	checkGolden(t, "states_selected", render(selectedStates(daemonSettings())))
}

// TestSelectedOnlyTheDaemon: a hook publishes nothing of the feed (it never has a selection).
func TestSelectedOnlyTheDaemon(t *testing.T) {
	if msgs := selectedStates(goldenSettings()); len(msgs) != 0 {
		t.Errorf("a hook's settings publish %d selection messages, want none", len(msgs))
	}
}

// TestSelectedShapes: retained states never empty, selected_game None for a system, the
// attributes and the JSON within HA's bounds.
func TestSelectedShapes(t *testing.T) {
	s := daemonSettings()
	for i, sel := range goldenSelections() {
		msgs := SelectedStates(s, sel, goldenNow)
		if len(msgs) != 5 {
			t.Fatalf("selection %d: %d messages, want 5", i, len(msgs))
		}
		for _, m := range msgs {
			if !m.Retain || len(m.Payload) == 0 || m.Kind != KindState {
				t.Errorf("selection %d: %s retain %v kind %v payload %q", i, m.Topic, m.Retain, m.Kind, m.Payload)
			}
			if len([]rune(string(m.Payload))) > MaxStateRunes && !strings.HasSuffix(m.Topic, "/attributes") && !strings.HasSuffix(m.Topic, "/selected") {
				t.Errorf("selection %d: state %s over %d characters", i, m.Topic, MaxStateRunes)
			}
		}
		game, system := string(msgs[0].Payload), string(msgs[2].Payload)
		if sel.ROM == "" && game != NoneState {
			t.Errorf("selection %d (no game): selected_game = %q, want %q", i, game, NoneState)
		}
		if sel.ROM != "" && game == NoneState {
			t.Errorf("selection %d: selected_game = None", i)
		}
		if sel.System == "" && system != NoneState {
			t.Errorf("selection %d (nothing): selected_system = %q", i, system)
		}
		if got := msgs[4].Topic; got != s.StateTopic(SelectedTopic) {
			t.Errorf("JSON topic = %q, want %q", got, s.StateTopic(SelectedTopic))
		}
	}
}

// TestParseSelected: what the daemon publishes on batocera/<id>/selected reads back as the
// selection (cleaned), and anything else as nothing.
func TestParseSelected(t *testing.T) {
	s := daemonSettings()
	for _, sel := range goldenSelections()[1:5] {
		msgs := SelectedStates(s, sel, goldenNow)
		got, ok := ParseSelected(msgs[4].Payload)
		if !ok || got.System != sel.System || got.ROM != sel.ROM || got.Source != sel.Source || got.GameID != sel.GameID ||
			!got.At.Equal(goldenNow) || got.Details.Year != sel.Details.Year || got.Image != sel.Image {
			t.Errorf("ParseSelected(%s) = %+v, %v", msgs[4].Payload, got, ok)
		}
		if sel.ROM != "" && got.Game == "" {
			t.Errorf("ParseSelected(%s): no game name", msgs[4].Payload)
		}
	}
	for _, bad := range []string{"", "{}", "None", "[1]", `{"source":"es"}`} {
		if got, ok := ParseSelected([]byte(bad)); ok {
			t.Errorf("ParseSelected(%q) = %+v, want nothing", bad, got)
		}
	}
	var j map[string]any
	if err := json.Unmarshal(SelectedStates(s, Selected{}, goldenNow)[4].Payload, &j); err != nil || len(j) != 0 {
		t.Errorf("nothing selected is %v (%v), want {}", j, err)
	}
}
