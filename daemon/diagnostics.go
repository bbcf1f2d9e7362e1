package daemon

import (
	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// diagnostics are the diagnostic entities' loop (package sensors) over the daemon's figures.
func (d *Daemon) diagnostics() *sensors.Diagnostics {
	return &sensors.Diagnostics{Host: sensorHost{d}, Clock: d.clock, Every: d.opts.DiagnosticsInterval,
		Read: func() haentities.DiagnosticValues { return d.readDiagnostics(d.config()) }}
}

// recordDiagnostics publishes one round of the diagnostics now.
func (d *Daemon) recordDiagnostics() { d.diagnostics().Record() }

// readDiagnostics gathers the figures; one that cannot be read is left
// unknown (nothing is published for it).
func (d *Daemon) readDiagnostics(cfg *Config) haentities.DiagnosticValues {
	st := d.Status()
	v := haentities.DiagnosticValues{
		BatoceraVersion: cfg.Rules.Settings.BatoceraVersion,
		CabinetVersion:  d.opts.Version,
		OutboxDepth:     st.OutboxDepth,
		OutboxDropped:   st.OutboxDropped,
		MQTTReconnects:  st.Reconnects,
	}
	if v.CabinetVersion == "" {
		v.CabinetVersion = "dev"
	}
	sensors.ReadHost(sensors.HostFigures{ThermalZones: cfg.Diagnostics.ThermalZones, State: cfg.Layout.State, Proc: cfg.System.Proc}, &v)
	return v
}
