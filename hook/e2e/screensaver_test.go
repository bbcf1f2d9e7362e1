package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestScreensaverLaunch: with ES's screensaver controls, START on a random
// video screensaver launches the game it shows: ES fires game-selected from
// the screensaver, screensaver-stop, then game-start milliseconds later
// (all async, racing each other). Such a launch is shown live but never
// logged, even though it is long enough to be.
func TestScreensaverLaunch(t *testing.T) {
	cabinettest.Long(t, "a launch from the screensaver plus the 3 s reorder window")
	runScenarios(t, []scenario{screensaverLaunchScenario()})
}

// TestSleepWakeRepeated: ES's idle sleep during a dim screensaver, which may
// repeat without a wake: the cabinet stays online throughout and its
// sleep/wake events are published.
func TestSleepWakeRepeated(t *testing.T) { runScenarios(t, []scenario{sleepWakeScenario()}) }

func screensaverLaunchScenario() scenario {
	return scenario{name: "screensaver launch", opts: cabinetOptions{MinSessionSeconds: 0}, run: func(c *cabinet) {
		t := c.t
		c.fire("start")
		c.waitState("activity", "menu")
		c.waitQuiet()
		before := c.broker.Retained(t)

		c.fire("screensaver-start", "random video")
		c.waitState("screensaver", "ON")
		c.waitState("activity", "screensaver")
		// The screensaver shows a game: its game-selected passes the
		// wrapper because the screensaver flag is there.
		sel := esevents.GameSelectedArgs("nes", smbPath, smbName)
		c.fire("game-selected", sel...)

		// START: ES fires these without waiting for any of them.
		c.firer.Fire("game-selected", sel...)
		c.firer.Fire("screensaver-stop")
		c.firer.Fire("game-start", esevents.GameStartArgs(smbPath, smbName)...)
		c.waitScripts()
		c.configgen(esevents.GameStart, "nes", "libretro", "fceumm", smbPath)
		c.waitState("activity", "playing")
		c.waitState("now_playing", smbName)
		c.waitState("screensaver", "OFF")

		play(1200 * time.Millisecond)
		c.configgen(esevents.GameStop, "nes", "libretro", "fceumm", smbPath)
		c.fire("game-end")
		c.waitState("now_playing", "Idle")
		c.flushFinal()

		c.checkStates(map[string]string{
			"now_playing": "Idle", "playing": "OFF", "activity": "menu", "screensaver": "OFF", "status": "online",
			"last_session": before[c.topic("last_session")], "play_time": before[c.topic("play_time")],
		})
		if evs := c.sessionEvents(); len(evs) != 0 {
			t.Errorf("a screensaver launch published session events %v, want none", types(evs))
		}
	}}
}

func sleepWakeScenario() scenario {
	return scenario{name: "sleep wake repeated", opts: cabinetOptions{MinSessionSeconds: 60}, run: func(c *cabinet) {
		t := c.t
		c.fire("start")
		c.waitState("status", "online")

		c.fire("screensaver-start", "dim")
		for _, ev := range []string{"sleep", "sleep", "wake", "sleep", "wake"} {
			if ev == "wake" {
				// Input: ES stops the screensaver and wakes, together.
				c.firer.Fire("screensaver-stop")
			}
			c.fire(ev)
		}
		c.waitQuiet()
		c.waitDelivered("sleep and wake events", func() (bool, string) {
			evs := c.cabinetEvents()
			return len(ofType(evs, "sleep")) > 0 && len(ofType(evs, "wake")) > 0, fmt.Sprint(types(evs))
		})

		c.checkStates(map[string]string{"status": "online", "activity": "menu", "screensaver": "OFF"})
		for _, p := range c.scenarioCapture() {
			if p.Topic == c.topic("status") && p.Payload != "online" {
				t.Errorf("availability went %q during sleep/wake", p.Payload)
			}
			if p.Topic == c.topic("activity") && p.Payload == "off" {
				t.Errorf("activity went off during sleep/wake")
			}
		}
		for _, e := range c.cabinetEvents() {
			switch e.EventType {
			case "start", "sleep", "wake":
			default:
				t.Errorf("cabinet event %s during sleep/wake: %s", e.EventType, e.raw)
			}
		}
		t.Logf("cabinet events for start, sleep, sleep, wake, sleep, wake within seconds: %v", types(c.cabinetEvents()))
	}}
}
