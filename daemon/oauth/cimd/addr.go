package cimd

import "net/netip"

// block is a range of special-use addresses and what to call it in an error.
type block struct {
	prefix netip.Prefix
	what   string
}

func blocks(pairs ...string) []block {
	b := make([]block, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		b = append(b, block{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return b
}

// The IANA special-purpose registries (RFC 6890 and its updates), whole: an entry the registry
// calls globally reachable (AS112, AMT, the 6to4 relay) is still no place for a client's
// metadata, and a smaller list is easier to trust. A more specific range comes first, for the
// error's name.
var (
	special4 = blocks(
		"0.0.0.0/8", "a \"this network\" address",
		"10.0.0.0/8", "a private network address",
		"100.64.0.0/10", "a carrier-grade NAT address",
		"127.0.0.0/8", "a loopback address",
		"169.254.0.0/16", "a link-local address",
		"172.16.0.0/12", "a private network address",
		"192.0.0.0/24", "an IETF protocol address",
		"192.0.2.0/24", "a documentation address",
		"192.31.196.0/24", "an AS112 address",
		"192.52.193.0/24", "an AMT address",
		"192.88.99.0/24", "a 6to4 relay address",
		"192.168.0.0/16", "a private network address",
		"192.175.48.0/24", "an AS112 address",
		"198.18.0.0/15", "a benchmarking address",
		"198.51.100.0/24", "a documentation address",
		"203.0.113.0/24", "a documentation address",
		"224.0.0.0/4", "a multicast address",
		"255.255.255.255/32", "the broadcast address",
		"240.0.0.0/4", "a reserved address",
	)
	// Outside 2000::/3 nothing is public; these only name what an address is.
	special6Outside = blocks(
		"::/128", "the unspecified address",
		"::1/128", "a loopback address",
		"::/96", "an IPv4-compatible address",
		"64:ff9b:1::/48", "a local-use NAT64 address",
		"100::/64", "a discard-only address",
		"fc00::/7", "a unique local (private network) address",
		"fe80::/10", "a link-local address",
		"fec0::/10", "a site-local address",
		"ff00::/8", "a multicast address",
	)
	special6Global = blocks(
		"2001::/32", "a Teredo address",
		"2001:2::/48", "a benchmarking address",
		"2001:db8::/32", "a documentation address",
		"2001::/23", "an IETF protocol address",
		"2620:4f:8000::/48", "an AS112 address",
		"3fff::/20", "a documentation address",
	)
	global6 = netip.MustParsePrefix("2000::/3")
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
)

// nonPublic says what a is when it is not a public unicast address, and "" when it is.
// Addresses that carry an IPv4 address (IPv4-mapped, NAT64's well-known prefix, 6to4) are judged
// by the address they carry, since that is where a connection ends up.
func nonPublic(a netip.Addr) string {
	if !a.IsValid() {
		return "not an address"
	}
	if a.Zone() != "" {
		return "a scoped address"
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is4() {
		return lookup(special4, a)
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		if why := nonPublic(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
			return "a NAT64 address of " + why
		}
		return ""
	case sixTo4.Contains(a):
		if why := nonPublic(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
			return "a 6to4 address of " + why
		}
		return ""
	case !global6.Contains(a):
		if why := lookup(special6Outside, a); why != "" {
			return why
		}
		return "a reserved address"
	}
	return lookup(special6Global, a)
}

func lookup(bs []block, a netip.Addr) string {
	for _, b := range bs {
		if b.prefix.Contains(a) {
			return b.what
		}
	}
	return ""
}
