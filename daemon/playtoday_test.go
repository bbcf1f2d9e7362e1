package daemon

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestPlayTimeToday: 0 before any play; a running game counts once it is
// long enough to be logged and moves on every half minute; its end keeps
// the figure (no drop HA would read as a reset); the week's top games name
// it. The capture passes the strict validator.
func TestPlayTimeToday(t *testing.T) {
	r := newRig(t, nil, nil)
	topic := r.settings.StateTopic(haentities.PlayTimeToday)
	r.retained(topic, func(v string) bool { return v == "0" })
	hook := func(kind tracker.Kind, path, name string) {
		t.Helper()
		ev := r.stamped(kind)
		ev.Path, ev.Name, ev.System = path, name, "nes"
		r.deliver(ev)
	}
	g := r.cab.Library.Games("nes")[0]
	hook(tracker.KindGameStart, g.Path, g.Name)
	r.retained(r.settings.StateTopic(haentities.NowPlaying), func(v string) bool { return v != haentities.IdleState })
	// Minutes of play, in the loop's half-minute steps, until the running
	// game shows (a step taken while the loop is busy, before it re-arms
	// its timer, moves nothing: under load that takes more steps). Under
	// the minimum session (60 s) nothing counts yet, at whatever step the
	// loop has reached.
	running := ""
	played := time.Duration(0)
	cabinettest.Await(t, "the running game counted", r.broker.Changed, func() (bool, string) {
		v, _ := r.broker.Retained(topic)
		if played < time.Minute && string(v) != "0" {
			t.Errorf("a %v game counts %s s already", played, v)
		}
		if atoi(string(v)) >= 150 {
			running = string(v)
			return true, ""
		}
		r.clock.Advance(30 * time.Second)
		played += 30 * time.Second
		return false, "today: " + string(v)
	})
	hook(tracker.KindGameEnd, "", "")
	r.retained(r.settings.StateTopic(haentities.NowPlaying), func(v string) bool { return v == haentities.IdleState })
	// Past the reorder window (the flush timer is armed once the end is
	// applied): the session is logged.
	cabinettest.Await(t, "the session logged", r.broker.Changed, func() bool {
		if v, _ := r.broker.Retained(r.settings.StateTopic(haentities.LastSession)); string(v) != haentities.NoneState && len(v) > 0 {
			return true
		}
		r.clock.Advance(time.Second)
		return false
	})
	// The logged session is the week's one game, and today's figure is
	// its length: never below what the running game showed.
	var top haentities.TopGame
	attrs := r.retained(r.settings.AttributesTopic(haentities.PlayTimeToday), func(v string) bool {
		var x struct {
			TopGames []haentities.TopGame `json:"top_games"`
		}
		if json.Unmarshal([]byte(v), &x) != nil || len(x.TopGames) != 1 {
			return false
		}
		top = x.TopGames[0]
		return true
	})
	final := r.retained(topic, func(v string) bool { return int64(atoi(v)) == top.Seconds })
	if a, b := atoi(running), atoi(final); b < a {
		t.Errorf("the figure went back from %d to %d at the game's end", a, b)
	}
	var x struct {
		Day      string `json:"day"`
		ClockSet bool   `json:"clock_set"`
	}
	if json.Unmarshal([]byte(attrs), &x); x.Day != r.clock.Now().Local().Format(time.DateOnly) || !x.ClockSet {
		t.Errorf("attributes %s", attrs)
	}
	validate(t, r.capture())
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
