package cimd

import (
	"net/netip"
	"strings"
	"testing"
)

func TestNonPublic(t *testing.T) {
	for _, c := range []struct {
		addr string
		why  string // "": public; else a word of the reason
	}{
		{"160.79.104.10", ""},
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"100.63.255.255", ""},
		{"100.128.0.1", ""},
		{"172.15.255.255", ""},
		{"172.32.0.1", ""},
		{"192.169.0.1", ""},
		{"198.17.255.255", ""},
		{"198.20.0.1", ""},
		{"223.255.255.255", ""},
		{"2606:4700::6810:84e5", ""},
		{"2607:6bc0::10", ""},
		{"2a00:1450:4007:80e::200e", ""},
		{"::ffff:160.79.104.10", ""},
		{"64:ff9b::a04f:680a", ""}, // NAT64 of 160.79.104.10: an IPv6-only home network reaches claude.ai so
		{"2002:a04f:680a::1", ""},  // 6to4 of 160.79.104.10

		{"0.0.0.0", "this network"},
		{"0.1.2.3", "this network"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"100.64.0.1", "carrier-grade"},
		{"100.127.255.255", "carrier-grade"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"169.254.169.254", "link-local"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.0.0.8", "IETF protocol"},
		{"192.0.0.170", "IETF protocol"},
		{"192.0.2.1", "documentation"},
		{"192.31.196.1", "AS112"},
		{"192.52.193.1", "AMT"},
		{"192.88.99.1", "6to4 relay"},
		{"192.168.1.1", "private"},
		{"192.175.48.1", "AS112"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"224.0.0.251", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "broadcast"},

		{"::", "unspecified"},
		{"::1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::10.0.0.1", "IPv4-compatible"},
		{"::ffff:0:a00:1", "reserved"}, // SIIT IPv4-translated
		{"64:ff9b::10.0.0.1", "NAT64 address of a private"},
		{"64:ff9b::127.0.0.1", "NAT64 address of a loopback"},
		{"64:ff9b::169.254.169.254", "NAT64 address of a link-local"},
		{"64:ff9b:1::a04f:680a", "local-use NAT64"},
		{"2002:0a00:0001::1", "6to4 address of a private"},
		{"2002:7f00:0001::1", "6to4 address of a loopback"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"2001:2::1", "benchmarking"},
		{"2001:db8::1", "documentation"},
		{"2001:1::1", "IETF protocol"},
		{"2001:20::1", "IETF protocol"},
		{"2620:4f:8000::1", "AS112"},
		{"3fff::1", "documentation"},
		{"100::1", "discard-only"},
		{"fc00::1", "unique local"},
		{"fd00::1", "unique local"},
		{"fdff:ffff::1", "unique local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "scoped"},
		{"febf::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"ff0e::1", "multicast"},
		{"4000::1", "reserved"},
		{"1::1", "reserved"},
	} {
		a := netip.MustParseAddr(c.addr)
		got := nonPublic(a)
		switch {
		case c.why == "" && got != "":
			t.Errorf("nonPublic(%s) = %q, want it public", c.addr, got)
		case c.why != "" && !strings.Contains(got, c.why):
			t.Errorf("nonPublic(%s) = %q, want it refused as %q", c.addr, got, c.why)
		}
	}
	if got := nonPublic(netip.Addr{}); got == "" {
		t.Error("nonPublic(zero Addr) is public")
	}
}
