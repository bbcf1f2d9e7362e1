package sysinfo

import (
	"testing"
	"time"
)

func TestParseBootTime(t *testing.T) {
	tests := []struct {
		in   string
		want int64 // 0: an error
	}{
		{"cpu  1 2 3\nbtime 1764660000\nprocesses 9\n", 1764660000},
		{"btime 1764660000", 1764660000},
		{"cpu 1\n", 0},
		{"btime \n", 0},
		{"btime 12\n", 0},
		{"btime 99999999999999999999\n", 0},
		{"btime -5\n", 0},
	}
	for _, tt := range tests {
		got, err := ParseBootTime(tt.in)
		if tt.want == 0 {
			if err == nil {
				t.Errorf("ParseBootTime(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got.Unix() != tt.want {
			t.Errorf("ParseBootTime(%q) = %v, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

// The real /proc of this machine: a boot in the past.
func TestBootTimeHere(t *testing.T) {
	b, err := BootTime("/proc")
	if err != nil {
		t.Skipf("no /proc/stat here: %v", err)
	}
	if !b.Before(time.Now()) {
		t.Errorf("boot time %v is not in the past", b)
	}
}

func FuzzParseBootTime(f *testing.F) {
	f.Add("btime 1764660000\n")
	f.Add("cpu 1 2\nbtime x")
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseBootTime(s); err == nil && (b.Year() < 2000 || b.Year() > 3000) {
			t.Fatalf("accepted %v", b)
		}
	})
}
