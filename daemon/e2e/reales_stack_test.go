package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/reales"
)

// TestRealStackCaptureValidates: the daemon binary and its wrappers with
// Batocera's real EmulationStation, the simulator's batocera-audio, update
// check and game pads, and Home Assistant's commands on the broker — a
// game, the volume and mute from Home Assistant, a pad coming, a clean
// stop — and everything published passes the strict discovery validator:
// no entity is announced that never gets a state.
func TestRealStackCaptureValidates(t *testing.T) {
	cabinettest.Long(t, "a real EmulationStation evening with the system entities")
	x := newRealRigWith(t, "inbox", reales.Options{}, simulator.Options{System: true}, "cabinet.ha.power=1", "cabinet.ha.controls=1")
	x.playGame(reales.SystemNES, reales.ROMSpaces, "Super Mario Bros. (World)", false)
	from := x.obs.Mark()
	s := haentities.Settings{ID: x.id}
	c := x.broker.Dial(t)
	defer c.Disconnect(0)
	send := func(entity, payload string) {
		t.Helper()
		if tok := c.Publish(s.CommandTopic(entity), 1, false, []byte(payload)); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish %s: %v", entity, tok.Error())
		}
	}
	send(haentities.Volume, "40")
	x.obs.AwaitMsg(from, x.topic(haentities.Volume), "40")
	send(haentities.Mute, haentities.OnState)
	x.obs.AwaitMsg(from, x.topic(haentities.Mute), haentities.OnState)
	if err := x.cab.Input.Connect("Pro Controller", "a0:ab:51:00:00:02", 35); err != nil {
		t.Fatal(err)
	}
	x.obs.AwaitMsg(from, x.topic(haentities.Controllers), "2")
	x.obs.AwaitMsg(from, x.topic(haentities.Controller), `{"event_type":"connected","name":"Pro Controller"}`)
	// A request to play that the real ES's lists do not hold: answered, nothing launched.
	send(haentities.Play, "zzyzx no such game")
	cabinettest.Await(t, "the request's answer", x.obs.Changed, func() bool {
		for _, m := range x.obs.Since(from) {
			if m.Topic == x.topic(haentities.PlayRequest) && strings.Contains(m.Payload, `"event_type":"not_found"`) {
				return true
			}
		}
		return false
	})
	x.d.term()
	x.obs.AwaitMsg(from, x.topic(haentities.PowerState), haentities.PowerStopped)
	cabinettest.ValidateCapture(t, "real stack", x.broker.Embedded().Capture())
}
