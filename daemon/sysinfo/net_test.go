package sysinfo

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
)

const routeHeader = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT                                                       \n"

// row4 is one /proc/net/route line as the kernel pads it.
func row4(iface, dest, flags, metric, mask string) string {
	return iface + "\t" + dest + "\t010200C0\t" + flags + "\t0\t0\t" + metric + "\t" + mask + "\t0\t0\t0                                                                               \n"
}

// row6 is one /proc/net/ipv6_route line.
func row6(dest, plen, metric, flags, dev string) string {
	zero := strings.Repeat("0", 32)
	return dest + " " + plen + " " + zero + " 00 " + zero + " " + metric + " 00000001 00000000 " + flags + " " + dev + "\n"
}

var (
	zero6 = strings.Repeat("0", 32)
	ula6  = "fd000000000000000000000000000000"
)

func TestDefaultInterface(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
		err   string // substring; "" means success
	}{
		{"this machine's shape", map[string]string{
			"net/route": routeHeader + row4("eth0", "00000000", "0003", "0", "00000000") +
				row4("eth0", "000200C0", "0001", "0", "00FFFFFF"),
		}, "eth0", ""},
		{"lowest metric wins", map[string]string{
			"net/route": routeHeader + row4("wlan0", "00000000", "0003", "600", "00000000") +
				row4("eth0", "00000000", "0003", "100", "00000000"),
		}, "eth0", ""},
		{"tie: first listed", map[string]string{
			"net/route": routeHeader + row4("wlan0", "00000000", "0003", "100", "00000000") +
				row4("eth0", "00000000", "0003", "100", "00000000"),
		}, "wlan0", ""},
		{"metric above 2^31 printed negative", map[string]string{
			"net/route": routeHeader + row4("wlan0", "00000000", "0003", "-2", "00000000") +
				row4("eth0", "00000000", "0003", "7", "00000000"),
		}, "eth0", ""},
		{"down route skipped", map[string]string{
			"net/route": routeHeader + row4("eth1", "00000000", "0002", "0", "00000000") +
				row4("eth0", "00000000", "0003", "50", "00000000"),
		}, "eth0", ""},
		{"reject route skipped", map[string]string{
			"net/route": routeHeader + row4("lo", "00000000", "0201", "0", "00000000") +
				row4("eth0", "00000000", "0003", "50", "00000000"),
		}, "eth0", ""},
		{"dest 0 with a mask is not default", map[string]string{
			"net/route": routeHeader + row4("eth0", "00000000", "0001", "0", "000000FF"),
		}, "", "no default route"},
		{"ipv6 fallback", map[string]string{
			"net/route": routeHeader + row4("eth0", "000200C0", "0001", "0", "00FFFFFF"),
			"net/ipv6_route": row6(ula6, "40", "00000100", "00000001", "eth0") +
				row6(zero6, "00", "00000400", "00000003", "eth0") +
				row6(zero6, "00", "ffffffff", "00200200", "lo"),
		}, "eth0", ""},
		{"ipv6 lowest metric", map[string]string{
			"net/ipv6_route": row6(zero6, "00", "00000400", "00000003", "wlan0") +
				row6(zero6, "00", "00000100", "00000003", "eth0"),
		}, "eth0", ""},
		{"ipv6 unreachable only", map[string]string{
			"net/route":      routeHeader,
			"net/ipv6_route": row6(zero6, "00", "ffffffff", "00200200", "lo"),
		}, "", "no default route"},
		{"no routes at all", map[string]string{"net/route": routeHeader, "net/ipv6_route": ""}, "", "no default route"},
		{"no ipv6 in kernel", map[string]string{"net/route": routeHeader}, "", "no default route"},
		{"no proc", map[string]string{}, "", "mounted proc"},
		{"header without Mask", map[string]string{
			"net/route": "Iface\tDestination\tFlags\tMetric\neth0\t00000000\t0003\t0\n",
		}, "", "no Mask column"},
		{"short row", map[string]string{"net/route": routeHeader + "eth0\t00000000\n"}, "", "fields"},
		{"bad hex", map[string]string{"net/route": routeHeader + row4("eth0", "0000000G", "0003", "0", "00000000")}, "", "hex"},
		{"bad metric", map[string]string{"net/route": routeHeader + row4("eth0", "00000000", "0003", "x", "00000000")}, "", "metric"},
		{"path in iface name", map[string]string{"net/route": routeHeader + row4("../..", "00000000", "0003", "0", "00000000")}, "", ".."},
		{"ipv6 garbage", map[string]string{"net/route": routeHeader, "net/ipv6_route": "hello\n"}, "", "fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultInterface(procWith(t, tt.files))
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("DefaultInterface = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("DefaultInterface = %q, %v; want an error containing %q", got, err, tt.err)
			}
		})
	}
}

func TestNoDefaultRouteIsSentinel(t *testing.T) {
	_, err := DefaultInterface(procWith(t, map[string]string{"net/route": routeHeader}))
	if !errors.Is(err, ErrNoDefaultRoute) {
		t.Fatalf("got %v, want ErrNoDefaultRoute", err)
	}
}

