// Package fakeinput builds, under a directory, the files through which Linux
// shows game pads and their batteries: a proc/bus/input/devices list and a
// sys tree in the real kernel's shape, for the controller scanner's tests
// and for `cabinet simulate`. Pads look like Bluetooth DualSense pads under
// hid-playstation: the HID device holds input/inputN (with its jsN and
// eventN) and power_supply/ps-controller-battery-<uniq>, and
// class/power_supply/<name> links to the latter.
//
// Every file is replaced atomically (temporary file, then rename) and the
// devices list is rewritten last on connect and first on disconnect, so a
// scanner running meanwhile sees a pad whole or not at all.
package fakeinput

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// adapter is the phys of every fake pad: Bluetooth HID pads report the
// host adapter's address there, which is why uniq is their identity.
const adapter = "00:1a:7d:da:71:13"

// Input is a fake machine's input devices. Its methods may be called from
// several goroutines.
type Input struct {
	root string

	mu        sync.Mutex
	pads      []*pad // in connection order, like the kernel's list
	nextInput int
	nextEvent int
	nextHID   int
}

type pad struct {
	name, uniq          string
	input, event, js    int
	hidDir              string // relative to sys
	battery             int    // percent, -1 without a power supply
	charging            bool
	supplyDir, supplyAs string // relative to sys; the class link name
}

// New makes the empty tree under root: a devices list holding only a power
// button (a non-pad input device, as every machine has) and sys/class dirs.
func New(root string) (*Input, error) {
	if root == "" {
		return nil, errors.New("fakeinput: no root dir given")
	}
	in := &Input{root: root, nextInput: 1, nextEvent: 1, nextHID: 1}
	for _, d := range []string{"proc/bus/input", "sys/class/power_supply", "sys/class/input",
		"sys/devices/LNXSYSTM:00/LNXPWRBN:00/input/input0/event0"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, fmt.Errorf("fakeinput: %w", err)
		}
	}
	if err := in.writeDevicesLocked(); err != nil {
		return nil, err
	}
	return in, nil
}

// InputDevices is the path of the fake /proc/bus/input/devices.
func (in *Input) InputDevices() string {
	return filepath.Join(in.root, "proc", "bus", "input", "devices")
}

// Sys is the root of the fake sys tree.
func (in *Input) Sys() string { return filepath.Join(in.root, "sys") }

// Connect adds a pad. uniq is its identity here (a MAC address in real
// life) and must be unused; battery is a percentage, or -1 for a pad
// without a power supply (a wired pad, or one before its first report).
func (in *Input) Connect(name, uniq string, battery int) error {
	if strings.ContainsAny(name, "\n\x00") {
		return fmt.Errorf("fakeinput: name %q: the kernel's list cannot hold a line break or NUL", name)
	}
	if err := checkUniq(uniq); err != nil {
		return err
	}
	if battery < -1 || battery > 100 {
		return fmt.Errorf("fakeinput: battery %d: want -1 or 0–100", battery)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.findLocked(uniq) != nil {
		return fmt.Errorf("fakeinput: a pad %q is already connected: disconnect it first", uniq)
	}
	hid := fmt.Sprintf("0005:054C:0CE6.%04X", in.nextHID)
	p := &pad{
		name: name, uniq: uniq, battery: -1,
		input: in.nextInput, event: in.nextEvent, js: in.freeJSLocked(),
		hidDir: fmt.Sprintf("devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0/bluetooth/hci0/hci0:%d/%s", 255+in.nextHID, hid),
	}
	in.nextInput++
	in.nextEvent++
	in.nextHID++
	if err := in.buildLocked(p); err != nil {
		return err
	}
	if battery >= 0 {
		if err := in.setBatteryLocked(p, battery); err != nil {
			return err
		}
	}
	in.pads = append(in.pads, p)
	return in.writeDevicesLocked()
}

// Disconnect removes the pad with this uniq.
func (in *Input) Disconnect(uniq string) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.findLocked(uniq)
	if p == nil {
		return fmt.Errorf("fakeinput: no pad %q is connected", uniq)
	}
	kept := in.pads[:0]
	for _, q := range in.pads {
		if q != p {
			kept = append(kept, q)
		}
	}
	in.pads = kept
	if err := in.writeDevicesLocked(); err != nil {
		return err
	}
	var errs []error
	if p.supplyAs != "" {
		errs = append(errs, os.Remove(in.sys("class/power_supply", p.supplyAs)))
	}
	errs = append(errs,
		os.Remove(in.sys("class/input", "input"+strconv.Itoa(p.input))),
		os.RemoveAll(in.sys(p.hidDir)))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fakeinput: disconnect %q: %w", uniq, err)
	}
	return nil
}

// SetBattery changes a pad's charge. A pad connected without a battery
// gets a power supply then, as hid-input creates one at the first battery
// report; -1 removes it.
func (in *Input) SetBattery(uniq string, percent int) error {
	if percent < -1 || percent > 100 {
		return fmt.Errorf("fakeinput: battery %d: want -1 or 0–100", percent)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.findLocked(uniq)
	if p == nil {
		return fmt.Errorf("fakeinput: no pad %q is connected", uniq)
	}
	if percent == -1 {
		return in.removeSupplyLocked(p)
	}
	return in.setBatteryLocked(p, percent)
}

// SetCharging sets whether a pad's battery reports Charging.
func (in *Input) SetCharging(uniq string, charging bool) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.findLocked(uniq)
	if p == nil {
		return fmt.Errorf("fakeinput: no pad %q is connected", uniq)
	}
	if p.battery < 0 {
		return fmt.Errorf("fakeinput: pad %q has no battery: SetBattery first", uniq)
	}
	p.charging = charging
	return in.writeSupplyLocked(p)
}

// checkUniq keeps uniq usable as a path element and a line of the list.
func checkUniq(uniq string) error {
	if uniq == "" || len(uniq) > 64 || uniq == "." || uniq == ".." {
		return fmt.Errorf("fakeinput: uniq %q: want 1–64 bytes, not . or ..", uniq)
	}
	for i := 0; i < len(uniq); i++ {
		if c := uniq[i]; c <= ' ' || c > '~' || c == '/' {
			return fmt.Errorf("fakeinput: uniq %q: want printable ASCII without blanks or '/'", uniq)
		}
	}
	return nil
}

func (in *Input) findLocked(uniq string) *pad {
	for _, p := range in.pads {
		if p.uniq == uniq {
			return p
		}
	}
	return nil
}

// freeJSLocked is the lowest unused joystick number, as joydev hands out.
func (in *Input) freeJSLocked() int {
	used := map[int]bool{}
	for _, p := range in.pads {
		used[p.js] = true
	}
	n := 0
	for used[n] {
		n++
	}
	return n
}

func (in *Input) sys(elem ...string) string {
	return filepath.Join(append([]string{in.root, "sys"}, elem...)...)
}
