package controllers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/fakeinput"
)

func ptr(n int) *int { return &n }

// describe prints pads for got/want messages.
func describe(pads []Pad) string {
	var b strings.Builder
	for _, p := range pads {
		bat := "none"
		if p.Battery != nil {
			bat = fmt.Sprint(*p.Battery)
		}
		fmt.Fprintf(&b, "{%s %q %s charging=%v} ", p.Key, p.Name, bat, p.Charging)
	}
	return b.String()
}

func samePads(a, b []Pad) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Key != y.Key || x.Name != y.Name || x.Charging != y.Charging || (x.Battery == nil) != (y.Battery == nil) ||
			(x.Battery != nil && *x.Battery != *y.Battery) {
			return false
		}
	}
	return true
}

// sysTree writes files (path → body) and symlinks (path → "@target")
// under dir.
func sysTree(t *testing.T, dir string, entries map[string]string) {
	t.Helper()
	for rel, body := range entries {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "@"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestScanRealShapes scans realDevices against a hand-built sys tree with
// the batteries of real drivers, the laptop battery that must not count,
// and a link out of the sys root that must not be followed.
func TestScanRealShapes(t *testing.T) {
	top := t.TempDir()
	sys := filepath.Join(top, "sys")
	const (
		bt  = "devices/pci0000:00/0000:00:14.0/usb1/1-5/1-5:1.0/bluetooth/hci0"
		ds  = bt + "/hci0:256/0005:054C:0CE6.0003"
		pro = bt + "/hci0:512/0005:057E:2009.0005"
		bat = "devices/LNXSYSTM:00/device:00/PNP0C0A:00"
	)
	sysTree(t, sys, map[string]string{
		// hid-playstation: capacity in percent, charging.
		ds + "/input/input20/name": "DualSense Wireless Controller\n",
		ds + "/input/input21/name": "DualSense Wireless Controller Motion Sensors\n",
		ds + "/power_supply/ps-controller-battery-e8:47:3a:11:22:33/capacity": "80\n",
		ds + "/power_supply/ps-controller-battery-e8:47:3a:11:22:33/status":   "Charging\n",
		ds + "/power_supply/ps-controller-battery-e8:47:3a:11:22:33/scope":    "Device\n",
		ds + "/power_supply/ps-controller-battery-e8:47:3a:11:22:33/type":     "Battery\n",
		ds + "/power_supply/ps-controller-battery-e8:47:3a:11:22:33/device":   "@../../../0005:054C:0CE6.0003",
		"class/power_supply/ps-controller-battery-e8:47:3a:11:22:33":          "@../../" + ds + "/power_supply/ps-controller-battery-e8:47:3a:11:22:33",
		// hid-nintendo: only capacity_level.
		pro + "/input/input24/name": "Nintendo Switch Pro Controller\n",
		pro + "/power_supply/nintendo_switch_controller_battery_0005:057E:2009.0005/capacity_level": "Normal\n",
		pro + "/power_supply/nintendo_switch_controller_battery_0005:057E:2009.0005/status":         "Discharging\n",
		pro + "/power_supply/nintendo_switch_controller_battery_0005:057E:2009.0005/scope":          "Device\n",
		pro + "/power_supply/nintendo_switch_controller_battery_0005:057E:2009.0005/device":         "@../../../0005:057E:2009.0005",
		"class/power_supply/nintendo_switch_controller_battery_0005:057E:2009.0005":                 "@../../" + pro + "/power_supply/nintendo_switch_controller_battery_0005:057E:2009.0005",
		// A System battery that (absurdly) parents the Xbox pad's input name.
		bat + "/input/input22/name":         "x\n",
		bat + "/power_supply/BAT0/capacity": "3\n",
		bat + "/power_supply/BAT0/scope":    "System\n",
		bat + "/power_supply/BAT0/device":   "@../../../PNP0C0A:00",
		"class/power_supply/BAT0":           "@../../" + bat + "/power_supply/BAT0",
		// Links out of the sys root, relative and absolute.
		"class/power_supply/escape":   "@../../../outside",
		"class/power_supply/absolute": "@" + filepath.Join(top, "outside"),
	})
	sysTree(t, top, map[string]string{
		"outside/device/input/input22/name": "x\n",
		"outside/capacity":                  "1\n",
		"outside/scope":                     "Device\n",
		"proc/bus/input/devices":            realDevices,
	})

	got, err := Scanner{InputDevices: filepath.Join(top, "proc/bus/input/devices"), Sys: sys}.Scan()
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	want := []Pad{
		{Key: "98:b6:e9:01:02:03", Name: "Nintendo Switch Pro Controller", Battery: ptr(50)},
		{Key: "e8:47:3a:11:22:33", Name: "DualSense Wireless Controller", Battery: ptr(80), Charging: true},
		{Key: "usb-0000:00:14.0-2/input0", Name: "Microsoft X-Box 360 pad"},
	}
	if !samePads(got, want) {
		t.Errorf("Scan:\n got %s\nwant %s", describe(got), describe(want))
	}
}

func TestLevelPercent(t *testing.T) {
	tests := []struct {
		level string
		want  int
		ok    bool
	}{
		{"Full", 100, true}, {"High", 75, true}, {"Normal", 50, true}, {"Low", 25, true},
		{"Critical", 5, true}, {"Unknown", 0, false}, {"full", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		if got, ok := levelPercent(tt.level); got != tt.want || ok != tt.ok {
			t.Errorf("levelPercent(%q) = %d, %v; want %d, %v", tt.level, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBatteryAttributes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  *int
		chg   bool
	}{
		{"capacity wins over level", map[string]string{"capacity": "42\n", "capacity_level": "Full\n"}, ptr(42), false},
		{"capacity 0", map[string]string{"capacity": "0\n"}, ptr(0), false},
		{"capacity 101 falls to level", map[string]string{"capacity": "101\n", "capacity_level": "Low\n"}, ptr(25), false},
		{"negative capacity", map[string]string{"capacity": "-5\n"}, nil, false},
		{"garbage capacity", map[string]string{"capacity": "lots\n"}, nil, false},
		{"unknown level", map[string]string{"capacity_level": "Unknown\n"}, nil, false},
		{"charging, no level", map[string]string{"status": "Charging\n"}, nil, true},
		{"full is not charging", map[string]string{"capacity": "100\n", "status": "Full\n"}, ptr(100), false},
		{"huge attribute", map[string]string{"capacity": strings.Repeat("9", 100)}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := t.TempDir()
			entries := map[string]string{
				"devices/hid/input/input5/name":     "p\n",
				"devices/hid/power_supply/b/device": "@../../../hid",
				"class/power_supply/b":              "@../../devices/hid/power_supply/b",
			}
			for k, v := range tt.files {
				entries["devices/hid/power_supply/b/"+k] = v
			}
			sysTree(t, sys, entries)
			got, ok := batteries(sys)["input5"]
			if !ok {
				t.Fatal("no battery found for input5")
			}
			if (got.percent == nil) != (tt.want == nil) || (got.percent != nil && *got.percent != *tt.want) || got.charging != tt.chg {
				t.Errorf("battery = %v charging %v; want %v charging %v", got.percent, got.charging, tt.want, tt.chg)
			}
		})
	}
}

func TestScanFake(t *testing.T) {
	in, err := fakeinput.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sc := Scanner{InputDevices: in.InputDevices(), Sys: in.Sys()}
	scan := func() []Pad {
		t.Helper()
		pads, err := sc.Scan()
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		return pads
	}

	if pads := scan(); len(pads) != 0 {
		t.Fatalf("empty fake: got %s, want no pads", describe(pads))
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(in.Connect("DualSense Wireless Controller", "e8:47:3a:00:00:02", 80))
	must(in.Connect("8BitDo \u202eSN30\u202c Pro\x07", "e4:17:d8:00:00:01", -1))
	p1 := scan()
	want := []Pad{
		{Key: "e4:17:d8:00:00:01", Name: "8BitDo SN30 Pro"},
		{Key: "e8:47:3a:00:00:02", Name: "DualSense Wireless Controller", Battery: ptr(80)},
	}
	if !samePads(p1, want) {
		t.Fatalf("two pads:\n got %s\nwant %s", describe(p1), describe(want))
	}

	must(in.SetBattery("e4:17:d8:00:00:01", 15))
	must(in.SetCharging("e8:47:3a:00:00:02", true))
	must(in.SetBattery("e8:47:3a:00:00:02", 81))
	p2 := scan()
	if *p2[0].Battery != 15 || *p2[1].Battery != 81 || !p2[1].Charging {
		t.Fatalf("after battery changes: %s", describe(p2))
	}
	if c, d := Changes(p1, p2); len(c)+len(d) != 0 {
		t.Errorf("battery changes gave connected %s, disconnected %s", describe(c), describe(d))
	}

	must(in.Disconnect("e8:47:3a:00:00:02"))
	must(in.Connect("Pro Controller", "98:b6:e9:00:00:03", 100))
	p3 := scan()
	c, d := Changes(p2, p3)
	if len(c) != 1 || c[0].Key != "98:b6:e9:00:00:03" || len(d) != 1 || d[0].Name != "DualSense Wireless Controller" {
		t.Errorf("Changes: connected %s, disconnected %s", describe(c), describe(d))
	}
	must(in.SetBattery("98:b6:e9:00:00:03", -1))
	if p := scan(); p[0].Battery != nil {
		t.Errorf("battery removed, still reported: %s", describe(p))
	}
}

func TestScanBounds(t *testing.T) {
	in, err := fakeinput.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxPads + 3 {
		if err := in.Connect("Pad", fmt.Sprintf("aa:bb:cc:dd:ee:%02x", i), -1); err != nil {
			t.Fatal(err)
		}
	}
	pads, err := Scanner{InputDevices: in.InputDevices(), Sys: in.Sys()}.Scan()
	if err != nil || len(pads) != maxPads {
		t.Fatalf("Scan of %d pads = %d pads, %v; want %d", maxPads+3, len(pads), err, maxPads)
	}

	dir := t.TempDir()
	huge := filepath.Join(dir, "devices")
	if err := os.WriteFile(huge, []byte(strings.Repeat(block, maxInputFile/len(block)+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Scanner{InputDevices: huge, Sys: dir}).Scan(); err == nil || !strings.Contains(err.Error(), "KiB") {
		t.Errorf("Scan of an oversized list: got %v, want a size error", err)
	}
}

func TestScanKeys(t *testing.T) {
	// Two joysticks without uniq sharing a phys, a third with neither
	// (sysfs then), and a uniq made of control characters (phys then).
	dev := func(phys, uniq string, n int) string {
		return "I: Bus=0003 Vendor=045e Product=028e Version=0114\nN: Name=\"P\"\nP: Phys=" + phys +
			"\nS: Sysfs=/devices/usb/input/input" + fmt.Sprint(n) + "\nU: Uniq=" + uniq + "\nH: Handlers=js" + fmt.Sprint(n) + "\n\n"
	}
	dir := t.TempDir()
	list := filepath.Join(dir, "devices")
	text := dev("usb-1/input0", "", 1) + dev("usb-1/input0", "", 2) + dev("", "", 3) + dev("usb-9/input0", "\x01\x02", 4)
	if err := os.WriteFile(list, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	pads, err := Scanner{InputDevices: list, Sys: dir}.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range pads {
		keys = append(keys, p.Key)
	}
	want := "/devices/usb/input/input3 usb-1/input0 usb-1/input0#2 usb-9/input0"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("keys = %q, want %q", got, want)
	}
}

func TestScanErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := (Scanner{InputDevices: filepath.Join(dir, "missing"), Sys: dir}).Scan(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing list: got %v, want a not-exist error", err)
	}
	if _, err := (Scanner{Sys: dir}).Scan(); err == nil {
		t.Error("no list path: no error")
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Scanner{InputDevices: empty}).Scan(); err == nil {
		t.Error("no sys dir: no error")
	}
	if pads, err := (Scanner{InputDevices: empty, Sys: filepath.Join(dir, "no-sys")}).Scan(); err != nil || len(pads) != 0 {
		t.Errorf("empty list = %s, %v; want zero pads", describe(pads), err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Scanner{InputDevices: garbage, Sys: dir}).Scan(); err == nil {
		t.Error("garbage list: no error")
	}
}

// TestScanConcurrentWithFake scans while the fake connects, recharges and
// disconnects pads: atomic writes mean no scan ever fails or sees a
// battery outside 0–100.
func TestScanConcurrentWithFake(t *testing.T) {
	in, err := fakeinput.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sc := Scanner{InputDevices: in.InputDevices(), Sys: in.Sys()}
	done := make(chan error, 1)
	go func() {
		for i := range 48 {
			uniq := fmt.Sprintf("aa:00:00:00:00:%02x", i%4)
			if err := in.Connect("Pad", uniq, i%101); err != nil {
				done <- err
				return
			}
			if err := in.SetBattery(uniq, (i+50)%101); err != nil {
				done <- err
				return
			}
			if i%4 == 3 {
				for j := range 4 {
					if err := in.Disconnect(fmt.Sprintf("aa:00:00:00:00:%02x", j)); err != nil {
						done <- err
						return
					}
				}
			}
		}
		done <- nil
	}()
	scans := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d scans during the changes", scans)
			return
		default:
		}
		pads, err := sc.Scan()
		if err != nil {
			t.Fatalf("scan %d during changes: %v", scans, err)
		}
		for _, p := range pads {
			if p.Battery != nil && (*p.Battery < 0 || *p.Battery > 100) {
				t.Fatalf("scan %d: battery %d", scans, *p.Battery)
			}
		}
		if len(pads) > 4 {
			t.Fatalf("scan %d: %d pads, at most 4 are connected", scans, len(pads))
		}
		scans++
	}
}

// TestScanThisMachine scans the real /proc/bus/input/devices and /sys:
// a machine without pads (a server, a container) is zero pads, not an
// error.
func TestScanThisMachine(t *testing.T) {
	sc := System()
	if _, err := os.Stat(sc.InputDevices); err != nil {
		t.Skipf("no input devices list here: %v", err)
	}
	pads, err := sc.Scan()
	if err != nil {
		t.Fatalf("Scan of this machine: %v", err)
	}
	t.Logf("this machine has %d pads: %s", len(pads), describe(pads))
	for _, p := range pads {
		if p.Key == "" || (p.Battery != nil && (*p.Battery < 0 || *p.Battery > 100)) {
			t.Errorf("implausible pad %s", describe([]Pad{p}))
		}
	}
}

func TestChanges(t *testing.T) {
	a, b, c := Pad{Key: "a"}, Pad{Key: "b", Battery: ptr(5)}, Pad{Key: "c"}
	bLow := Pad{Key: "b", Battery: ptr(1)}
	tests := []struct {
		name          string
		before, after []Pad
		conn, disc    string
	}{
		{"nothing", nil, nil, "", ""},
		{"first scan", nil, []Pad{a, b}, "a b", ""},
		{"all gone", []Pad{a, b}, nil, "", "a b"},
		{"swap", []Pad{a, b}, []Pad{b, c}, "c", "a"},
		{"battery only", []Pad{b}, []Pad{bLow}, "", ""},
	}
	keys := func(pads []Pad) string {
		var k []string
		for _, p := range pads {
			k = append(k, p.Key)
		}
		return strings.Join(k, " ")
	}
	for _, tt := range tests {
		conn, disc := Changes(tt.before, tt.after)
		if keys(conn) != tt.conn || keys(disc) != tt.disc {
			t.Errorf("%s: connected %q, disconnected %q; want %q, %q", tt.name, keys(conn), keys(disc), tt.conn, tt.disc)
		}
	}
}
