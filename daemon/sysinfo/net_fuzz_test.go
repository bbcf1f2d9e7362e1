package sysinfo

import (
	"strings"
	"testing"
)

// FuzzParseRoute4: never panics; every default route returned has a valid
// interface name.
func FuzzParseRoute4(f *testing.F) {
	f.Add(routeHeader + row4("eth0", "00000000", "0003", "0", "00000000"))
	f.Add(routeHeader + row4("*", "00000000", "0003", "0", "00000000"))
	f.Add("Iface Destination Flags Metric Mask\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		routes, err := parseRoute4(s)
		if err != nil {
			return
		}
		for _, r := range routes {
			if checkInterfaceName(r.iface) != nil {
				t.Fatalf("parseRoute4(%q) returned interface %q", s, r.iface)
			}
		}
	})
}

// FuzzParseRoute6: as FuzzParseRoute4, for ipv6_route.
func FuzzParseRoute6(f *testing.F) {
	f.Add(row6(zero6, "00", "00000400", "00000003", "eth0"))
	f.Add(row6(zero6, "00", "ffffffff", "00200200", "lo"))
	f.Add(strings.Repeat("0 ", 9) + "eth0\n")
	f.Fuzz(func(t *testing.T, s string) {
		routes, err := parseRoute6(s)
		if err != nil {
			return
		}
		for _, r := range routes {
			if checkInterfaceName(r.iface) != nil {
				t.Fatalf("parseRoute6(%q) returned interface %q", s, r.iface)
			}
		}
	})
}

// FuzzParseMAC: an accepted address is 17 lowercase characters, neither
// all-zero nor broadcast.
func FuzzParseMAC(f *testing.F) {
	for _, s := range []string{"02:fc:00:00:00:01\n", "00:00:00:00:00:00\n", "FF:FF:FF:FF:FF:FF", "::::::::::::::::\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mac, err := parseMAC(s)
		if err != nil {
			return
		}
		if len(mac) != 17 || mac != strings.ToLower(mac) || mac == "00:00:00:00:00:00" || mac == "ff:ff:ff:ff:ff:ff" {
			t.Fatalf("parseMAC(%q) = %q", s, mac)
		}
	})
}

// FuzzCheckInterfaceName: an accepted name is a safe single path element.
func FuzzCheckInterfaceName(f *testing.F) {
	for _, s := range []string{"eth0", "..", "a/b", "wlan0.1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkInterfaceName(s) != nil {
			return
		}
		if s == "" || len(s) > 15 || strings.ContainsAny(s, "/\x00") || strings.Contains(s, "..") {
			t.Fatalf("checkInterfaceName accepted %q", s)
		}
	})
}
