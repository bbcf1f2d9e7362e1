package sysinfo

import (
	"strings"
	"testing"
)

// FuzzParseUptime: never panics; an accepted uptime is non-negative and
// under the century cap.
func FuzzParseUptime(f *testing.F) {
	for _, s := range []string{"33552.09 46498.51\n", "0 0\n", "1e9 1\n", "-1 1\n", "99999999999.99 1\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseUptime(s)
		if err == nil && (d < 0 || d.Seconds() > maxUptimeSeconds+1) {
			t.Fatalf("parseUptime(%q) = %v", s, d)
		}
		if err != nil && d != 0 {
			t.Fatalf("parseUptime(%q) returned %v with error %v", s, d, err)
		}
	})
}

// FuzzParseLoadavg: an accepted load is finite and non-negative.
func FuzzParseLoadavg(f *testing.F) {
	for _, s := range []string{"0.25 0.06 0.07 6/135 18241\n", "NaN 0 0 1/1 1\n", "1 2 3 4/5 6\n", "1 2 3 4/ 6\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseLoadavg(s)
		if err == nil && !(l >= 0 && l < 1e13) {
			t.Fatalf("parseLoadavg(%q) = %v", s, l)
		}
	})
}

// FuzzParseMeminfo: an accepted file has a positive total and used ≤ total,
// and names both keys.
func FuzzParseMeminfo(f *testing.F) {
	f.Add(meminfoFixture)
	f.Add("MemTotal: 1 kB\nMemAvailable: 1 kB\n")
	f.Add("MemTotal: 1 kB\nMemAvailable: 2 kB\n")
	f.Add("MemTotal:\nMemAvailable: kB\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMeminfo(s)
		if err != nil {
			return
		}
		if m.Total == 0 || m.Used > m.Total || m.Total%1024 != 0 {
			t.Fatalf("parseMeminfo(%q) = %+v", s, m)
		}
		if !strings.Contains(s, "MemTotal:") || !strings.Contains(s, "MemAvailable:") {
			t.Fatalf("parseMeminfo(%q) accepted a file without both keys", s)
		}
	})
}
