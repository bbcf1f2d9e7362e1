package daemon

import (
	"errors"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/daemon/sensors"
)

// onCommand carries out a Home Assistant command (the MQTT link runs them one at a time, in
// order) through the controls of package sensors.
func (d *Daemon) onCommand(topic string, payload []byte, dup bool) {
	d.newControls().OnCommand(topic, payload, dup)
}

// newControls are Home Assistant's commands (package sensors) over the daemon's tools, system
// sensors and power buttons.
func (d *Daemon) newControls() *sensors.Controls {
	return &sensors.Controls{Host: sensorHost{d}, Clock: d.clock, Log: d.log, Ctx: d.runCtx, System: d.sys, Presses: &d.presses,
		Tools: func() sensors.ToolCaller {
			if srv := d.mcpServer(false); srv != nil {
				return srv
			}
			return nil
		},
		Power:     func() *power.Runner { return d.powerRunner(d.config()) },
		DryRun:    func() bool { return d.config().Tools.DryRun },
		Household: haHousehold{householdControls{d}}, Play: haPlay{d}}
}

// powerRunner carries out power actions through this daemon's ES.
func (d *Daemon) powerRunner(cfg *Config) *power.Runner {
	c := d.es()
	lock := cfg.Tools.InstallLock
	return &power.Runner{ES: c, Routes: es.NewPowerClient(c), Clock: d.clock, Busy: func() error {
		if busy, err := install.Writing(lock); err == nil && busy {
			return errors.New("a library install is writing to the cabinet; try again when it has finished")
		}
		return nil
	}}
}
