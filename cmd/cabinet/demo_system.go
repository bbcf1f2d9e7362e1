//go:build !release

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// demoHousehold is the evening's Home Assistant side: the household turns
// the volume down and mutes it from Home Assistant, a second pad connects
// and goes, and a restart of EmulationStation from its button (two
// presses: the first only asks, on screen) moves the power state.
func demoHousehold(b *mqttbroker.Broker, settings haentities.Settings, scale float64) []simulator.Step {
	d := func(s float64) time.Duration { return time.Duration(s / scale * float64(time.Second)) }
	command := func(entity, payload string) func(context.Context, *simulator.Cabinet) error {
		return func(context.Context, *simulator.Cabinet) error {
			return b.Publish(settings.CommandTopic(entity), []byte(payload), false)
		}
	}
	// The pads are read every 5 s: a step about them waits for that.
	pads := max(d(4), 6*time.Second)
	return []simulator.Step{
		{Say: `Home Assistant asks to play "sonic 2 on genesis" (text.batocera_play: a search box, Assist or an NFC tag)`,
			Do: command(haentities.Play, "sonic 2 on genesis"), Wait: d(8)},
		{Say: "and quits it (button.batocera_quit_game)", Do: command(haentities.QuitGame, haentities.PayloadPress), Wait: d(3)},
		{Say: "Home Assistant sets the volume to 40 % (number.batocera_volume)", Do: command(haentities.Volume, "40"), Wait: d(2)},
		{Say: "Home Assistant mutes the cabinet (switch.batocera_mute)", Do: command(haentities.Mute, haentities.OnState), Wait: d(2)},
		{Say: "and unmutes it", Do: command(haentities.Mute, haentities.OffState), Wait: d(2)},
		{Say: "a second controller connects (35 % battery)", Do: func(_ context.Context, c *simulator.Cabinet) error {
			return c.Input.Connect("Pro Controller", "a0:ab:51:00:00:02", 35)
		}, Wait: pads},
		{Say: "it goes away again", Do: func(_ context.Context, c *simulator.Cabinet) error {
			return c.Input.Disconnect("a0:ab:51:00:00:02")
		}, Wait: pads},
		{Say: "Home Assistant's Restart EmulationStation button, pressed once: the cabinet asks for a second press",
			Do: command(haentities.RestartES, haentities.PayloadPress), Wait: d(2)},
		{Say: "pressed again within 10 s: EmulationStation quits as its own menu would", Do: command(haentities.RestartES, haentities.PayloadPress), Wait: d(3)},
		{Say: "Batocera starts EmulationStation again", Do: func(_ context.Context, c *simulator.Cabinet) error {
			c.ES.Start()
			return nil
		}, Wait: d(2)},
	}
}

// demoSystemNote says where the fake system tools of the demo and of
// `cabinet simulate` are (simulator.Options.System).
func demoSystemNote(cab *simulator.Cabinet) string {
	return fmt.Sprintf("%s (volume), %s (update check), %s (pads)",
		cab.Path("/usr/bin/batocera-audio"), cab.Path("/usr/bin/batocera-upgrade"), cab.Path("/proc/bus/input/devices"))
}
