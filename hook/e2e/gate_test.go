package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestGameSelectedGate: ES fires game-selected on every cursor move, so
// scrolling a game list must never start the binary; the game-selected
// wrapper lets it through only while the screensaver flag is there: set by
// a screensaver that shows games, still there for the screensaver's own
// game-selected racing screensaver-stop, gone a moment after the stop, and
// never set by a suspend screensaver (which fires no stop).
func TestGameSelectedGate(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 60, LogLevel: "debug"}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		flag := filepath.Join(c.root, "var/run/cabinet/screensaver")
		sel := esevents.GameSelectedArgs("nes", smbPath, smbName)
		c.fire("start")

		steps := []struct {
			name   string
			before func()
			runs   bool // whether game-selected reaches the binary
		}{
			{name: "scrolling a game list", runs: false},
			{name: "random video screensaver", before: func() { c.fire("screensaver-start", "random video") }, runs: true},
			{name: "racing screensaver-stop", before: func() { c.firer.Fire("screensaver-stop") }, runs: true},
			{name: "a moment after the stop", before: func() {
				c.waitScripts()
				cabinettest.Await(t, "the flag to go", nil, func() (bool, string) {
					_, err := os.Stat(flag)
					return os.IsNotExist(err), "flag still there"
				})
			}, runs: false},
			{name: "suspend screensaver", before: func() { c.fire("screensaver-start", "suspend") }, runs: false},
		}
		for _, s := range steps {
			if s.before != nil {
				s.before()
			}
			n := c.binaryRuns("game-selected")
			for i := 0; i < 5; i++ {
				c.firer.Fire("game-selected", sel...)
			}
			c.waitScripts()
			got := c.binaryRuns("game-selected") - n
			if s.runs && got != 5 || !s.runs && got != 0 {
				t.Errorf("%s: 5 game-selected started the binary %d times, want %v", s.name, got, map[bool]int{true: 5, false: 0}[s.runs])
			}
		}
	})
}

// binaryRuns counts the hook runs of event in cabinet.log (debug level:
// every run ends with "hook done" or is refused with "event ignored").
func (c *cabinet) binaryRuns(event string) int {
	n := 0
	for _, l := range c.logLines() {
		if strings.Contains(l.raw, `"event":"`+event+`"`) && l.Message == "hook done" {
			n++
		}
	}
	return n
}
