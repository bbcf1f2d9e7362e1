package fakeinput

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// buildLocked makes a pad's HID device and input device in sys:
//
//	devices/…/<hid>/input/inputN/{name,phys,uniq,device→../../../<hid>,jsM/,eventK/}
//	class/input/inputN → ../../devices/…/<hid>/input/inputN
func (in *Input) buildLocked(p *pad) error {
	inputRel := path.Join(p.hidDir, "input", "input"+strconv.Itoa(p.input))
	inputDir := in.sys(inputRel)
	for _, d := range []string{"js" + strconv.Itoa(p.js), "event" + strconv.Itoa(p.event)} {
		if err := os.MkdirAll(filepath.Join(inputDir, d), 0o755); err != nil {
			return fmt.Errorf("fakeinput: %w", err)
		}
	}
	files := map[string]string{
		"name": p.name + "\n",
		"phys": adapter + "\n",
		"uniq": p.uniq + "\n",
		"event" + strconv.Itoa(p.event) + "/uevent": fmt.Sprintf("MAJOR=13\nMINOR=%d\nDEVNAME=input/event%d\n", 64+p.event, p.event),
		"js" + strconv.Itoa(p.js) + "/uevent":       fmt.Sprintf("MAJOR=13\nMINOR=%d\nDEVNAME=input/js%d\n", p.js, p.js),
	}
	for name, body := range files {
		if err := writeAtomic(filepath.Join(inputDir, name), body); err != nil {
			return err
		}
	}
	if err := os.Symlink("../../../"+path.Base(p.hidDir), filepath.Join(inputDir, "device")); err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	if err := os.Symlink("../../"+inputRel, in.sys("class/input", "input"+strconv.Itoa(p.input))); err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	return nil
}

// setBatteryLocked sets the charge, first making the power supply if the
// pad has none:
//
//	devices/…/<hid>/power_supply/<name>/{type,scope,present,capacity,status,uevent,device→../../../<hid>}
//	class/power_supply/<name> → ../../devices/…/<hid>/power_supply/<name>
func (in *Input) setBatteryLocked(p *pad, percent int) error {
	p.battery = percent
	if p.supplyDir != "" {
		return in.writeSupplyLocked(p)
	}
	// hid-playstation names it "ps-controller-battery-%pMR" after the MAC.
	name := "ps-controller-battery-" + p.uniq
	dir := path.Join(p.hidDir, "power_supply", name)
	if err := os.MkdirAll(in.sys(dir), 0o755); err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	p.supplyDir = dir
	if err := in.writeSupplyLocked(p); err != nil {
		return err
	}
	if err := os.Symlink("../../../"+path.Base(p.hidDir), in.sys(dir, "device")); err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	// The class link comes last: a scanner finds the supply only once its
	// files are there.
	if err := os.Symlink("../../"+dir, in.sys("class/power_supply", name)); err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	p.supplyAs = name
	return nil
}

func (in *Input) writeSupplyLocked(p *pad) error {
	status := "Discharging"
	if p.charging {
		status = "Charging"
	}
	files := map[string]string{
		"type":     "Battery\n",
		"scope":    "Device\n",
		"present":  "1\n",
		"capacity": strconv.Itoa(p.battery) + "\n",
		"status":   status + "\n",
		// batocera-padsinfo reads POWER_SUPPLY_CAPACITY and _STATUS here.
		"uevent": fmt.Sprintf("POWER_SUPPLY_NAME=%s\nPOWER_SUPPLY_TYPE=Battery\nPOWER_SUPPLY_PRESENT=1\n"+
			"POWER_SUPPLY_CAPACITY=%d\nPOWER_SUPPLY_SCOPE=Device\nPOWER_SUPPLY_STATUS=%s\n",
			path.Base(p.supplyDir), p.battery, status),
	}
	for name, body := range files {
		if err := writeAtomic(in.sys(p.supplyDir, name), body); err != nil {
			return err
		}
	}
	return nil
}

func (in *Input) removeSupplyLocked(p *pad) error {
	if p.supplyDir == "" {
		return nil
	}
	if err := os.Remove(in.sys("class/power_supply", p.supplyAs)); err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	if err := os.RemoveAll(in.sys(p.supplyDir)); err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	p.supplyDir, p.supplyAs, p.battery, p.charging = "", "", -1, false
	return nil
}

// powerButton is the input device every PC has and no scanner may count.
const powerButton = `I: Bus=0019 Vendor=0000 Product=0001 Version=0000
N: Name="Power Button"
P: Phys=LNXPWRBN/button/input0
S: Sysfs=/devices/LNXSYSTM:00/LNXPWRBN:00/input/input0
U: Uniq=
H: Handlers=kbd event0 
B: PROP=0
B: EV=3
B: KEY=10000000000000 0

`

// writeDevicesLocked rewrites the devices list in the kernel's format
// (input_devices_seq_show: a space after each handler, a blank line after
// each device).
func (in *Input) writeDevicesLocked() error {
	var b strings.Builder
	b.WriteString(powerButton)
	for _, p := range in.pads {
		fmt.Fprintf(&b, "I: Bus=0005 Vendor=054c Product=0ce6 Version=8100\n")
		fmt.Fprintf(&b, "N: Name=\"%s\"\n", p.name)
		fmt.Fprintf(&b, "P: Phys=%s\n", adapter)
		fmt.Fprintf(&b, "S: Sysfs=/%s/input/input%d\n", p.hidDir, p.input)
		fmt.Fprintf(&b, "U: Uniq=%s\n", p.uniq)
		fmt.Fprintf(&b, "H: Handlers=event%d js%d \n", p.event, p.js)
		b.WriteString("B: PROP=0\nB: EV=20000b\nB: KEY=7fdb000000000000 0 0 0 0\nB: ABS=3003f\nB: FF=107030000 0\n\n")
	}
	return writeAtomic(in.InputDevices(), b.String())
}

// writeAtomic replaces path with body so a reader sees the old file or the
// new one, never a part.
func writeAtomic(path, body string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".fakeinput-*")
	if err != nil {
		return fmt.Errorf("fakeinput: %w", err)
	}
	_, werr := f.WriteString(body)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("fakeinput: write %s: %w", path, werr)
	}
	return nil
}
