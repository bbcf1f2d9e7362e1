package daemon

import (
	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// networkAddress is the address of the default route's interface, "" when
// there is none (no network, or only loopback).
func networkAddress(proc string) string {
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

// readHost adds the host figures to v; one that cannot be read is left
// unknown (nothing is published for it).
func readHost(proc string, v *haentities.DiagnosticValues) {
	if proc == "" {
		return
	}
	if b, err := sysinfo.BootTime(proc); err == nil {
		v.Boot = b
	}
	if l, err := sysinfo.Load1(proc); err == nil {
		v.Load = &l
	}
	if m, err := sysinfo.MemoryUse(proc); err == nil && m.Total > 0 {
		pct := float64(m.Used) * 100 / float64(m.Total)
		v.MemoryUsed = &pct
	}
	v.IPAddress = networkAddress(proc)
}
