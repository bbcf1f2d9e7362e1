package daemon

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakeinput"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// Two children's pads (Bluetooth addresses, as the kernel's uniq gives them).
const (
	alicePad = "a0:ab:51:00:00:0a"
	bobPad   = "a0:ab:51:00:00:0b"
)

// TestHouseholdProfiles plays an afternoon of two children on the simulated cabinet: Alice has
// 20 minutes, Bob the cabinet's 60. The player follows the pad picked up when it is the only
// bound one connected (two at once change nothing), and Home Assistant's select; a game keeps
// the player it was launched by — Bob chosen while Alice plays does not stop her limit, her
// game ends at her 20 minutes and the event says hers — and Bob then has his own whole hour.
// Everything published passes the strict validator.
func TestHouseholdProfiles(t *testing.T) {
	var in *fakeinput.Input
	r := householdRigWith(t, func(r *rig) {
		var err error
		if in, err = fakeinput.New(r.cab.Path("/")); err != nil {
			t.Fatal(err)
		}
		if err := in.Connect("Wireless Controller", "a0:ab:51:00:00:01", 80); err != nil { // nobody's
			t.Fatal(err)
		}
		r.mu.Lock()
		r.cfg.System = System{Proc: "/proc", Sys: in.Sys(), InputDevices: in.InputDevices()}
		r.mu.Unlock()
	}, "enabled", "1", "minutes.daily", "60", "warn_at", "", "profiles", "alice,bob",
		"profile.alice.minutes.daily", "20", "profile.alice.pad", alicePad, "profile.bob.pad", bobPad)
	s := r.d.config().Rules.Settings
	player, attrs := s.StateTopic(haentities.Player), s.AttributesTopic(haentities.TimeLeftToday)
	is := func(want string) func(string) bool { return func(v string) bool { return v == want } }
	r.retained(s.ConfigTopic(haentities.ComponentSelect, haentities.Player), func(v string) bool {
		var cfg struct {
			Options []string `json:"options"`
		}
		return json.Unmarshal([]byte(v), &cfg) == nil && fmt.Sprint(cfg.Options) == "[— alice bob]"
	})
	r.retained(player, is(haentities.PlayerNone))

	pads := func(connect, disconnect string) {
		t.Helper()
		if connect != "" {
			if err := in.Connect("Pad of "+connect, connect, 50); err != nil {
				t.Fatal(err)
			}
		}
		if disconnect != "" {
			if err := in.Disconnect(disconnect); err != nil {
				t.Fatal(err)
			}
		}
		r.clock.Advance(sensors.PadsPoll)
	}
	pads(alicePad, "")
	r.retained(player, is("alice"))
	profile := func(name string, left int) func(string) bool {
		return func(v string) bool {
			var a struct {
				Profile *string `json:"profile"`
				Limit   *int    `json:"limit"`
			}
			return json.Unmarshal([]byte(v), &a) == nil && a.Profile != nil && *a.Profile == name && a.Limit != nil && *a.Limit == left
		}
	}
	r.retained(attrs, profile("alice", 20))
	// Bob's pad too: two bound pads choose nobody new.
	pads(bobPad, "")
	r.retained(s.StateTopic(haentities.Controllers), is("3"))
	r.retained(player, is("alice"))
	// Alice's goes away: Bob's is the only one.
	pads("", alicePad)
	r.retained(player, is("bob"))
	r.retained(attrs, profile("bob", 60))
	// A parent picks Alice in Home Assistant, and she plays.
	r.press(haentities.Player, "alice")
	r.retained(player, is("alice"))
	name := r.play(0)
	// Counted as hers: her 20 minutes shown over the game as it starts.
	cabinettest.Await(t, "alice's time over the game", nil, raShown(r, "20 minutes of play left today."))
	// Bob chosen mid-game: from the next game; Alice's game goes on under her rules.
	r.press(haentities.Player, "bob")
	r.retained(player, is("bob"))
	state := s.StateTopic(haentities.LimitState)
	r.until("alice's limit", func() (bool, string) {
		v, _ := r.broker.Retained(state)
		return string(v) == "time_up", string(v)
	})
	r.ended()
	cabinettest.Await(t, "alice's reached event", r.broker.Changed, func() (bool, string) {
		ev := r.limitEvents("reached")
		return len(ev) == 1 && ev[0]["game"] == name && ev[0]["profile"] == "alice", fmt.Sprint(ev)
	})
	// Her session is logged as hers.
	r.clock.Advance(time.Minute) // past the reorder window: the session is final
	cabinettest.Await(t, "alice's session_end", r.broker.Changed, func() (bool, string) {
		for _, m := range r.broker.Messages() {
			var e struct {
				Type    string `json:"event_type"`
				Profile string `json:"profile"`
			}
			if m.Topic == s.StateTopic(haentities.GameSession) && json.Unmarshal(m.Payload, &e) == nil && e.Type == haentities.EventSessionEnd {
				return e.Profile == "alice", string(m.Payload)
			}
		}
		return false, "no session_end"
	})
	// Now Bob's own hour, none of it used.
	r.retained(attrs, profile("bob", 60))
	r.retained(s.StateTopic(haentities.TimeLeftToday), is("60"))
	validate(t, r.capture())
}
