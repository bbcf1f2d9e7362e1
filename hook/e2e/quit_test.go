package e2e

import (
	"fmt"
	"testing"
	"time"
)

// TestQuit: ES runs the root generic script on quit and waits for it (with
// no timeout) before it exits, reboots or shuts down; the reboot/shutdown
// menu fires `quit reboot` then `reboot` (or shutdown). Each ends as exactly
// one cabinet event, with availability offline and activity off retained
// by the time the script returns: nothing after that point can be relied on.
func TestQuit(t *testing.T) { runScenarios(t, quitScenarios()) }

func quitScenarios() []scenario {
	cases := []struct {
		name   string
		args   []string
		follow string // the event ES fires right after, "" for none
		want   string
	}{
		{name: "quit", want: "quit"},
		{name: "reboot", args: []string{"reboot"}, follow: "reboot", want: "reboot"},
		{name: "shutdown", args: []string{"shutdown"}, follow: "shutdown", want: "shutdown"},
	}
	var out []scenario
	for _, tc := range cases {
		out = append(out, scenario{name: tc.name, opts: cabinetOptions{MinSessionSeconds: 60}, run: func(c *cabinet) {
			t := c.t
			c.fire("start")
			c.waitState("status", "online")
			c.waitQuiet()

			start := time.Now()
			c.firer.Fire("quit", tc.args...) // returns when the root script exits, as ES's system() does
			took := time.Since(start)
			t.Logf("quit %v: the root script held ES for %v (hook budget 1.5 s)", tc.args, took.Round(time.Millisecond))
			// The machine goes down now: the broker must already hold the
			// final states, without waiting for anything.
			c.checkStates(map[string]string{"status": "offline", "activity": "off", "playing": "OFF"})
			if tc.follow != "" {
				c.fire(tc.follow)
			}
			c.waitScripts()

			c.waitDelivered(tc.want+" cabinet event", func() (bool, string) {
				return len(ofType(c.cabinetEvents(), tc.want)) > 0, fmt.Sprint(types(c.cabinetEvents()))
			})
			c.waitQuiet()
			counts := map[string]int{}
			for _, e := range c.cabinetEvents() {
				counts[e.EventType]++
			}
			for _, down := range []string{"quit", "reboot", "shutdown"} {
				want := 0
				if down == tc.want {
					want = 1
				}
				if counts[down] != want {
					t.Errorf("%d %s cabinet events, want %d (one event per quit, a reboot is not also a quit): %v",
						counts[down], down, want, types(c.cabinetEvents()))
				}
			}
			c.checkStates(map[string]string{"status": "offline", "activity": "off"})
		}})
	}
	return out
}
