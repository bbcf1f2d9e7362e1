package sensors

import (
	"context"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// Diagnostics publishes the diagnostic entities at start and then every Every, while MQTT is
// configured. Each round is published even when nothing changed: the entities expire
// (expire_after) without it.
type Diagnostics struct {
	Host  Host
	Clock clock.Clock
	Every time.Duration
	// Read gathers the figures (the daemon's own, then the host's: ReadHost).
	Read func() haentities.DiagnosticValues
}

// Run publishes until ctx ends.
func (g *Diagnostics) Run(ctx context.Context) error {
	tick, tc := g.Clock.NewTicker(g.Every)
	defer tick.Stop()
	for {
		g.Record()
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		}
	}
}

// Record publishes one round now (the daemon also does at every connect and reload).
func (g *Diagnostics) Record() {
	r := g.Host.Rules()
	if !r.Publishing {
		return
	}
	g.Host.Refresh(haentities.DiagnosticStates(r.Settings, g.Read(), g.Clock.Now())...)
}

// HostFigures are where the host's own figures are read.
type HostFigures struct {
	ThermalZones string // CPU temperature: a glob of the kernel's temperature files
	State        string // the state dir: its filesystem's free space
	Proc         string // /proc: boot time, load, memory, the default route
}

// ReadHost adds the host's figures to v; one that cannot be read is left unknown (nothing is
// published for it).
func ReadHost(f HostFigures, v *haentities.DiagnosticValues) {
	if t, err := sysinfo.CPUTemperature(f.ThermalZones); err == nil {
		v.CPUTemperature = &t
	}
	if free, err := sysinfo.DiskFree(f.State); err == nil {
		v.FreeBytes = &free
	}
	if f.Proc == "" {
		return
	}
	if b, err := sysinfo.BootTime(f.Proc); err == nil {
		v.Boot = b
	}
	if l, err := sysinfo.Load1(f.Proc); err == nil {
		v.Load = &l
	}
	if m, err := sysinfo.MemoryUse(f.Proc); err == nil && m.Total > 0 {
		pct := float64(m.Used) * 100 / float64(m.Total)
		v.MemoryUsed = &pct
	}
	v.IPAddress = NetworkAddress(f.Proc)
}

// NetworkAddress is the address of the default route's interface, "" when there is none (no
// network, or only loopback).
func NetworkAddress(proc string) string {
	iface, err := sysinfo.DefaultInterface(proc)
	if err != nil {
		return ""
	}
	ip, err := sysinfo.IPAddress(iface, sysinfo.InterfaceAddrs)
	if err != nil || !ip.IsValid() {
		return ""
	}
	return ip.String()
}
