package e2e

import (
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// scenario is one thing a cabinet lives through, checked on its own
// cabinet by the test named after it, and replayed back to back on one
// cabinet by TestCaptureValidates.
type scenario struct {
	name string
	opts cabinetOptions
	run  func(c *cabinet)
}

// runScenarios runs each scenario on a fresh cabinet and broker, for both
// brokers.
func runScenarios(t *testing.T, scs []scenario) {
	t.Parallel() // each scenario has its own broker and cabinet
	for _, sc := range scs {
		t.Run(sc.name, func(t *testing.T) {
			cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
				b := startBroker(t, kind, cabinettest.BrokerOptions{})
				c := newCabinet(t, b, sc.opts)
				c.begin(sc.opts)
				sc.run(c)
			})
		})
	}
}

// allScenarios are scenarios 1 to 6 of the issue: what the discovery
// validator checks.
func allScenarios() []scenario {
	var out []scenario
	out = append(out, loggedSessionScenarios()...)
	out = append(out, shortSessionScenario(), screensaverLaunchScenario(), sleepWakeScenario())
	out = append(out, quitScenarios()...)
	return out
}

// TestCaptureValidates plays scenarios 1–6 back to back on one cabinet
// and checks that everything published, captured with retain flags,
// passes validate_discovery.py --strict --format rtp (embedded broker: its
// own record; Mosquitto: mosquitto_sub -V 5 --retain-as-published).
func TestCaptureValidates(t *testing.T) {
	cabinettest.Long(t, "scenarios 1–6 back to back, about 25 s (the validator also checks the tracker's capture in hook/tracker)")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		scs := allScenarios()
		c := newCabinet(t, b, scs[0].opts)
		for _, sc := range scs {
			t.Logf("scenario %s", sc.name)
			c.begin(sc.opts)
			sc.run(c)
		}
		validateCapture(t, b)
	})
}
