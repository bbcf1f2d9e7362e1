package daemon

import (
	"context"

	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/osupdate"
	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
)

// sensorHost is the daemon as its sensors see it (package sensors): the engine's rules and
// snapshot, its applies, and the store's outbox.
type sensorHost struct{ d *Daemon }

func (h sensorHost) Rules() journal.Rules               { return h.d.eng.currentRules() }
func (h sensorHost) Snapshot() haentities.Snapshot      { return h.d.eng.snapshot() }
func (h sensorHost) Applied() <-chan struct{}           { return h.d.eng.appliedCh() }
func (h sensorHost) Refresh(msgs ...haentities.Message) { h.d.refresh(msgs...) }
func (h sensorHost) Publish(msgs ...haentities.Message) { h.d.publish(msgs...) }

// newSystem builds the system sensors over the sources the cabinet has (has: what probe found).
func (d *Daemon) newSystem(sys System, has haentities.Sources) *sensors.System {
	s := &sensors.System{Host: sensorHost{d}, Clock: d.clock, Log: d.log}
	if has.Audio {
		s.Audio = &sysaudio.Audio{Bin: sys.Audio}
	}
	if has.Update {
		s.Update = &osupdate.Checker{Upgrade: sys.Upgrade, Config: sys.BatoceraConfig}
	}
	if has.Controllers {
		s.Pads = controllers.Scanner{InputDevices: sys.InputDevices, Sys: sys.Sys}
		s.PadsChanged = d.padsChanged
	}
	return s
}

// pictures are the artwork and last screenshot entities (package sensors) over the ES client
// and paths in force.
func (d *Daemon) pictures() *sensors.Pictures {
	cfg := d.config()
	return &sensors.Pictures{Host: sensorHost{d}, Clock: d.clock, Log: d.log, Root: cfg.Tools.Root,
		ScreenshotDir: cfg.Tools.Paths.ScreenshotDir,
		Game: func(ctx context.Context, system, id string) (es.Game, error) {
			return d.es().GameLocal(ctx, system, id)
		}}
}
