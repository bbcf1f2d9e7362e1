package daemon

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// playEvent is event.batocera_play_request's payload as the test reads it.
type playEvent struct {
	EventType  string                     `json:"event_type"`
	Query      string                     `json:"query"`
	Game       string                     `json:"game"`
	System     string                     `json:"system"`
	Reason     string                     `json:"reason"`
	Candidates []haentities.PlayCandidate `json:"candidates"`
}

func (r *rig) playEvents() []playEvent {
	var out []playEvent
	for _, m := range r.broker.Messages() {
		var e playEvent
		if m.Topic == r.settings.StateTopic(haentities.PlayRequest) && json.Unmarshal(m.Payload, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// awaitPlay waits for the n-th play_request event (1-based) and returns it.
func (r *rig) awaitPlay(n int) playEvent {
	r.t.Helper()
	var got []playEvent
	cabinettest.Await(r.t, fmt.Sprintf("play request event #%d", n), r.broker.Changed, func() (bool, string) {
		got = r.playEvents()
		return len(got) >= n, fmt.Sprintf("%d events", len(got))
	})
	return got[n-1]
}

// favoriteOptions are the select's options as last announced.
func (r *rig) favoriteOptions() []string {
	v, _ := r.broker.Retained(r.settings.ConfigTopic(haentities.ComponentSelect, haentities.Favorite))
	var cfg struct{ Options []string }
	json.Unmarshal(v, &cfg)
	return cfg.Options
}

// TestPlayFromHA drives launching by name the way Home Assistant does, with cabinet.ha.controls
// on: the text entity's requests (a launch, a tie, a refusal while a game runs, "switch to"), the
// favourites select (its options ES's favourites, launching one, back to "—", a favourite starred
// in ES announced after the next game), each with its event, state and attributes; a launch from
// Home Assistant opens the session as Home Assistant's.
func TestPlayFromHA(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Rules.Settings.Controls = true }, nil)
	s := r.settings
	r.retained(s.StateTopic(haentities.Favorite), func(v string) bool { return v == haentities.FavoriteNone })
	r.retained(s.StateTopic(haentities.Play), func(v string) bool { return v == haentities.PlayNone })
	cabinettest.Await(t, "the favourites announced", r.broker.Changed, func() (bool, string) {
		opts := r.favoriteOptions()
		return len(opts) > 2 && opts[0] == haentities.FavoriteNone && slices.ContainsFunc(opts, func(o string) bool {
			return strings.HasPrefix(o, "Super Mario World (")
		}), fmt.Sprint(opts)
	})

	r.press(haentities.Play, "sonic 2 on genesis")
	ev := r.awaitPlay(1)
	if ev.EventType != haentities.PlayLaunched || ev.Game != "Sonic The Hedgehog 2" || ev.Query != "sonic 2 on genesis" {
		t.Fatalf("event %+v", ev)
	}
	r.retained(s.StateTopic(haentities.Play), func(v string) bool { return v == "sonic 2 on genesis" })
	r.retained(s.AttributesTopic(haentities.Play), func(v string) bool { return strings.Contains(v, `"outcome":"launched"`) })
	if g, ok := r.cab.ES.Running(); !ok || g.Name != "Sonic The Hedgehog 2" {
		t.Fatalf("ES runs %+v", g)
	}
	r.waitApplied("the session open as Home Assistant's", func() bool {
		snap := r.d.eng.snapshot()
		return snap.Playing && snap.Current.Source == "ha"
	})

	r.press(haentities.Play, "tetris")
	if ev := r.awaitPlay(2); ev.EventType != haentities.PlayAmbiguous || len(ev.Candidates) != 2 {
		t.Errorf("a tie: %+v", ev)
	}
	r.press(haentities.Play, "chrono trigger")
	if ev := r.awaitPlay(3); ev.EventType != haentities.PlayRefused || !strings.Contains(ev.Reason, "Sonic The Hedgehog 2 is running") {
		t.Errorf("while a game runs: %+v", ev)
	}
	r.press(haentities.Play, "switch to chrono trigger")
	if ev := r.awaitPlay(4); ev.EventType != haentities.PlayLaunched || ev.Game != "Chrono Trigger" {
		t.Fatalf("switch to: %+v", ev)
	}
	if g, ok := r.cab.ES.Running(); !ok || g.Name != "Chrono Trigger" {
		t.Fatalf("ES runs %+v after the switch", g)
	}
	r.cab.ES.EndGame(0)
	r.ended()

	// A favourite: chosen, launched, the select back to "—". (The launch/quit rate limit, shared
	// with MCP clients, gives a token every 5 s: the three above spent the burst.)
	r.clock.Advance(30 * time.Second)
	opts := r.favoriteOptions()
	pick := opts[1]
	r.press(haentities.Favorite, pick)
	if ev := r.awaitPlay(5); ev.EventType != haentities.PlayLaunched {
		t.Fatalf("favourite %q: %+v", pick, ev)
	}
	r.retained(s.StateTopic(haentities.Favorite), func(v string) bool { return v == haentities.FavoriteNone })
	if _, ok := r.cab.ES.Running(); !ok {
		t.Fatal("the favourite is not running")
	}
	r.cab.ES.EndGame(0)
	r.ended()

	// Chrono Trigger starred in ES: announced once a game has ended (and at the latest in ten minutes).
	var chrono string
	for _, g := range r.cab.Library.Games("snes") {
		if g.Name == "Chrono Trigger" {
			chrono = g.ID
		}
	}
	if err := es.NewMetadataWriter(mustES(t, r)).SetMetadata(cabinettest.Context(t), "snes", chrono,
		map[string]string{"favorite": "true"}); err != nil {
		t.Fatal(err)
	}
	r.d.invalidateGames() // what a game's end does
	cabinettest.Await(t, "Chrono Trigger among the favourites", r.broker.Changed, func() (bool, string) {
		opts := r.favoriteOptions()
		return slices.ContainsFunc(opts, func(o string) bool { return strings.HasPrefix(o, "Chrono Trigger (") }), fmt.Sprint(opts)
	})
	// An option no longer listed says so.
	r.press(haentities.Favorite, "Gone Game (Nowhere)")
	if ev := r.awaitPlay(6); ev.EventType != haentities.PlayNotFound {
		t.Errorf("an unknown option: %+v", ev)
	}
	validate(t, r.capture())
}

// TestLaunchTimedFromConfirmation: a game launched through the tools is timed from the moment ES
// confirms the launch, whatever reports it afterwards: here no hook runs at all (as for a ROM
// whose name sh cannot parse) and the watcher's poll comes later on the clock, yet a 2.5 s game
// under a 2 s min_session_seconds is logged, as the tools' launch, for its whole time.
func TestLaunchTimedFromConfirmation(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Rules.Tracker.MinSession = 2 * time.Second }, nil)
	var mario string
	for _, g := range r.cab.Library.Games("nes") {
		if g.Name == "Mario_(USA)" {
			mario = g.ID
		}
	}
	res, err := r.d.mcpServer(false).Call(cabinettest.Context(t), "batocera_launch_game", map[string]any{"system": "nes", "game_id": mario})
	if err != nil || res.IsError {
		t.Fatalf("launch: %v %+v", err, res)
	}
	r.waitApplied("the launch counted from ES's confirmation", func() bool {
		snap := r.d.eng.snapshot()
		return snap.Playing && snap.Current.Source == "mcp"
	})
	r.clock.Advance(2500 * time.Millisecond)
	r.cab.ES.EndGame(0)
	r.ended()
	cabinettest.Await(t, "the session logged", r.broker.Changed, func() (bool, string) {
		for _, m := range r.broker.Messages() {
			var e struct {
				Type      string  `json:"event_type"`
				Game      string  `json:"game"`
				Source    string  `json:"source"`
				DurationS float64 `json:"duration_s"`
			}
			if m.Topic == r.settings.StateTopic(haentities.GameSession) && json.Unmarshal(m.Payload, &e) == nil && e.Type == haentities.EventSessionEnd {
				return e.Source == "mcp" && e.DurationS >= 2, fmt.Sprintf("%+v", e)
			}
		}
		// Past the reorder window, the session is final. Moved again at each look: the
		// engine may arm its timer for the end only after the end was seen applied (a
		// single move could come first and never fire it).
		r.clock.Advance(time.Minute)
		return false, "no session_end"
	})
}
