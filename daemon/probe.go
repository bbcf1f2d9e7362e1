package daemon

import (
	"os"

	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// probe finds which optional sources this cabinet has, so that Home
// Assistant is never told of an entity that would never get a state: a
// machine without a thermal zone announces no CPU temperature, one without
// batocera-audio no volume. It runs at start and at every configuration
// reading; each check is a stat or a small read.
func probe(cfg *Config) haentities.Sources {
	_, tempErr := sysinfo.CPUTemperature(cfg.Diagnostics.ThermalZones)
	sys := cfg.System
	return haentities.Sources{
		CPUTemperature: tempErr == nil,
		Audio:          executable(sys.Audio),
		Controllers:    readable(sys.InputDevices),
		Update:         executable(sys.Upgrade) || executable(sys.BatoceraConfig),
		Network:        sensors.NetworkAddress(sys.Proc) != "",
		Host:           hostReadable(sys.Proc),
	}
}

// hostReadable says the host figures can be read (all three: a /proc that
// has one has the others).
func hostReadable(proc string) bool {
	if proc == "" {
		return false
	}
	_, bootErr := sysinfo.BootTime(proc)
	_, loadErr := sysinfo.Load1(proc)
	_, memErr := sysinfo.MemoryUse(proc)
	return bootErr == nil && loadErr == nil && memErr == nil
}

func executable(path string) bool {
	if path == "" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func readable(path string) bool {
	if path == "" {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// loadProbed reads the configuration and adds what probe finds.
func loadProbed(load func() (Loaded, error)) (Loaded, error) {
	l, err := load()
	if err == nil {
		l.Config.Rules.Settings.Has = probe(&l.Config)
	}
	return l, err
}
