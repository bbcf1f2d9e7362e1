package main

import (
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestSimulateSystemEntities runs `cabinet simulate --write-config DIR` and
// `cabinet serve` with DIR's config and a broker: the simulated cabinet has
// Batocera's own tools (batocera-audio, the update check, a game pad), so
// serve announces the volume, mute, controller and OS update entities with
// their states, and a volume set from Home Assistant reaches batocera-audio.
func TestSimulateSystemEntities(t *testing.T) {
	broker := cabinettest.StartBroker(t, cabinettest.Embedded, cabinettest.BrokerOptions{})
	obs := cabinettest.Observe(t, broker, false)
	env, simLog, stopSim := startSimulate(t, cabinetBinary(t))
	defer stopSim()
	if !strings.Contains(simLog.String(), "batocera-audio (volume)") {
		t.Errorf("simulate does not say where its system tools are:\n%s", simLog)
	}

	_, _, _, stop := startServe(t, append(env, "CABINET_MQTT_BROKER="+broker.URL(), "CABINET_ID=sim"))
	defer stop()
	s := haentities.Settings{ID: "sim"}
	for _, c := range []struct{ component, entity string }{
		{haentities.ComponentNumber, haentities.Volume},
		{haentities.ComponentSwitch, haentities.Mute},
		{haentities.ComponentSensor, haentities.Controllers},
		{haentities.ComponentEvent, haentities.Controller},
		{haentities.ComponentUpdate, haentities.OSUpdate},
	} {
		obs.AwaitMsg(0, s.ConfigTopic(c.component, c.entity), "")
	}
	obs.AwaitLatest(s.StateTopic(haentities.Volume), "70")
	obs.AwaitLatest(s.StateTopic(haentities.Mute), haentities.OffState)
	obs.AwaitLatest(s.StateTopic(haentities.Controllers), "1")
	if up := obs.AwaitMsg(0, s.StateTopic(haentities.OSUpdate), ""); !strings.Contains(up.Payload, `"installed_version":"42`) {
		t.Errorf("OS update state %s, want Batocera 42 installed", up.Payload)
	}

	from := obs.Mark()
	if err := broker.Embedded().Publish(s.CommandTopic(haentities.Volume), []byte("40"), false); err != nil {
		t.Fatal(err)
	}
	obs.AwaitMsg(from, s.StateTopic(haentities.Volume), "40")
}
