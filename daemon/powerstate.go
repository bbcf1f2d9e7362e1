package daemon

import (
	"os"
	"sync"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// powerState is what sensor.power_state shows. It is the daemon's alone:
// `running` while it runs, what ES's quit, reboot and shutdown events say
// is under way, and at a clean stop `off` (a shutdown reached its end) or
// `stopped` (anything else). A lost connection leaves the last value and
// the last will makes the entity unavailable.
type powerState struct {
	mu    sync.Mutex
	state string
}

// set records state when it changes; the second result says whether it did.
func (p *powerState) set(state string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == state {
		return false
	}
	p.state = state
	return true
}

func (p *powerState) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// powerAfter is the power state an ES event announces, and whether it
// announces one. A plain quit does not undo a reboot or shutdown under way
// (ES fires no plain quit then, but a hook's late one could arrive).
func powerAfter(current string, ev tracker.Event) (string, bool) {
	switch ev.Kind {
	case tracker.KindStart, tracker.KindWake:
		return haentities.PowerRunning, true
	case tracker.KindQuit:
		switch ev.Arg {
		case "reboot":
			return haentities.PowerRebooting, true
		case "shutdown":
			return haentities.PowerShuttingDown, true
		}
		if current == haentities.PowerRebooting || current == haentities.PowerShuttingDown {
			return "", false
		}
		return haentities.PowerRestartingES, true
	case tracker.KindReboot:
		return haentities.PowerRebooting, true
	case tracker.KindShutdown:
		return haentities.PowerShuttingDown, true
	}
	return "", false
}

// followPower moves the power state after an event of this boot (an event
// a crashed daemon left from an earlier boot says nothing about now).
func (d *Daemon) followPower(ev tracker.Event) {
	if now := d.opts.Now(); ev.BootID != "" && now.BootID != "" && ev.BootID != now.BootID {
		return
	}
	if state, ok := powerAfter(d.power.get(), ev); ok {
		d.setPower(state)
	}
}

// setPower records a new power state for Home Assistant.
func (d *Daemon) setPower(state string) {
	if !d.power.set(state) {
		return
	}
	r := d.eng.currentRules()
	d.refresh(haentities.PowerStateMessage(r.Settings, state, d.clock.Now()))
	d.log.Debug().Str("state", state).Msg("power state")
}

// stopPower is the power state a clean stop publishes, just before
// offline: `off` only when a shutdown is under way (ES's shutdown event,
// or the flag ES leaves for Batocera's shutdown, /tmp/shutdown.please).
func (d *Daemon) stopPower() string {
	if d.power.get() == haentities.PowerShuttingDown {
		return haentities.PowerOff
	}
	if f := d.config().System.ShutdownFlag; f != "" {
		if _, err := os.Stat(f); err == nil {
			return haentities.PowerOff
		}
	}
	return haentities.PowerStopped
}

// refresh records retained states the daemon owns (diagnostics, power)
// into the outbox, even unchanged (the diagnostics' expire_after needs
// every round), and wakes the drain; nothing while MQTT is off.
func (d *Daemon) refresh(msgs ...haentities.Message) { d.storeMsgs(msgs, (*store.Tx).Refresh) }

// publish records messages of any kind (events too; a retained state only
// when it changed) into the outbox and wakes the drain; nothing while MQTT
// is off.
func (d *Daemon) publish(msgs ...haentities.Message) { d.storeMsgs(msgs, (*store.Tx).Record) }

func (d *Daemon) storeMsgs(msgs []haentities.Message, write func(*store.Tx, ...haentities.Message) error) {
	if len(msgs) == 0 || !d.eng.currentRules().Publishing {
		return
	}
	if err := d.eng.store().Update(func(tx *store.Tx) error { return write(tx, msgs...) }); err != nil {
		d.log.Error().Err(err).Msg("record states")
		return
	}
	d.eng.kick()
}
