package sysinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoDefaultRoute is DefaultInterface's answer when the machine has no
// usable default route (cable out, Wi-Fi not joined).
var ErrNoDefaultRoute = errors.New("no default route")

// Route flags from <linux/route.h>; the IPv6 file uses the same values.
const (
	rtfUp     = 0x0001
	rtfReject = 0x0200 // unreachable/prohibit routes: listed, never used
)

// routeFileLimit bounds the route tables read; a cabinet has a handful of
// routes, each line 128 bytes in /proc/net/route and 150 in ipv6_route.
const routeFileLimit = 256 << 10

// DefaultInterface is the interface of the IPv4 default route in
// <procDir>/net/route (destination and mask 0, up, not a reject route; the
// lowest metric wins, the first listed on a tie), else of the IPv6 default
// route ::/0 in <procDir>/net/ipv6_route. With neither it returns
// ErrNoDefaultRoute.
func DefaultInterface(procDir string) (string, error) {
	iface, err4 := defaultFrom(procDir, "net/route", parseRoute4)
	if err4 == nil {
		return iface, nil
	}
	if !errors.Is(err4, ErrNoDefaultRoute) && !errors.Is(err4, fs.ErrNotExist) {
		return "", err4
	}
	iface, err6 := defaultFrom(procDir, "net/ipv6_route", parseRoute6)
	switch {
	case err6 == nil:
		return iface, nil
	case errors.Is(err4, fs.ErrNotExist) && errors.Is(err6, fs.ErrNotExist):
		return "", fmt.Errorf("%w (is %s a mounted proc?)", err4, procDir)
	case errors.Is(err6, ErrNoDefaultRoute), errors.Is(err6, fs.ErrNotExist):
		return "", ErrNoDefaultRoute
	}
	return "", err6
}

type route struct {
	iface  string
	metric uint32
}

func defaultFrom(procDir, name string, parse func(string) ([]route, error)) (string, error) {
	s, err := readProc(procDir, name, routeFileLimit)
	if err != nil {
		return "", err
	}
	routes, err := parse(s)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", filepath.Join(procDir, name), err)
	}
	if len(routes) == 0 {
		return "", ErrNoDefaultRoute
	}
	best := routes[0]
	for _, r := range routes[1:] {
		if r.metric < best.metric {
			best = r
		}
	}
	return best.iface, nil
}

// parseRoute4 returns the usable default routes of /proc/net/route, whose
// header names the columns ("Iface\tDestination\tGateway \tFlags\t…"), and
// whose rows the kernel writes as "%s\t%08X\t%08X\t%04X\t%d\t%u\t%d\t%08X…".
func parseRoute4(s string) ([]route, error) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	header := strings.Fields(lines[0])
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"Iface", "Destination", "Flags", "Metric", "Mask"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("header has no %s column", need)
		}
	}
	var routes []route
	for n, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) != len(header) {
			return nil, fmt.Errorf("line %d: %d fields, header has %d", n+2, len(f), len(header))
		}
		dest, err1 := hexField(f[col["Destination"]], 8)
		mask, err2 := hexField(f[col["Mask"]], 8)
		flags, err3 := hexField(f[col["Flags"]], 4)
		metric, err4 := metricField(f[col["Metric"]])
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+2, err)
		}
		iface := f[col["Iface"]]
		if iface == "*" { // a route without a device (blackhole): never the way out
			continue
		}
		if err := checkInterfaceName(iface); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+2, err)
		}
		if dest == 0 && mask == 0 && flags&rtfUp != 0 && flags&rtfReject == 0 {
			routes = append(routes, route{iface, metric})
		}
	}
	return routes, nil
}

// metricField reads the IPv4 metric. The kernel prints the u32 priority
// with %d, so one above 2^31 shows as negative; both forms are accepted.
func metricField(s string) (uint32, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < -1<<31 || v > 1<<32-1 {
		return 0, fmt.Errorf("metric %q is not a 32-bit number", truncate(s))
	}
	return uint32(v), nil
}

// parseRoute6 returns the usable default routes of /proc/net/ipv6_route:
// headerless rows of destination, prefix length, source, source prefix
// length, next hop, metric, refcount, use, flags (all hex) and device.
func parseRoute6(s string) ([]route, error) {
	body := strings.TrimSuffix(s, "\n")
	if body == "" {
		return nil, nil
	}
	var routes []route
	for n, line := range strings.Split(body, "\n") {
		f := strings.Fields(line)
		if len(f) != 10 {
			return nil, fmt.Errorf("line %d: %d fields, want 10", n+1, len(f))
		}
		var errs []error
		for _, i := range []int{0, 2, 4} {
			_, err := hexField(f[i], 32)
			errs = append(errs, err)
		}
		plen, err1 := hexField(f[1], 2)
		splen, err2 := hexField(f[3], 2)
		metric, err3 := hexField(f[5], 8)
		flags, err4 := hexField(f[8], 8)
		if err := errors.Join(append(errs, err1, err2, err3, err4)...); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if err := checkInterfaceName(f[9]); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		// A source-specific default (splen ≠ 0) only serves some sources.
		if f[0] == strings.Repeat("0", 32) && plen == 0 && splen == 0 &&
			flags&rtfUp != 0 && flags&rtfReject == 0 {
			routes = append(routes, route{f[9], uint32(metric)})
		}
	}
	return routes, nil
}

