package e2e

import (
	"fmt"
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestPowerStateLifecycle follows sensor.power_state through the daemon
// binary's life, on both brokers: a shutdown ends "off" just before
// offline; a stop without one (an upgrade, batocera-services stop) ends
// "stopped", never "off"; a kill -9 leaves the last value with the cabinet
// offline by its last will; a broker that lost everything gets "running"
// back with the rest at the reconnection.
func TestPowerStateLifecycle(t *testing.T) {
	cabinettest.Long(t, "four daemon lives on both brokers")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind))
		power := r.topic(haentities.PowerState)

		// Shutdown: ES's quit shutdown and shutdown events through the
		// wrappers, then Batocera stops the service.
		d := r.startOnline()
		r.obs.AwaitLatest(power, haentities.PowerRunning)
		from := r.obs.Mark()
		r.hook("quit", "shutdown")
		r.obs.AwaitMsg(from, power, haentities.PowerShuttingDown)
		from = r.obs.Mark()
		d.term()
		// ES's quit shutdown already said offline (the cabinet is going
		// down); the stop publishes off, then its own offline, last.
		cabinettest.Await(t, "off, then offline", r.obs.Changed, func() (bool, string) {
			var order []string
			offSeen, offlineAfter := false, false
			for _, m := range r.obs.Since(from) {
				switch m.Topic {
				case power:
					order = append(order, "power_state "+m.Payload)
					offSeen, offlineAfter = m.Payload == haentities.PowerOff, false
				case r.status():
					order = append(order, "status "+m.Payload)
					offlineAfter = offSeen && m.Payload == haentities.Offline
				}
			}
			return offSeen && offlineAfter, fmt.Sprintf("%v", order)
		})

		// An upgrade: a stop with no shutdown under way.
		d = r.startOnline()
		r.obs.AwaitLatest(power, haentities.PowerRunning)
		from = r.obs.Mark()
		d.term()
		r.obs.AwaitMsg(from, power, haentities.PowerStopped)
		for _, m := range r.obs.Since(from) {
			if m.Topic == power && m.Payload == haentities.PowerOff {
				t.Errorf("a stop without a shutdown published off")
			}
		}

		// kill -9: the last value stays, the last will says offline.
		d = r.startOnline()
		r.obs.AwaitLatest(power, haentities.PowerRunning)
		from = r.obs.Mark()
		d.kill9()
		r.obs.AwaitMsg(from, r.status(), haentities.Offline)
		if got := r.obs.Retained()[power]; got != haentities.PowerRunning {
			t.Errorf("after kill -9 power_state is %q, want the last value %q", got, haentities.PowerRunning)
		}

		// The broker loses everything: running comes back with the rest.
		d = r.startOnline()
		r.obs.AwaitLatest(power, haentities.PowerRunning)
		r.broker.Restart(t)
		r.obs.Reconnect()
		cabinettest.Await(t, "power_state and online retained again", r.obs.Changed, func() (bool, string) {
			ret := r.obs.Retained()
			return ret[power] == haentities.PowerRunning && ret[r.status()] == haentities.Online,
				"power_state " + ret[power] + ", status " + ret[r.status()]
		})

		d.term()
	})
}
