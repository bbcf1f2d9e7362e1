package daemon

import (
	"context"

	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// publishDiagnostics records the diagnostic states at once and then every
// interval, while MQTT is configured. Each round is published even when
// nothing changed: the entities expire (expire_after) without it.
func (d *Daemon) publishDiagnostics(ctx context.Context) error {
	tick, tc := d.clock.NewTicker(d.opts.DiagnosticsInterval)
	defer tick.Stop()
	for {
		d.recordDiagnostics()
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		}
	}
}

func (d *Daemon) recordDiagnostics() {
	r := d.eng.currentRules()
	if !r.Publishing {
		return
	}
	d.refresh(haentities.DiagnosticStates(r.Settings, d.readDiagnostics(d.config()), d.clock.Now())...)
}

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
	if t, err := sysinfo.CPUTemperature(cfg.Diagnostics.ThermalZones); err == nil {
		v.CPUTemperature = &t
	}
	if free, err := sysinfo.DiskFree(cfg.Layout.State); err == nil {
		v.FreeBytes = &free
	}
	readHost(cfg.System.Proc, &v)
	return v
}
