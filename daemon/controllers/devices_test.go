package controllers

import (
	"slices"
	"strings"
	"testing"
)

// realDevices is /proc/bus/input/devices of a cabinet with a Bluetooth
// DualSense (three input devices, one a joystick), a wired Xbox 360 pad
// (xpad, no uniq), a Bluetooth Switch Pro Controller (hid-nintendo) and a
// keyboard, in the kernel's exact format.
const realDevices = `I: Bus=0019 Vendor=0000 Product=0001 Version=0000
N: Name="Power Button"
P: Phys=LNXPWRBN/button/input0
S: Sysfs=/devices/LNXSYSTM:00/LNXPWRBN:00/input/input0
U: Uniq=
H: Handlers=kbd event0 
B: PROP=0
B: EV=3
B: KEY=10000000000000 0

I: Bus=0003 Vendor=046d Product=c31c Version=0110
N: Name="Logitech USB Keyboard"
P: Phys=usb-0000:00:14.0-3/input0
S: Sysfs=/devices/pci0000:00/0000:00:14.0/usb1/1-3/1-3:1.0/0003:046D:C31C.0001/input/input3
U: Uniq=
H: Handlers=sysrq kbd leds event3 
B: PROP=0
B: EV=120013
B: KEY=1000000000007 ff9f207ac14057ff febeffdfffefffff fffffffffffffffe
B: MSC=10
B: LED=7

I: Bus=0005 Vendor=054c Product=0ce6 Version=8100
N: Name="DualSense Wireless Controller"
P: Phys=00:1a:7d:da:71:13
S: Sysfs=/devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0/bluetooth/hci0/hci0:256/0005:054C:0CE6.0003/input/input20
U: Uniq=e8:47:3a:11:22:33
H: Handlers=event17 js0 
B: PROP=0
B: EV=20000b
B: KEY=7fdb000000000000 0 0 0 0
B: ABS=3003f
B: FF=107030000 0

I: Bus=0005 Vendor=054c Product=0ce6 Version=8100
N: Name="DualSense Wireless Controller Motion Sensors"
P: Phys=00:1a:7d:da:71:13
S: Sysfs=/devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0/bluetooth/hci0/hci0:256/0005:054C:0CE6.0003/input/input21
U: Uniq=e8:47:3a:11:22:33
H: Handlers=event18 
B: PROP=40
B: EV=19
B: ABS=3f
B: MSC=20

I: Bus=0003 Vendor=045e Product=028e Version=0114
N: Name="Microsoft X-Box 360 pad"
P: Phys=usb-0000:00:14.0-2/input0
S: Sysfs=/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/input/input22
U: Uniq=
H: Handlers=event20 js1 
B: PROP=0
B: EV=20000b
B: KEY=7cdb000000000000 0 0 0 0
B: ABS=3003f
B: FF=107030000 0

I: Bus=0005 Vendor=057e Product=2009 Version=8001
N: Name="Nintendo Switch Pro Controller"
P: Phys=00:1a:7d:da:71:13
S: Sysfs=/devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0/bluetooth/hci0/hci0:512/0005:057E:2009.0005/input/input24
U: Uniq=98:b6:e9:01:02:03
H: Handlers=event22 js2 
B: PROP=0
B: EV=20000b
B: KEY=ffff0000000000 0 0 0 0
B: ABS=1b
B: FF=107030000 0

`

func TestParseDevicesRealFile(t *testing.T) {
	devices, err := parseDevices(realDevices)
	if err != nil {
		t.Fatalf("parseDevices: %v", err)
	}
	if len(devices) != 6 {
		t.Fatalf("got %d devices, want 6", len(devices))
	}
	var pads []string
	for _, d := range devices {
		if d.isJoystick() {
			pads = append(pads, d.name)
		}
	}
	want := []string{"DualSense Wireless Controller", "Microsoft X-Box 360 pad", "Nintendo Switch Pro Controller"}
	if !slices.Equal(pads, want) {
		t.Errorf("joysticks = %q, want %q", pads, want)
	}
	ds := devices[2]
	if ds.uniq != "e8:47:3a:11:22:33" || ds.phys != "00:1a:7d:da:71:13" || !strings.HasSuffix(ds.sysfs, "/input20") {
		t.Errorf("DualSense = %+v", ds)
	}
	if !slices.Equal(ds.handlers, []string{"event17", "js0"}) {
		t.Errorf("DualSense handlers = %q", ds.handlers)
	}
}

// block is one well-formed device, to be bent by the cases below.
const block = "I: Bus=0003 Vendor=045e Product=028e Version=0114\n" +
	"N: Name=\"Pad\"\n" +
	"P: Phys=usb-1/input0\n" +
	"S: Sysfs=/devices/usb1/input/input7\n" +
	"U: Uniq=\n" +
	"H: Handlers=event7 js0 \n" +
	"B: EV=20000b\n\n"

