package daemon

import (
	"context"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/outbox"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
)

// thermalZones are the kernel's temperature files, in millidegrees Celsius.
const thermalZones = "/sys/class/thermal/thermal_zone*/temp"

// haSettings are the Home Assistant settings of the daemon: the hook's,
// plus its own entities (diagnostics, and the controls when
// cabinet.ha.controls is on), so its discovery announces them and turning
// the controls off clears theirs.
func haSettings(cfg *config.Config, version string) (haentities.Settings, error) {
	s, err := journal.Settings(cfg, version)
	s.Daemon, s.Controls = true, cfg.HA.Controls
	return s, err
}

// publishDiagnostics records the diagnostic states at once and then every
// interval, while MQTT is configured. Each round is published even when
// nothing changed: the entities expire (expire_after) without it.
func (d *Daemon) publishDiagnostics(ctx context.Context) error {
	tick := time.NewTicker(d.opts.DiagnosticsInterval)
	defer tick.Stop()
	for {
		d.recordDiagnostics()
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (d *Daemon) recordDiagnostics() {
	j := d.eng.journal()
	if !j.Publishing {
		return
	}
	msgs := haentities.DiagnosticStates(j.Settings, d.readDiagnostics(d.Config()), time.Now())
	if err := d.eng.store.Update(func(tx *outbox.Tx) error { return tx.Refresh(msgs...) }); err != nil {
		d.log.Error().Err(err).Msg("record diagnostics")
		return
	}
	d.eng.kick()
}

// readDiagnostics gathers the figures; one that cannot be read is left
// unknown (nothing is published for it).
func (d *Daemon) readDiagnostics(cfg *config.Config) haentities.DiagnosticValues {
	st := d.Status()
	v := haentities.DiagnosticValues{
		BatoceraVersion: journal.BatoceraVersion(cfg),
		CabinetVersion:  d.opts.Version,
		OutboxDepth:     st.OutboxDepth,
		OutboxDropped:   st.OutboxDropped,
		MQTTReconnects:  st.Reconnects,
	}
	if v.CabinetVersion == "" {
		v.CabinetVersion = "dev"
	}
	if t, err := sysinfo.CPUTemperature(cfg.Path(thermalZones)); err == nil {
		v.CPUTemperature = &t
	}
	if free, err := sysinfo.DiskFree(cfg.StatePath()); err == nil {
		v.FreeBytes = &free
	}
	return v
}