func TestMACAddress(t *testing.T) {
	tests := []struct {
		name, iface, body, want string
		ok                      bool
	}{
		{"kernel file", "eth0", "02:fc:00:00:00:01\n", "02:fc:00:00:00:01", true},
		{"lowercased", "eth0", "DC:A6:32:0A:BB:CC\n", "dc:a6:32:0a:bb:cc", true},
		{"no newline", "eth0", "dc:a6:32:0a:bb:cc", "dc:a6:32:0a:bb:cc", true},
		{"all zero (lo)", "lo", "00:00:00:00:00:00\n", "", false},
		{"broadcast", "eth0", "FF:FF:FF:FF:FF:FF\n", "", false},
		{"infiniband length", "ib0", "80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:bb:cc\n", "", false},
		{"dashes", "eth0", "dc-a6-32-0a-bb-cc\n", "", false},
		{"not hex", "eth0", "dc:a6:32:0a:bb:zz\n", "", false},
		{"two newlines", "eth0", "dc:a6:32:0a:bb:cc\n\n", "", false},
		{"empty", "eth0", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := procWith(t, map[string]string{"class/net/" + tt.iface + "/address": tt.body})
			got, err := MACAddress(sys, tt.iface)
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("MACAddress(%q) = %q, %v; want %q, ok %v", tt.body, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestInterfaceNameValidated(t *testing.T) {
	sys := procWith(t, map[string]string{"address": "dc:a6:32:0a:bb:cc\n"})
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "a..b", "sixteen-bytes-xx", "eth 0", "eth0\n", "eth:0", "a\x00"} {
		if _, err := MACAddress(sys, bad); err == nil {
			t.Errorf("MACAddress(%q) gave no error", bad)
		}
		if _, err := IPAddress(bad, func(string) ([]net.Addr, error) { t.Fatal("lookup called"); return nil, nil }); err == nil {
			t.Errorf("IPAddress(%q) gave no error", bad)
		}
	}
	for _, good := range []string{"eth0", "wlan0", "enp0s31f6", "br-lan.10", "fifteen-bytes-x"} {
		if err := checkInterfaceName(good); err != nil {
			t.Errorf("checkInterfaceName(%q) = %v", good, err)
		}
	}
}

func TestIPAddress(t *testing.T) {
	ipnet := func(s string) net.Addr {
		ip, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		return n
	}
	tests := []struct {
		name  string
		addrs []net.Addr
		want  string
	}{
		{"this machine's eth0", []net.Addr{ipnet("192.0.2.2/24"), ipnet("fd00::2/64"), ipnet("fe80::fc:ff:fe00:1/64")}, "192.0.2.2"},
		{"ipv4 after ipv6 still wins", []net.Addr{ipnet("2001:db8::1/64"), ipnet("192.168.1.20/24")}, "192.168.1.20"},
		{"first ipv4", []net.Addr{ipnet("10.0.0.5/8"), ipnet("10.0.0.6/8")}, "10.0.0.5"},
		{"ipv6 only", []net.Addr{ipnet("fe80::1/64"), ipnet("2001:db8::7/64"), ipnet("2001:db8::8/64")}, "2001:db8::7"},
		{"loopback and link-local skipped", []net.Addr{ipnet("127.0.0.1/8"), ipnet("169.254.3.4/16"), ipnet("::1/128"), ipnet("192.168.0.9/24")}, "192.168.0.9"},
		{"IPAddr type", []net.Addr{&net.IPAddr{IP: net.ParseIP("192.168.0.10")}}, "192.168.0.10"},
		{"4-in-6 form", []net.Addr{&net.IPAddr{IP: net.ParseIP("::ffff:192.168.0.11")}}, "192.168.0.11"},
		{"nothing usable", []net.Addr{ipnet("127.0.0.1/8"), ipnet("fe80::1/64"), &net.UnixAddr{Name: "x"}}, ""},
		{"no addresses", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := IPAddress("eth0", func(iface string) ([]net.Addr, error) {
				if iface != "eth0" {
					t.Errorf("lookup of %q, want eth0", iface)
				}
				return tt.addrs, nil
			})
			if tt.want == "" {
				if err == nil {
					t.Fatalf("IPAddress = %v, want an error", got)
				}
				return
			}
			if err != nil || got != netip.MustParseAddr(tt.want) {
				t.Fatalf("IPAddress = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
	boom := errors.New("boom")
	if _, err := IPAddress("eth0", func(string) ([]net.Addr, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("lookup failure: got %v, want it wrapped", err)
	}
}

// TestRealNetwork runs the chain the daemon runs on this machine's /proc,
// /sys and interfaces. A machine without a default route is fine; one with
// a route must then yield a MAC and an address.
func TestRealNetwork(t *testing.T) {
	if _, err := os.Stat("/proc/net/route"); err != nil {
		t.Skip("no /proc/net/route here")
	}
	iface, err := DefaultInterface("/proc")
	if errors.Is(err, ErrNoDefaultRoute) {
		t.Skip("this machine has no default route")
	}
	if err != nil {
		t.Fatalf("DefaultInterface(/proc) = %v", err)
	}
	if _, err := net.InterfaceByName(iface); err != nil {
		t.Fatalf("default interface %q is not an interface: %v", iface, err)
	}
	if mac, err := MACAddress("/sys", iface); err != nil {
		t.Logf("MACAddress(/sys, %s): %v (tunnels have none)", iface, err)
	} else if len(mac) != 17 {
		t.Errorf("MACAddress(/sys, %s) = %q", iface, mac)
	}
	ip, err := IPAddress(iface, InterfaceAddrs)
	if err != nil || !ip.IsGlobalUnicast() {
		t.Errorf("IPAddress(%s) = %v, %v", iface, ip, err)
	}
	if _, err := MACAddress("/sys", "lo"); err == nil {
		t.Error("MACAddress(/sys, lo) accepted the all-zero address")
	}
}
