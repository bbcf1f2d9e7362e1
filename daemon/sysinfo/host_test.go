package sysinfo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// procWith builds a proc dir holding the given files.
func procWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUptime(t *testing.T) {
	tests := []struct {
		name, body string
		want       time.Duration
		ok         bool
	}{
		{"kernel line", "33552.09 46498.51\n", 33552*time.Second + 90*time.Millisecond, true},
		{"idle above uptime (many CPUs)", "10.00 80.00\n", 10 * time.Second, true},
		{"no fraction", "5 1\n", 5 * time.Second, true},
		{"long fraction cut at ns", "1.1234567891 0\n", time.Second + 123456789, true},
		{"no newline", "33552.09 46498.51", 0, false},
		{"one field", "33552.09\n", 0, false},
		{"three fields", "1.0 2.0 3.0\n", 0, false},
		{"negative", "-1.00 2.00\n", 0, false},
		{"exponent", "1e5 2\n", 0, false},
		{"NaN", "NaN 2\n", 0, false},
		{"hex", "0x10 2\n", 0, false},
		{"double space", "1.00  2.00\n", 0, false},
		{"leading blank", " 1.00 2.00\n", 0, false},
		{"bad idle", "1.00 x\n", 0, false},
		{"empty fraction", "1. 2\n", 0, false},
		{"two lines", "1.00 2.00\n3.00 4.00\n", 0, false},
		{"over a century", "4000000000.00 1\n", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Uptime(procWith(t, map[string]string{"uptime": tt.body}))
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("Uptime(%q) = %v, %v; want %v, ok %v", tt.body, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestLoad1(t *testing.T) {
	tests := []struct {
		name, body string
		want       float64
		ok         bool
	}{
		{"kernel line", "0.25 0.06 0.07 6/135 18241\n", 0.25, true},
		{"busy", "12.50 8.00 4.00 13/400 99999\n", 12.5, true},
		{"four fields", "0.25 0.06 0.07 6/135\n", 0, false},
		{"bad tasks", "0.25 0.06 0.07 6-135 18241\n", 0, false},
		{"bad 15 min", "0.25 0.06 x 6/135 18241\n", 0, false},
		{"bad pid", "0.25 0.06 0.07 6/135 -1\n", 0, false},
		{"inf", "Inf 0.06 0.07 6/135 1\n", 0, false},
		{"tabs", "0.25\t0.06 0.07 6/135 1\n", 0, false},
		{"no newline", "0.25 0.06 0.07 6/135 18241", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load1(procWith(t, map[string]string{"loadavg": tt.body}))
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("Load1(%q) = %v, %v; want %v, ok %v", tt.body, got, err, tt.want, tt.ok)
			}
		})
	}
}

const meminfoFixture = `MemTotal:       24684084 kB
MemFree:        23466144 kB
MemAvailable:   23908368 kB
Buffers:           31504 kB
Active(anon):     123456 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
`

func TestMemoryUse(t *testing.T) {
	tests := []struct {
		name, body string
		want       Memory
		ok         bool
	}{
		{"kernel file", meminfoFixture, Memory{Used: (24684084 - 23908368) * 1024, Total: 24684084 * 1024}, true},
		{"only the two keys", "MemTotal: 100 kB\nMemAvailable: 100 kB\n", Memory{Used: 0, Total: 102400}, true},
		{"no MemAvailable", "MemTotal: 100 kB\nMemFree: 50 kB\n", Memory{}, false},
		{"no MemTotal", "MemAvailable: 100 kB\n", Memory{}, false},
		{"available above total", "MemTotal: 100 kB\nMemAvailable: 101 kB\n", Memory{}, false},
		{"zero total", "MemTotal: 0 kB\nMemAvailable: 0 kB\n", Memory{}, false},
		{"twice", "MemTotal: 100 kB\nMemTotal: 100 kB\nMemAvailable: 1 kB\n", Memory{}, false},
		{"wrong unit", "MemTotal: 100 MB\nMemAvailable: 1 kB\n", Memory{}, false},
		{"unitless total", "MemTotal: 100\nMemAvailable: 1 kB\n", Memory{}, false},
		{"overflow", "MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n", Memory{}, false},
		{"garbage line", "MemTotal: 100 kB\nhello\nMemAvailable: 1 kB\n", Memory{}, false},
		{"negative", "MemTotal: -100 kB\nMemAvailable: 1 kB\n", Memory{}, false},
		{"blank line", "MemTotal: 100 kB\n\nMemAvailable: 1 kB\n", Memory{}, false},
		{"no newline", "MemTotal: 100 kB\nMemAvailable: 1 kB", Memory{}, false},
		{"empty", "", Memory{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MemoryUse(procWith(t, map[string]string{"meminfo": tt.body}))
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("MemoryUse = %+v, %v; want %+v, ok %v", got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestProcFilesMissingOrHuge(t *testing.T) {
	dir := t.TempDir()
	if _, err := Uptime(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Uptime of an empty dir: got %v, want a not-exist error", err)
	}
	if _, err := Load1(""); err == nil {
		t.Error("Load1 with no proc dir gave no error")
	}
	huge := procWith(t, map[string]string{"meminfo": strings.Repeat("Foo: 1 kB\n", 10000)})
	if _, err := MemoryUse(huge); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("MemoryUse of a 100 KB meminfo: got %v, want a too-long error", err)
	}
}

// TestRealProc reads this machine's /proc: the parsers must accept what a
// real kernel writes.
func TestRealProc(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc here")
	}
	up, err := Uptime("/proc")
	if err != nil || up <= 0 {
		t.Errorf("Uptime(/proc) = %v, %v", up, err)
	}
	load, err := Load1("/proc")
	if err != nil || load < 0 {
		t.Errorf("Load1(/proc) = %v, %v", load, err)
	}
	mem, err := MemoryUse("/proc")
	if err != nil || mem.Total == 0 || mem.Used > mem.Total {
		t.Errorf("MemoryUse(/proc) = %+v, %v", mem, err)
	}
}
