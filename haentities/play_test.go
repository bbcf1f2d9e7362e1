package haentities

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// playOutcomes are one request of each outcome, one of them hostile.
func playOutcomes() []PlayOutcome {
	return []PlayOutcome{
		{Query: "sonic 2 on megadrive", Outcome: PlayLaunched, Game: "Sonic the Hedgehog 2", System: "megadrive", At: goldenNow},
		{Query: "mario", Outcome: PlayAmbiguous, Reason: "2 games match", At: goldenNow,
			Candidates: []PlayCandidate{{Game: "Super Mario Bros.", System: "nes"}, {Game: "Super Mario World", System: "snes"}}},
		{Query: "zzz", Outcome: PlayNotFound, Reason: "No game matches.", At: goldenNow},
		{Query: "switch to tetris\x1b[31m\u202e", Outcome: PlayRefused, Game: "Tetris", System: "gb",
			Reason: "Time is up for today.", At: goldenNow},
	}
}

func playStates(s Settings) []Message {
	msgs := FavoriteState(s, goldenNow)
	for _, o := range playOutcomes() {
		msgs = append(msgs, PlayStates(s, o, goldenNow)...)
		msgs = append(msgs, PlayRequestEvent(s, o, goldenNow)...)
	}
	return msgs
}

func TestGoldenPlayStates(t *testing.T) {
	s := daemonSettings()
	s.Favorites = FavoriteOptions([]string{FavoriteOption("Super Mario World", "Super Nintendo"), FavoriteOption("Tetris", "Game Boy")})
	msgs := playStates(s)
	for _, m := range Discovery(s, goldenNow) {
		if strings.Contains(m.Topic, "/favorite/") || strings.Contains(m.Topic, "/play/") || strings.Contains(m.Topic, "/play_request/") {
			msgs = append(msgs, m)
		}
	}
	checkGolden(t, "states_play", render(msgs))
}

// TestPlayOnlyWithControls: without cabinet.ha.controls nothing of launching by name is
// announced or published.
func TestPlayOnlyWithControls(t *testing.T) {
	s := daemonSettings()
	s.Controls = false
	if msgs := playStates(s); len(msgs) != 0 {
		t.Errorf("%d messages without controls, want none", len(msgs))
	}
	for _, m := range Discovery(s, goldenNow) {
		if strings.Contains(m.Topic, "/text/") || strings.Contains(m.Topic, "/select/") && !strings.Contains(m.Topic, "/ui_mode/") ||
			strings.Contains(m.Topic, "/play_request/") {
			t.Errorf("announced without controls: %s", m.Topic)
		}
	}
}

// TestPlayBounds: a 1 MB request with controls, bidi and JSON in it, a name of 1,000 runes and
// 500 favourites stay within HA's bounds.
func TestPlayBounds(t *testing.T) {
	s := daemonSettings()
	huge := strings.Repeat(`{"a":"\u202e"}`+"\x00é", 1<<16)
	var favs []string
	for i := range 500 {
		favs = append(favs, FavoriteOption(strings.Repeat("Très long nom ", 10)+string(rune('A'+i%26)), "Nintendo Entertainment System"))
	}
	s.Favorites = FavoriteOptions(favs)
	o := PlayOutcome{Query: huge, Outcome: PlayAmbiguous, Reason: huge, At: goldenNow}
	for range 20 {
		o.Candidates = append(o.Candidates, PlayCandidate{Game: huge, System: "nes"})
	}
	msgs := append(PlayStates(s, o, goldenNow), PlayRequestEvent(s, o, goldenNow)...)
	for _, m := range msgs {
		if !utf8.Valid(m.Payload) || strings.ContainsAny(string(m.Payload), "\x00\u202e") {
			t.Errorf("%s: control or bidi characters left", m.Topic)
		}
		if strings.HasSuffix(m.Topic, "/play") && utf8.RuneCount(m.Payload) > MaxPlayRunes {
			t.Errorf("text state of %d runes", utf8.RuneCount(m.Payload))
		}
		if len(m.Payload) > 16<<10 {
			t.Errorf("%s: %d bytes", m.Topic, len(m.Payload))
		}
	}
	var ev struct{ Candidates []PlayCandidate }
	json.Unmarshal(msgs[len(msgs)-1].Payload, &ev)
	if len(ev.Candidates) != MaxPlayCandidates {
		t.Errorf("%d candidates, want %d", len(ev.Candidates), MaxPlayCandidates)
	}
	for _, m := range Discovery(s, goldenNow) {
		if !strings.Contains(m.Topic, "/favorite/config") {
			continue
		}
		var cfg struct{ Options []string }
		json.Unmarshal(m.Payload, &cfg)
		if len(cfg.Options) != MaxFavorites || cfg.Options[0] != FavoriteNone {
			t.Errorf("%d options, first %q; want %d, %q first", len(cfg.Options), cfg.Options[0], MaxFavorites, FavoriteNone)
		}
		for _, opt := range cfg.Options {
			if utf8.RuneCountInString(opt) > maxFavoriteRunes {
				t.Errorf("option %q over %d runes", opt, maxFavoriteRunes)
			}
		}
	}
}