func TestParseDevices(t *testing.T) {
	tests := []struct {
		name, text string
		devices    int    // when err == ""
		err        string // substring
	}{
		{"empty file", "", 0, ""},
		{"one device", block, 1, ""},
		{"two devices", block + block, 2, ""},
		{"no final blank line", strings.TrimSuffix(block, "\n"), 1, ""},
		{"extra blank lines", "\n\n" + block + "\n\n" + block, 2, ""},
		{"no uniq line (old kernel)", strings.Replace(block, "U: Uniq=\n", "", 1), 1, ""},
		{"unknown letter skipped", strings.Replace(block, "B: EV", "X: new=1\nB: EV", 1), 1, ""},
		{"quotes inside name", strings.Replace(block, `"Pad"`, `"8Bitdo "SN30" Pro"`, 1), 1, ""},
		{"empty name", strings.Replace(block, `"Pad"`, `""`, 1), 1, ""},
		{"no name", strings.Replace(block, "N: Name=\"Pad\"\n", "", 1), 0, "no N:"},
		{"no sysfs", strings.Replace(block, "S: Sysfs=/devices/usb1/input/input7\n", "", 1), 0, "no S:"},
		{"no handlers", strings.Replace(block, "H: Handlers=event7 js0 \n", "", 1), 0, "no H:"},
		{"missing blank line", strings.TrimSuffix(block, "\n") + block, 0, "second I:"},
		{"starts with N", "N: Name=\"x\"\n\n", 0, "want I:"},
		{"unquoted name", strings.Replace(block, `"Pad"`, `Pad`, 1), 0, "double quotes"},
		{"bad id", strings.Replace(block, "Bus=0003", "Bus=3", 1), 0, "Bus="},
		{"uppercase id", strings.Replace(block, "Product=028e", "Product=028E", 1), 0, "Product="},
		{"relative sysfs", strings.Replace(block, "/devices/usb1/input/input7", "devices/input7", 1), 0, "under /devices"},
		{"climbing sysfs", strings.Replace(block, "/devices/usb1/input/input7", "/devices/../../etc/input7", 1), 0, "under /devices"},
		{"sysfs not inputN", strings.Replace(block, "input/input7", "input/event7", 1), 0, "inputN"},
		{"blank in sysfs", strings.Replace(block, "usb1", "usb 1", 1), 0, "blank"},
		{"wrong prefix", strings.Replace(block, "P: Phys=", "P: Fys=", 1), 0, "Phys="},
		{"garbage line", block + "hello\n", 0, "not \"X: value\""},
		{"lowercase letter", strings.Replace(block, "B: EV", "b: EV", 1), 0, "not \"X: value\""},
		{"name line break", strings.Replace(block, `"Pad"`, "\"Pa\nd\"", 1), 0, "double quotes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devices, err := parseDevices(tt.text)
			if tt.err == "" {
				if err != nil || len(devices) != tt.devices {
					t.Fatalf("parseDevices = %d devices, %v; want %d", len(devices), err, tt.devices)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("parseDevices = %d devices, %v; want an error containing %q", len(devices), err, tt.err)
			}
		})
	}
}

func TestIsJoystick(t *testing.T) {
	tests := []struct {
		handlers []string
		want     bool
	}{
		{[]string{"event17", "js0"}, true},
		{[]string{"js12", "event3"}, true},
		{[]string{"kbd", "event0"}, false},
		{[]string{"mouse2", "event19"}, false},
		{[]string{"js"}, false},
		{[]string{"jsx"}, false},
		{[]string{"joystick0"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := (inputDevice{handlers: tt.handlers}).isJoystick(); got != tt.want {
			t.Errorf("isJoystick(%q) = %v, want %v", tt.handlers, got, tt.want)
		}
	}
}

// FuzzParseDevices: never panics, and whatever it accepts has the fields
// the scanner relies on: a sysfs path under /devices ending in inputN.
func FuzzParseDevices(f *testing.F) {
	f.Add(realDevices)
	f.Add(block)
	f.Add(block + block)
	f.Add("I: \n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		devices, err := parseDevices(s)
		if err != nil {
			return
		}
		for _, d := range devices {
			if checkSysfs(d.sysfs) != nil {
				t.Fatalf("accepted sysfs %q", d.sysfs)
			}
			if !isInputName(d.sysfs[strings.LastIndexByte(d.sysfs, '/')+1:]) {
				t.Fatalf("sysfs %q does not end in inputN", d.sysfs)
			}
			if strings.Contains(d.name, "\n") {
				t.Fatalf("name %q holds a line break", d.name)
			}
		}
	})
}
