package fakeinput

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newInput(t *testing.T) *Input {
	t.Helper()
	in, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewHasOnlyThePowerButton(t *testing.T) {
	in := newInput(t)
	if got := read(t, in.InputDevices()); got != powerButton {
		t.Errorf("devices = %q, want the power button only", got)
	}
	if _, err := New(""); err == nil {
		t.Error("New(\"\") gave no error")
	}
}

// TestTreeHasTheKernelShape checks what the real scanners rely on: the
// glob batocera-padsinfo runs finds the pad's event device through the
// battery, and the battery's and the input device's device links meet in
// one HID directory.
func TestTreeHasTheKernelShape(t *testing.T) {
	in := newInput(t)
	if err := in.Connect("DualSense Wireless Controller", "e8:47:3a:00:00:01", 64); err != nil {
		t.Fatal(err)
	}
	sys := in.Sys()
	events, err := filepath.Glob(filepath.Join(sys, "class/power_supply/*/device/input/input*/event*"))
	if err != nil || len(events) != 1 {
		t.Fatalf("batocera-padsinfo's glob found %q, %v; want one event dir", events, err)
	}
	if got := read(t, filepath.Join(events[0], "uevent")); !strings.Contains(got, "DEVNAME=input/event1\n") {
		t.Errorf("event uevent = %q", got)
	}
	supply := filepath.Join(sys, "class/power_supply/ps-controller-battery-e8:47:3a:00:00:01")
	for name, want := range map[string]string{"capacity": "64\n", "status": "Discharging\n", "scope": "Device\n", "type": "Battery\n"} {
		if got := read(t, filepath.Join(supply, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := read(t, filepath.Join(supply, "uevent")); !strings.Contains(got, "POWER_SUPPLY_CAPACITY=64\n") {
		t.Errorf("supply uevent = %q", got)
	}
	link, err := os.Readlink(supply)
	if err != nil || !strings.HasPrefix(link, "../../devices/") {
		t.Errorf("class link = %q, %v; want a relative link into devices", link, err)
	}
	hidOfSupply, err1 := filepath.EvalSymlinks(filepath.Join(supply, "device"))
	hidOfInput, err2 := filepath.EvalSymlinks(filepath.Join(sys, "class/input/input1/device"))
	if err1 != nil || err2 != nil || hidOfSupply != hidOfInput || !strings.HasSuffix(hidOfInput, "/0005:054C:0CE6.0001") {
		t.Errorf("device links: supply → %q (%v), input → %q (%v); want one HID dir", hidOfSupply, err1, hidOfInput, err2)
	}

	list := read(t, in.InputDevices())
	for _, want := range []string{
		"N: Name=\"DualSense Wireless Controller\"\n",
		"U: Uniq=e8:47:3a:00:00:01\n",
		"H: Handlers=event1 js0 \n",
		"S: Sysfs=/devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0/bluetooth/hci0/hci0:256/0005:054C:0CE6.0001/input/input1\n",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("devices list lacks %q:\n%s", want, list)
		}
	}
	if sysfs := filepath.Join(sys, "devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0/bluetooth/hci0/hci0:256/0005:054C:0CE6.0001/input/input1/name"); read(t, sysfs) != "DualSense Wireless Controller\n" {
		t.Errorf("the Sysfs= path does not lead to the input device")
	}
}

func TestDisconnectRemovesEverything(t *testing.T) {
	in := newInput(t)
	if err := in.Connect("A", "aa:00:00:00:00:01", 10); err != nil {
		t.Fatal(err)
	}
	if err := in.Connect("B", "aa:00:00:00:00:02", -1); err != nil {
		t.Fatal(err)
	}
	if err := in.Disconnect("aa:00:00:00:00:01"); err != nil {
		t.Fatal(err)
	}
	if list := read(t, in.InputDevices()); strings.Contains(list, "aa:00:00:00:00:01") || !strings.Contains(list, "aa:00:00:00:00:02") {
		t.Errorf("devices after disconnect:\n%s", list)
	}
	if left, _ := filepath.Glob(filepath.Join(in.Sys(), "class/power_supply/*")); len(left) != 0 {
		t.Errorf("power supplies left: %q", left)
	}
	if left, _ := filepath.Glob(filepath.Join(in.Sys(), "class/input/*")); len(left) != 1 {
		t.Errorf("input links left: %q, want B's only", left)
	}
	// joydev hands the lowest free number to the next pad.
	if err := in.Connect("C", "aa:00:00:00:00:03", -1); err != nil {
		t.Fatal(err)
	}
	if list := read(t, in.InputDevices()); !strings.Contains(list, "H: Handlers=event3 js0 \n") {
		t.Errorf("reconnect did not reuse js0:\n%s", list)
	}
}

func TestBatteryLifecycle(t *testing.T) {
	in := newInput(t)
	const u = "aa:00:00:00:00:01"
	if err := in.Connect("A", u, -1); err != nil {
		t.Fatal(err)
	}
	if err := in.SetCharging(u, true); err == nil {
		t.Error("SetCharging without a battery gave no error")
	}
	supply := filepath.Join(in.Sys(), "class/power_supply/ps-controller-battery-"+u)
	if err := in.SetBattery(u, 30); err != nil {
		t.Fatal(err)
	}
	if err := in.SetCharging(u, true); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(supply, "capacity")) + read(t, filepath.Join(supply, "status")); got != "30\nCharging\n" {
		t.Errorf("supply = %q", got)
	}
	if err := in.SetBattery(u, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(supply); !os.IsNotExist(err) {
		t.Errorf("supply after SetBattery(-1): %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(in.InputDevices()), ".fakeinput-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %q", leftovers)
	}
}

func TestRefusals(t *testing.T) {
	in := newInput(t)
	if err := in.Connect("A", "aa", 50); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
	}{
		{"same uniq twice", in.Connect("B", "aa", 50)},
		{"line break in name", in.Connect("B\nH: Handlers=js9", "bb", 50)},
		{"empty uniq", in.Connect("B", "", 50)},
		{"slash in uniq", in.Connect("B", "../x", 50)},
		{"dot-dot uniq", in.Connect("B", "..", 50)},
		{"battery 101", in.Connect("B", "cc", 101)},
		{"battery -2", in.SetBattery("aa", -2)},
		{"unknown pad battery", in.SetBattery("zz", 5)},
		{"unknown pad disconnect", in.Disconnect("zz")},
		{"unknown pad charging", in.SetCharging("zz", true)},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if list := read(t, in.InputDevices()); strings.Count(list, "I: ") != 2 {
		t.Errorf("refused calls changed the list:\n%s", list)
	}
}
