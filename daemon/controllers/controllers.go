// Package controllers finds the game pads plugged into or paired with the
// cabinet, with the battery level of those that report one, for Home
// Assistant's controller count and connect/disconnect events.
//
// It follows what Batocera itself does, without running its scripts: a pad
// is an input device with a joystick (jsN) handler in
// /proc/bus/input/devices, and its battery is the power_supply whose device
// holds that input device, as batocera-padsinfo finds with the glob
// /sys/class/power_supply/*/device/input/input*/event*. The HID drivers
// register their battery on the HID device that also parents the input
// device (hid-playstation, hid-sony, hid-nintendo, xpadneo, hid-input's
// generic battery), so that one glob covers them all.
package controllers

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds on what one scan reads. A cabinet has a few dozen input devices,
// each about 300 bytes in the list; 32 pads is more players than any
// emulator takes.
const (
	maxInputFile = 256 << 10
	maxPads      = 32
	maxNameRunes = 64
	maxKeyRunes  = 256
)

// Pad is one game controller.
type Pad struct {
	// Key is the pad's identity across scans: the kernel's uniq (a Bluetooth
	// pad's MAC address) if it has one, else its phys (the USB port path),
	// else its sysfs path. A second pad with the same key (one controller
	// exposing two joysticks, or phys shared by Bluetooth pads without uniq)
	// gets "#2", "#3"… in the kernel's registration order.
	Key string
	// Name is the device's name, cleaned of control and bidi characters.
	Name string
	// Battery is the charge in percent, nil when the pad reports none. For
	// pads whose driver reports only a coarse level (hid-nintendo,
	// xpadneo) it is that level's step: see levelPercent.
	Battery *int
	// Charging is true while the kernel reports the battery charging.
	Charging bool
}

// Scanner reads the pads of a machine from its proc and sys files.
type Scanner struct {
	InputDevices string // /proc/bus/input/devices
	Sys          string // the sys dir, "/sys"; links are never followed out of it
}

// System is the Scanner of the machine the program runs on.
func System() Scanner {
	return Scanner{InputDevices: "/proc/bus/input/devices", Sys: "/sys"}
}

// Scan lists the pads, sorted by Key. A missing or unreadable input devices
// list is an error (the caller then offers no controller entities); an
// empty one is zero pads. Batteries are best effort: a sys dir that cannot
// be read leaves every Battery nil.
func (s Scanner) Scan() ([]Pad, error) {
	if s.InputDevices == "" {
		return nil, errors.New("scan controllers: no input devices path configured: pass /proc/bus/input/devices")
	}
	if s.Sys == "" {
		return nil, errors.New("scan controllers: no sys dir configured: pass /sys")
	}
	text, err := sysinfo.ReadSmall(s.InputDevices, maxInputFile+1)
	if err != nil {
		return nil, fmt.Errorf("scan controllers: %w (is /proc mounted?)", err)
	}
	if len(text) > maxInputFile {
		return nil, fmt.Errorf("scan controllers: %s is over %d KiB, more than any cabinet has", s.InputDevices, maxInputFile>>10)
	}
	devices, err := parseDevices(text)
	if err != nil {
		return nil, fmt.Errorf("scan controllers: parse %s: %w", s.InputDevices, err)
	}

	var pads []Pad
	taken := map[string]bool{}
	var power map[string]battery
	for _, d := range devices {
		if !d.isJoystick() {
			continue
		}
		if len(pads) == maxPads {
			break
		}
		if power == nil {
			power = batteries(s.Sys)
		}
		p := Pad{Key: uniqueKey(d.key(), taken), Name: untrusted.Clean(d.name, maxNameRunes)}
		if b, ok := power[path.Base(d.sysfs)]; ok {
			p.Battery, p.Charging = b.percent, b.charging
		}
		pads = append(pads, p)
	}
	slices.SortStableFunc(pads, func(a, b Pad) int { return strings.Compare(a.Key, b.Key) })
	return pads, nil
}

// key picks the device's identity, cleaned: uniq and phys come from device
// firmware and drivers and may hold anything.
func (d inputDevice) key() string {
	for _, k := range []string{d.uniq, d.phys, d.sysfs} {
		if c := untrusted.Clean(k, maxKeyRunes); c != "" {
			return c
		}
	}
	return d.sysfs // parseDevices guarantees a non-empty, clean path
}

// uniqueKey returns key, or key#2, key#3… if earlier pads took it.
func uniqueKey(key string, taken map[string]bool) string {
	k := key
	for n := 2; taken[k]; n++ {
		k = key + "#" + strconv.Itoa(n)
	}
	taken[k] = true
	return k
}

// Changes compares two scans by Key: connected are the pads of after that
// before lacked, disconnected those of before that after lacks, each in the
// order of its list. A pad whose battery or name changed is neither.
func Changes(before, after []Pad) (connected, disconnected []Pad) {
	had := make(map[string]bool, len(before))
	for _, p := range before {
		had[p.Key] = true
	}
	has := make(map[string]bool, len(after))
	for _, p := range after {
		has[p.Key] = true
		if !had[p.Key] {
			connected = append(connected, p)
		}
	}
	for _, p := range before {
		if !has[p.Key] {
			disconnected = append(disconnected, p)
		}
	}
	return connected, disconnected
}
