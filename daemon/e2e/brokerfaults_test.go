package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// tracked are the play-tracking states whose values the broker faults
// must not change (diagnostics, such as the reconnect count, may).
var tracked = []string{"activity", "screensaver", "playing", "now_playing"}

// TestBrokerRestart: the broker restarts on the same port (without
// persistence every retained message is gone). The daemon reconnects and
// re-announces: availability `online`, every discovery config and every
// state are retained again, as before the restart.
func TestBrokerRestart(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind))
		r.startOnline()
		r.eveningStates()
		before := r.cabinetRetained()

		r.broker.Restart(t)
		r.obs.Reconnect()
		r.waitRetainedLike(before, 30*time.Second)
		st := r.waitStatus("connected again", func(s daemon.Status) bool { return s.MQTTConnected })
		if st.Reconnects < 1 {
			t.Errorf("status reconnects = %d after a broker restart, want >= 1", st.Reconnects)
		}
		if n := r.d.log.Count("MQTT connected: announcing"); n < 2 {
			t.Errorf("%d announces in the log, want one per connection (2)", n)
		}
	}, cabinettest.Embedded, cabinettest.Mosquitto, cabinettest.MosquittoPersist)
}

// TestHABirth: Home Assistant restarts (its birth message `online` on
// homeassistant/status). After its short random delay (1–5 s) the daemon
// re-sends everything: here the broker has lost every retained message of
// the cabinet first, so only a re-send brings discovery, availability and
// the states back.
func TestHABirth(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind))
		r.startOnline()
		r.eveningStates()
		// Everything recorded has reached the broker (the diagnostics
		// recorded at connect may still be on their way), so the clearing
		// below races no delivery.
		r.waitStatus("outbox empty", func(s daemon.Status) bool { return s.MQTTConnected && s.OutboxDepth == 0 })
		before := r.cabinetRetained()

		r.broker.Clear(t, slices.Collect(maps.Keys(before)))
		if left := r.cabinetRetained(); len(left) != 0 {
			t.Fatalf("retained after clearing: %v", left)
		}
		from := r.obs.Mark()
		r.broker.Birth(t)
		r.waitRetainedLike(before, 20*time.Second)
		if n := r.d.log.Count("Home Assistant restarted: re-announcing"); n != 1 {
			t.Errorf("%d re-announce lines in the log after one birth, want 1", n)
		}
		// Nothing was sent twice in answer to one birth.
		seen := map[string]int{}
		for _, m := range r.obs.Since(from) {
			if m.Payload != "" { // not our clearing (the broker may record it after its PUBACK)
				seen[m.Topic]++
			}
		}
		for topic, n := range seen {
			if n > 1 && strings.HasSuffix(topic, "/config") {
				t.Errorf("discovery %s re-sent %d times after one birth", topic, n)
			}
		}
	})
}

// eveningStates plays a little through the simulated ES (its start, a dim
// screensaver and ES's sleep, fired at the installed hook scripts) and
// waits until the broker shows it.
func (r *rig) eveningStates() {
	r.t.Helper()
	from := r.obs.Mark()
	r.cab.ES.Start()
	r.waitScripts() // ES's start comes first: it resets the screensaver
	if err := r.cab.ES.StartScreensaver(fakees.ScreensaverDim); err != nil {
		r.t.Fatal(err)
	}
	r.waitScripts()
	r.obs.AwaitMsg(from, r.topic("screensaver"), "ON")
	r.obs.AwaitMsg(from, r.topic("activity"), "screensaver")
	// The pictures come from their own parts of the daemon, at any moment
	// after its start: the snapshot a test takes next must hold them.
	cabinettest.Await(r.t, "the pictures retained", r.obs.Changed, func() (bool, string) {
		ret := r.cabinetRetained()
		return ret[r.topic("artwork")] != "" && ret[r.topic("last_screenshot")] != "", "not yet"
	})
	// ES's start selects a system: the selection feed publishes it once it has settled (300 ms),
	// after everything above may already be on the broker.
	cabinettest.Await(r.t, "the system ES selected at its start", r.obs.Changed, func() (bool, string) {
		sys := r.cabinetRetained()[r.topic(haentities.SelectedSystem)]
		return sys != "" && sys != haentities.NoneState, sys
	})

}

// waitScripts waits until every event script ES fired has exited.
func (r *rig) waitScripts() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.cab.Events.Wait(ctx); err != nil {
		r.t.Fatalf("ES event scripts: %v", err)
	}
}

// cabinetRetained is the broker's retained view of this cabinet: its
// discovery configs and its state and availability topics.
func (r *rig) cabinetRetained() map[string]string {
	r.t.Helper()
	out := map[string]string{}
	for topic, payload := range r.obs.Retained() {
		if strings.HasPrefix(topic, "batocera/"+r.id+"/") || strings.Contains(topic, "/batocera_"+r.id+"/") {
			out[topic] = payload
		}
	}
	return out
}

// waitRetainedLike waits until the broker retains, for this cabinet, the
// same topics as want, with the same discovery configs, `online`, and the
// same play-tracking states.
func (r *rig) waitRetainedLike(want map[string]string, d time.Duration) {
	r.t.Helper()
	same := map[string]bool{r.status(): true}
	for _, e := range tracked {
		same[r.topic(e)] = true
	}
	if want[r.status()] != "online" {
		r.t.Fatalf("retained %s = %q before the fault, want online", r.status(), want[r.status()])
	}
	cabinettest.Await(r.t, "the cabinet's retained topics back", r.obs.Changed, func() (bool, string) {
		got := r.cabinetRetained()
		var diff []string
		for topic, w := range want {
			g, ok := got[topic]
			switch {
			case !ok:
				diff = append(diff, "missing "+topic)
			case (same[topic] || strings.HasSuffix(topic, "/config")) && g != w:
				diff = append(diff, fmt.Sprintf("%s = %.60q, want %.60q", topic, g, w))
			}
		}
		for topic := range got {
			if _, ok := want[topic]; !ok {
				diff = append(diff, "unexpected "+topic)
			}
		}
		slices.Sort(diff)
		return len(diff) == 0, fmt.Sprintf("%d of %d topics differ:\n%s", len(diff), len(want), lines(diff))
	})

}
