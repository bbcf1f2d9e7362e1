package controllers

import (
	"fmt"
	"path"
	"strings"
)

// inputDevice is one block of /proc/bus/input/devices, as the kernel's
// input_devices_seq_show (drivers/input/input.c) writes it:
//
//	I: Bus=0005 Vendor=054c Product=0ce6 Version=8100
//	N: Name="DualSense Wireless Controller"
//	P: Phys=00:1a:7d:da:71:13
//	S: Sysfs=/devices/…/0005:054C:0CE6.0003/input/input20
//	U: Uniq=e8:47:3a:11:22:33
//	H: Handlers=event17 js0
//	B: PROP=0
//	B: EV=20000b
//	…
//
// and a blank line after each device.
type inputDevice struct {
	name, phys, sysfs, uniq string
	handlers                []string
}

// isJoystick reports whether joydev serves the device (a jsN handler),
// which is how SDL and so EmulationStation tell a game pad from a keyboard.
func (d inputDevice) isJoystick() bool {
	for _, h := range d.handlers {
		if n, ok := strings.CutPrefix(h, "js"); ok && isDigits(n) {
			return true
		}
	}
	return false
}

// parseDevices reads the whole list. It is strict: a line that is not
// "X: …", a block that does not start with I: or lacks N:, P:, S: or H:,
// a field given twice, or a malformed I: or S: line fails the parse, since
// the text is then not what this code knows how to read. U: is optional
// (older kernels lack it); B: lines and unknown letters are skipped.
func parseDevices(s string) ([]inputDevice, error) {
	var (
		devices []inputDevice
		cur     inputDevice
		seen    map[byte]bool // letters of the block being read; nil between blocks
		start   int
	)
	finish := func() error {
		if seen == nil {
			return nil
		}
		for _, need := range []byte("NPSH") {
			if !seen[need] {
				return fmt.Errorf("device at line %d has no %c: line", start, need)
			}
		}
		devices = append(devices, cur)
		cur, seen = inputDevice{}, nil
		return nil
	}
	for n, line := range strings.Split(s, "\n") {
		n++
		if line == "" {
			if err := finish(); err != nil {
				return nil, err
			}
			continue
		}
		if len(line) < 3 || line[0] < 'A' || line[0] > 'Z' || line[1] != ':' || line[2] != ' ' {
			return nil, fmt.Errorf("line %d: %q is not \"X: value\"", n, clip(line))
		}
		letter, value := line[0], line[3:]
		if seen == nil {
			if letter != 'I' {
				return nil, fmt.Errorf("line %d: a device starts with %c:, want I:", n, letter)
			}
			seen, start = map[byte]bool{}, n
		}
		if letter != 'B' && seen[letter] {
			return nil, fmt.Errorf("line %d: second %c: line in one device (a missing blank line?)", n, letter)
		}
		seen[letter] = true
		var err error
		switch letter {
		case 'I':
			err = checkID(value)
		case 'N':
			cur.name, err = quoted(value, "Name=")
		case 'P':
			cur.phys, err = field(value, "Phys=")
		case 'S':
			cur.sysfs, err = field(value, "Sysfs=")
			if err == nil {
				err = checkSysfs(cur.sysfs)
			}
		case 'U':
			cur.uniq, err = field(value, "Uniq=")
		case 'H':
			var h string
			h, err = field(value, "Handlers=")
			cur.handlers = strings.Fields(h)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	// The kernel ends every device with a blank line; a last block without
	// one is still whole if it has its fields.
	if err := finish(); err != nil {
		return nil, err
	}
	return devices, nil
}

func field(value, prefix string) (string, error) {
	v, ok := strings.CutPrefix(value, prefix)
	if !ok {
		return "", fmt.Errorf("%q does not start with %s", clip(value), prefix)
	}
	return v, nil
}

// quoted reads Name="…". The kernel does not escape the name, so it runs
// from the first quote to the last one, quotes inside included.
func quoted(value, prefix string) (string, error) {
	v, err := field(value, prefix)
	if err != nil {
		return "", err
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", fmt.Errorf("%s%q is not in double quotes", prefix, clip(v))
	}
	return v[1 : len(v)-1], nil
}

// checkID checks "Bus=0005 Vendor=054c Product=0ce6 Version=8100": four
// 16-bit ids the kernel prints with %04x.
func checkID(value string) error {
	f := strings.Split(value, " ")
	if len(f) != 4 {
		return fmt.Errorf("I: %q: want Bus, Vendor, Product and Version", clip(value))
	}
	for i, name := range []string{"Bus=", "Vendor=", "Product=", "Version="} {
		hex, ok := strings.CutPrefix(f[i], name)
		if !ok || len(hex) != 4 || strings.Trim(hex, "0123456789abcdef") != "" {
			return fmt.Errorf("I: %q: want %s and 4 hex digits", clip(f[i]), name)
		}
	}
	return nil
}

// checkSysfs accepts the kernel's path of an input device under /sys:
// absolute, clean, under /devices, ending in inputN, printable ASCII. The
// last element names the input device in power_supply/*/device/input/.
func checkSysfs(p string) error {
	if !strings.HasPrefix(p, "/devices/") || path.Clean(p) != p {
		return fmt.Errorf("sysfs path %q is not a clean path under /devices", clip(p))
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] > '~' {
			return fmt.Errorf("sysfs path %q has a blank or non-ASCII byte", clip(p))
		}
	}
	if !isInputName(path.Base(p)) {
		return fmt.Errorf("sysfs path %q does not end in inputN", clip(p))
	}
	return nil
}

// isInputName reports whether s is an input device's name, "input" and a
// number.
func isInputName(s string) bool {
	n, ok := strings.CutPrefix(s, "input")
	return ok && isDigits(n)
}

// isDigits reports whether s is 1 to 10 ASCII digits.
func isDigits(s string) bool {
	if s == "" || len(s) > 10 {
		return false
	}
	return strings.Trim(s, "0123456789") == ""
}

// clip keeps garbage quoted in an error short.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
