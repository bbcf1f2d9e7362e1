package controllers

import (
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Bounds on the sys tree walked for batteries: a cabinet has a power supply
// per wireless pad plus perhaps its own battery and charger.
const (
	maxSupplies      = 64
	maxSupplyInputs  = 16
	maxAttributeSize = 64
)

// battery is what a pad's power_supply reports.
type battery struct {
	percent  *int
	charging bool
}

// batteries maps input device names ("input20") to the battery of their
// device, the way batocera-padsinfo does with
// /sys/class/power_supply/*/device/input/input*: a HID driver registers
// the power supply on the HID device, and the input device is that HID
// device's child, so both sit under the same parent. Every path is opened
// inside sys through os.Root, so a symlink pointing out of sys is not
// followed. Nothing here is an error: a pad whose battery cannot be read
// simply has none.
func batteries(sys string) map[string]battery {
	root, err := os.OpenRoot(sys)
	if err != nil {
		return map[string]battery{}
	}
	defer root.Close()

	found := map[string]battery{}
	for _, name := range dirNames(root, "class/power_supply", maxSupplies) {
		dir := path.Join("class/power_supply", name)
		// A controller's battery says scope Device; the cabinet's own battery
		// (a handheld's, a laptop's) says System and powers no pad.
		if scope, ok := attribute(root, dir, "scope"); ok && scope != "Device" {
			continue
		}
		if typ, ok := attribute(root, dir, "type"); ok && typ != "Battery" {
			continue
		}
		inputs := dirNames(root, path.Join(dir, "device/input"), maxSupplyInputs)
		if len(inputs) == 0 {
			continue
		}
		b := readBattery(root, dir)
		for _, in := range inputs {
			// The first supply, in name order, wins: newer kernels give a HID
			// device one battery per report id, and they describe one pack.
			if _, dup := found[in]; !dup && isInputName(in) {
				found[in] = b
			}
		}
	}
	return found
}

// readBattery reads capacity (percent), falling back to capacity_level
// for drivers that report only a level, and status.
func readBattery(root *os.Root, dir string) battery {
	var b battery
	if s, ok := attribute(root, dir, "capacity"); ok {
		if n, err := strconv.Atoi(s); err == nil && isDigits(s) && n <= 100 {
			b.percent = &n
		}
	}
	if b.percent == nil {
		if s, ok := attribute(root, dir, "capacity_level"); ok {
			if n, ok := levelPercent(s); ok {
				b.percent = &n
			}
		}
	}
	status, _ := attribute(root, dir, "status")
	b.charging = status == "Charging"
	return b
}

// levelPercent turns the kernel's coarse capacity_level into a percentage
// for drivers without a capacity file (hid-nintendo has five levels,
// xpadneo four). The steps are those EmulationStation gives SDL's power
// levels (25, 50, 75, 100: InputManager.cpp, SDL_JOYBATTERYUPDATED);
// Critical is not empty, so 5.
func levelPercent(level string) (int, bool) {
	switch level {
	case "Full":
		return 100, true
	case "High":
		return 75, true
	case "Normal":
		return 50, true
	case "Low":
		return 25, true
	case "Critical":
		return 5, true
	}
	return 0, false // "Unknown", or not a level
}

// dirNames lists up to limit entry names of dir, sorted; none if dir
// cannot be read or lies outside the root.
func dirNames(root *os.Root, dir string, limit int) []string {
	f, err := root.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(limit)
	slices.Sort(names)
	return names
}

// attribute reads a small sysfs attribute, trimmed. Reading one can fail
// even when it exists (hid-input answers ENODATA before the pad's first
// report): that is no value.
func attribute(root *os.Root, dir, name string) (string, bool) {
	f, err := root.Open(path.Join(dir, name))
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttributeSize+1))
	if err != nil || len(b) > maxAttributeSize {
		return "", false
	}
	s := strings.TrimSpace(string(b))
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return "", false
		}
	}
	return s, s != ""
}