// hexField reads exactly width hex digits (32 of them only checked: the
// value of an IPv6 address is compared as text).
func hexField(s string, width int) (uint64, error) {
	if len(s) != width {
		return 0, fmt.Errorf("%q: want %d hex digits", truncate(s), width)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return 0, fmt.Errorf("%q: want %d hex digits", truncate(s), width)
		}
	}
	if width > 16 {
		return 0, nil
	}
	return strconv.ParseUint(s, 16, 64)
}

// checkInterfaceName refuses a name that could not be a Linux interface
// (the kernel's dev_valid_name: at most IFNAMSIZ−1 = 15 bytes, no '/', ':'
// or blanks, not "." or "..") or that would climb out of a directory once
// joined to a path.
func checkInterfaceName(name string) error {
	switch {
	case name == "":
		return errors.New("empty interface name")
	case len(name) > 15:
		return fmt.Errorf("interface name %q is longer than 15 bytes", truncate(name))
	case name == "." || name == ".." || strings.Contains(name, ".."):
		return fmt.Errorf("interface name %q contains ..", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '/' || c == ':' || c <= ' ' || c == 0x7f {
			return fmt.Errorf("interface name %q has a '/', ':', blank or control byte", name)
		}
	}
	return nil
}

// MACAddress is the hardware address of iface from
// <sysDir>/class/net/<iface>/address, lowercased. It refuses what is not
// six colon-separated hex bytes, and the all-zero (loopback, some tunnels)
// and broadcast addresses, which identify no machine.
func MACAddress(sysDir, iface string) (string, error) {
	if sysDir == "" {
		return "", errors.New("no sys dir configured: pass \"/sys\"")
	}
	if err := checkInterfaceName(iface); err != nil {
		return "", fmt.Errorf("mac address: %w", err)
	}
	path := filepath.Join(sysDir, "class", "net", iface, "address")
	s, err := ReadSmall(path, 64)
	if err != nil {
		return "", fmt.Errorf("mac address of %s: %w", iface, err)
	}
	mac, err := parseMAC(s)
	if err != nil {
		return "", fmt.Errorf("mac address of %s: %w", iface, err)
	}
	return mac, nil
}

// parseMAC reads "02:fc:00:00:00:01\n".
func parseMAC(s string) (string, error) {
	mac := strings.ToLower(strings.TrimSuffix(s, "\n"))
	if len(mac) != 17 {
		return "", fmt.Errorf("%q is not six colon-separated hex bytes", truncate(s))
	}
	for i := 0; i < len(mac); i++ {
		c := mac[i]
		if i%3 == 2 {
			if c != ':' {
				return "", fmt.Errorf("%q is not six colon-separated hex bytes", truncate(s))
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("%q is not six colon-separated hex bytes", truncate(s))
		}
	}
	switch mac {
	case "00:00:00:00:00:00":
		return "", errors.New("the address is all zeros: use the interface of the default route")
	case "ff:ff:ff:ff:ff:ff":
		return "", errors.New("the address is the broadcast address: use the interface of the default route")
	}
	return mac, nil
}

// AddrsFunc lists the addresses of an interface. InterfaceAddrs is the
// machine's; tests pass their own.
type AddrsFunc func(iface string) ([]net.Addr, error)

// InterfaceAddrs lists the addresses of a network interface of this machine.
func InterfaceAddrs(iface string) ([]net.Addr, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, err
	}
	return ifi.Addrs()
}

// IPAddress is the first global unicast IPv4 address of iface, else its
// first global unicast IPv6 one. "Global unicast" is netip's: it includes
// private (10/8, 192.168/16) and unique-local (fd00::/8) addresses, which are
// what a cabinet on a home network has, and excludes loopback, link-local
// and multicast.
func IPAddress(iface string, addrs AddrsFunc) (netip.Addr, error) {
	if err := checkInterfaceName(iface); err != nil {
		return netip.Addr{}, fmt.Errorf("ip address: %w", err)
	}
	list, err := addrs(iface)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("addresses of %s: %w", iface, err)
	}
	var v6 netip.Addr
	for _, a := range list {
		ip, ok := addrOf(a)
		if !ok || !ip.IsGlobalUnicast() {
			continue
		}
		if ip.Is4() {
			return ip, nil
		}
		if !v6.IsValid() {
			v6 = ip
		}
	}
	if v6.IsValid() {
		return v6, nil
	}
	return netip.Addr{}, fmt.Errorf("%s has no global unicast address: check its network connection", iface)
}

// addrOf unwraps the address types net.Interface.Addrs returns.
func addrOf(a net.Addr) (netip.Addr, bool) {
	var ip net.IP
	switch v := a.(type) {
	case *net.IPNet:
		ip = v.IP
	case *net.IPAddr:
		ip = v.IP
	default:
		return netip.Addr{}, false
	}
	addr, ok := netip.AddrFromSlice(ip)
	return addr.Unmap(), ok
}
