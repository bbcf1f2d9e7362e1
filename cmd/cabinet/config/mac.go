package config

import (
	"errors"
	"os"
	"strings"
)

// isMAC says s is a MAC address as the device block carries it:
// aa:bb:cc:dd:ee:ff, lower case (no regexp: nothing is compiled at init,
// the hook starts on every ES event).
func isMAC(s string) bool {
	if len(s) != 17 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CabinetMAC returns the MAC address kept in the state dir, "" when none is
// kept yet or the file does not hold one. It never writes.
func (c *Config) CabinetMAC() string {
	b, err := os.ReadFile(c.Layout().MAC())
	if err != nil || len(b) > 64 {
		return ""
	}
	if mac := strings.TrimSpace(string(b)); isMAC(mac) {
		return mac
	}
	return ""
}

// EnsureCabinetMAC returns the kept MAC address, choosing it the first time
// with detect (the default route's interface) and keeping it, so that the
// hook and the daemon always publish the same device block, whatever
// interface routes later. Only a kept address is returned: when detect
// finds none (no network yet at boot) or it cannot be kept (a full disk),
// the answer is "" and the next call tries again — a device block that
// changed at every run would make every hook rewrite the discovery.
func (c *Config) EnsureCabinetMAC(detect func() (string, error)) string {
	if mac := c.CabinetMAC(); mac != "" {
		return mac
	}
	mac, err := detect()
	if err != nil || !isMAC(mac) {
		return ""
	}
	if err := os.MkdirAll(c.StatePath(), 0o755); err != nil {
		return ""
	}
	tmp, err := os.CreateTemp(c.StatePath(), ".mac-*")
	if err != nil {
		return ""
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(mac + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	// Link, not rename: a hook that chose first keeps its choice.
	if err == nil {
		if lerr := os.Link(tmp.Name(), c.Layout().MAC()); lerr != nil && !errors.Is(lerr, os.ErrExist) {
			os.Rename(tmp.Name(), c.Layout().MAC())
		}
	}
	return c.CabinetMAC()
}
