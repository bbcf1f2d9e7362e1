package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// playEvent is event.batocera_play_request's payload.
type playEvent struct {
	EventType  string                     `json:"event_type"`
	Query      string                     `json:"query"`
	Game       string                     `json:"game"`
	System     string                     `json:"system"`
	Reason     string                     `json:"reason"`
	Candidates []haentities.PlayCandidate `json:"candidates"`
}

// playEvents are the play_request events since from, in order.
func (r *rig) playEvents(from int) []playEvent {
	var out []playEvent
	for _, p := range r.states(from, haentities.PlayRequest) {
		var e playEvent
		if json.Unmarshal([]byte(p), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// haClient is Home Assistant's side of the broker: it publishes commands as HA does (QoS 1, not
// retained).
type haClient struct {
	r *rig
	c mqtt.Client
}

func (h haClient) set(entity, payload string) {
	h.r.t.Helper()
	tok := h.c.Publish(h.r.topic(entity)+"/set", 1, false, payload)
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		h.r.t.Fatalf("publish %s: %v", entity, tok.Error())
	}
}

// ask sets the play box and returns the request's event.
func (h haClient) ask(entity, request string) playEvent {
	h.r.t.Helper()
	from := h.r.obs.Mark()
	h.set(entity, request)
	var got []playEvent
	cabinettest.Await(h.r.t, "the answer to "+fmt.Sprintf("%.40q", request), h.r.obs.Changed, func() (bool, string) {
		got = h.r.playEvents(from)
		return len(got) > 0, "no play_request event yet"
	})
	return got[0]
}

// TestPlayByName (issue 30): Home Assistant launches games by name through the binary, on both
// brokers: names with a typo, accents, another word order and systems by alias launch the right
// game; a tie launches nothing and lists the games; a request while a game runs is refused,
// "switch to" quits it first; hostile text (1 MB, controls and bidi, JSON) launches nothing
// wrongly and the daemon goes on; the favourites select lists ES's favourites and launches one,
// staying on "—".
// Everything published passes the strict validator.
func TestPlayByName(t *testing.T) {
	cabinettest.Long(t, "a dozen requests to play through the binary, on both brokers")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind), "cabinet.ha.controls=1")
		// Ten launches in a row: the launch/quit budget (3, then one every 5 s) would make this
		// test wait; its refusal is TestPlayFromHA's (package daemon).
		r.extraEnv = []string{"CABINET_BENCH_NO_RATE_LIMITS=1"}
		var capture *subCapture
		if kind != cabinettest.Embedded {
			capture = startSubCapture(t, r.broker)
		}
		d := r.startOnline()
		d.waitLog("game names refreshed", 20*time.Second)
		r.obs.AwaitLatest(r.topic(haentities.Play), haentities.PlayNone)
		r.cab.ES.Start() // the cabinet's start event, for the capture
		r.waitScripts()
		ha := haClient{r, r.broker.Dial(t)}
		ctx := context.Background()
		running := func() string {
			g, ok := r.cab.ES.Running()
			if !ok {
				return ""
			}
			return g.Name + " (" + g.System + ")"
		}
		end := func() {
			t.Helper()
			if err := simulator.EndGame(ctx, r.cab); err != nil {
				t.Fatal(err)
			}
		}

		for _, c := range []struct{ request, game, system string }{
			{"the legend of zelda on nes", "The Legend of Zelda", "nes"},
			{"Chrono Trigher", "Chrono Trigger", "snes"},                           // a typo
			{"asterix super nintendo", "Astérix", "snes"},                          // an accent, a system's alias
			{"hedgehog sonic 2 genesis", "Sonic The Hedgehog 2", "megadrive"},      // word order, another alias
			{"\x07Street\u202e Fighter ii on arcade", "Street Fighter II", "mame"}, // controls and bidi
			{"play tetris on Nintendo Entertainment System", "Tetris", "nes"},      // "play", ES's full name
		} {
			ev := ha.ask(haentities.Play, c.request)
			if ev.EventType != haentities.PlayLaunched || ev.Game != c.game || running() != c.game+" ("+c.system+")" {
				t.Fatalf("%q: %+v, ES runs %q; want %s on %s", c.request, ev, running(), c.game, c.system)
			}
			if strings.ContainsAny(ev.Query, "\x07\u202e") {
				t.Errorf("the event's query %q keeps controls", ev.Query)
			}
			end()
		}

		if ev := ha.ask(haentities.Play, "tetris"); ev.EventType != haentities.PlayAmbiguous || len(ev.Candidates) != 2 || running() != "" {
			t.Errorf("a tie: %+v, ES runs %q", ev, running())
		}
		if ev := ha.ask(haentities.Play, "qwertyuiop asdf"); ev.EventType != haentities.PlayNotFound || running() != "" {
			t.Errorf("nothing matching: %+v", ev)
		}
		if ev := ha.ask(haentities.Play, `{"game":"zelda","system":"nes"}`); ev.EventType == haentities.PlayLaunched {
			t.Errorf("JSON launched %+v", ev)
		}
		// 1 MB: ignored (logged), and the next request is answered.
		ha.set(haentities.Play, strings.Repeat("é", 1<<19))
		ev := ha.ask(haentities.Play, "gunstar heroes")
		if ev.EventType != haentities.PlayLaunched || ev.Game != "Gunstar Heroes" {
			t.Fatalf("after 1 MB: %+v", ev)
		}
		if ev := ha.ask(haentities.Play, "chrono trigger"); ev.EventType != haentities.PlayRefused ||
			!strings.Contains(ev.Reason, "Gunstar Heroes is running") || running() != "Gunstar Heroes (megadrive)" {
			t.Errorf("while a game runs: %+v", ev)
		}
		if ev := ha.ask(haentities.Play, "switch to chrono trigger"); ev.EventType != haentities.PlayLaunched ||
			running() != "Chrono Trigger (snes)" {
			t.Errorf("switch to: %+v, ES runs %q", ev, running())
		}
		end()

		// The favourites: ES's, by name; choosing one launches it and the select says "—" again.
		var opts []string
		cabinettest.Await(t, "the favourites announced", r.obs.Changed, func() (bool, string) {
			for _, m := range r.obs.Since(0) {
				var cfg struct{ Options []string }
				if strings.HasSuffix(m.Topic, "/select/batocera_"+r.id+"/favorite/config") && json.Unmarshal([]byte(m.Payload), &cfg) == nil {
					opts = cfg.Options
				}
			}
			return len(opts) > 2 && opts[0] == haentities.FavoriteNone, fmt.Sprint(opts)
		})
		i := slices.IndexFunc(opts, func(o string) bool { return strings.HasPrefix(o, "Super Mario World (") })
		if i < 0 {
			t.Fatalf("favourites %q: want Super Mario World", opts)
		}
		if ev := ha.ask(haentities.Favorite, opts[i]); ev.EventType != haentities.PlayLaunched || running() != "Super Mario World (snes)" {
			t.Fatalf("favourite %q: %+v, ES runs %q", opts[i], ev, running())
		}
		// HA shows only what the cabinet publishes (optimistic false): the select stays on "—".
		r.obs.AwaitLatest(r.topic(haentities.Favorite), haentities.FavoriteNone)
		end()
		if capture != nil {
			cabinettest.ValidateCapture(t, "launching by name on "+string(kind), capture.stop(t))
		}
	})
}
