package sensors

import (
	"os"
	"sync"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// PowerState is what sensor.power_state shows. It is the daemon's alone: `running` while it
// runs, what ES's quit, reboot and shutdown events say is under way, and at a clean stop `off`
// (a shutdown reached its end) or `stopped` (anything else). A lost connection leaves the last
// value and the last will makes the entity unavailable.
type PowerState struct {
	Host  Host
	Clock clock.Clock
	Log   zerolog.Logger

	mu    sync.Mutex
	state string
}

// Set records a new power state for Home Assistant (nothing when it is the one in force).
func (p *PowerState) Set(state string) {
	p.mu.Lock()
	changed := p.state != state
	p.state = state
	p.mu.Unlock()
	if !changed {
		return
	}
	p.Host.Refresh(haentities.PowerStateMessage(p.Host.Rules().Settings, state, p.Clock.Now()))
	p.Log.Debug().Str("state", state).Msg("power state")
}

// State is the power state in force ("" before the first).
func (p *PowerState) State() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Follow moves the power state after an event; bootID is this boot's (an event a crashed
// daemon left from an earlier boot says nothing about now).
func (p *PowerState) Follow(ev tracker.Event, bootID string) {
	if ev.BootID != "" && bootID != "" && ev.BootID != bootID {
		return
	}
	if state, ok := powerAfter(p.State(), ev); ok {
		p.Set(state)
	}
}

// AtStop is the power state a clean stop publishes, just before offline: `off` only when a
// shutdown is under way (ES's shutdown event, or shutdownFlag, the file ES leaves for Batocera's
// shutdown, /tmp/shutdown.please).
func (p *PowerState) AtStop(shutdownFlag string) string {
	if p.State() == haentities.PowerShuttingDown {
		return haentities.PowerOff
	}
	if shutdownFlag != "" {
		if _, err := os.Stat(shutdownFlag); err == nil {
			return haentities.PowerOff
		}
	}
	return haentities.PowerStopped
}

// powerAfter is the power state an ES event announces, and whether it announces one. A plain
// quit does not undo a reboot or shutdown under way (ES fires no plain quit then, but a hook's
// late one could arrive).
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
