package cimd

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// target is where a checked client_id is fetched from.
type target struct {
	host string // a DNS name, lower case
	port uint16
}

// parseClientID checks the client_id URL the way the draft and MCP want it, on the string as
// given: it is compared byte for byte with the document's client_id later, so nothing here is
// normalised, and anything that would need normalising is refused instead.
func parseClientID(s string) (target, error) {
	bad := func(format string, args ...any) (target, error) {
		return target{}, refuse(ErrClientID, s, format, args...)
	}
	if len(s) > maxClientIDLen {
		return bad("it is %d bytes long; a client_id URL may have at most %d", len(s), maxClientIDLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return bad("it has a space, a control character or a character outside ASCII; the client must percent-encode its URL")
		}
	}
	if !strings.HasPrefix(s, "https://") {
		return bad("it must start with https:// (lower case)")
	}
	if strings.Contains(s, "#") {
		return bad("it has a fragment (#); a client_id URL must not")
	}
	if strings.Contains(s, "?") {
		return bad("it has a query (?); this cabinet accepts client_id URLs without one")
	}
	if strings.Contains(s, `\`) {
		return bad(`it has a backslash; a client_id URL must not`)
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("it is not a valid URL")
	}
	if u.User != nil {
		return bad("it has a user name or password; a client_id URL must not")
	}
	host, port, err := splitHost(u.Host)
	if err != nil {
		return bad("%s", err.Error())
	}
	if err := checkDNSName(host); err != nil {
		return bad("%s", err.Error())
	}
	// The path as written (url.Parse has refused a bad escape in it): with no query, fragment
	// or user info it is what follows the host, and the host is as written too.
	authority, path, _ := strings.Cut(s[len("https://"):], "/")
	if authority != u.Host {
		return bad("its host is not written plainly")
	}
	if path == "" {
		return bad("it has no path; a client_id URL names a document, such as https://%s/oauth/client.json", host)
	}
	for _, seg := range strings.Split(path, "/") {
		if isDotSegment(seg) {
			return bad(`it has a "." or ".." path segment; a client_id URL must not`)
		}
	}
	return target{host: host, port: port}, nil
}

// splitHost splits the URL's authority into a host name and a port (443 when none is written).
func splitHost(hostport string) (string, uint16, error) {
	if strings.HasPrefix(hostport, "[") {
		return "", 0, fmt.Errorf("its host is an IP address; a client_id URL must name its host")
	}
	host, portText, hasPort := strings.Cut(hostport, ":")
	if !hasPort {
		return host, 443, nil
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 || portText[0] == '0' || strings.ContainsAny(portText, "+-") {
		return "", 0, fmt.Errorf("its port %s is not a port number from 1 to 65535", show(portText, 20))
	}
	return host, uint16(port), nil
}

// specialNames are domains that never name a public host (RFC 6761, RFC 8375, RFC 9476, and
// names home routers answer for).
var specialNames = []string{"localhost", "local", "internal", "home.arpa", "lan", "onion", "test", "invalid", "example", "alt", "arpa"}

// checkDNSName accepts a lower-case DNS host name that is not an IP address in any spelling and
// not under a special-use domain.
func checkDNSName(host string) error {
	if host == "" {
		return fmt.Errorf("it has no host")
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return fmt.Errorf("its host is an IP address; a client_id URL must name its host")
	}
	if len(host) > 253 {
		return fmt.Errorf("its host name is longer than 253 characters")
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return fmt.Errorf("its host %s is not a public host name (it has no dot)", show(host, 64))
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("its host %s is not a valid host name", show(host, 64))
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if c >= 'A' && c <= 'Z' {
				return fmt.Errorf("its host %s has capital letters; the client must write it in lower case, as its document's client_id does", show(host, 64))
			}
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("its host %s is not a valid host name", show(host, 64))
			}
		}
	}
	// An all-digit last label makes browsers read the name as an IPv4 address (0x7f.1, 2130706433).
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" {
		return fmt.Errorf("its host %s reads as an IP address", show(host, 64))
	}
	for _, name := range specialNames {
		if host == name || strings.HasSuffix(host, "."+name) {
			return fmt.Errorf("its host %s is under .%s, which is never a public host", show(host, 64), name)
		}
	}
	return nil
}

// isDotSegment reports whether a path segment means "." or "..", percent-encoded or not.
func isDotSegment(seg string) bool {
	s := strings.ReplaceAll(strings.ToLower(seg), "%2e", ".")
	return s == "." || s == ".."
}

// allow checks host against the Fetcher's list.
func (f *Fetcher) allow(clientID, host string) error {
	if f.anyHost || f.hosts[host] {
		return nil
	}
	return refuse(ErrHost, clientID, "%s is not among the client hosts this cabinet fetches metadata from (%s); add it to the cabinet's allowed client hosts if you trust that client",
		show(host, 64), strings.Join(f.hostList, ", "))
}
