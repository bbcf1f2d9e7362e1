package sysinfo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCPUTemperature(t *testing.T) {
	tests := []struct {
		name  string
		zones []string // temp file contents, one zone each
		want  float64
		ok    bool
	}{
		{"one zone", []string{"47000\n"}, 47, true},
		{"hottest wins", []string{"38500\n", "61250\n", "45000"}, 61.3, true},
		{"broken zones skipped", []string{"-273000\n", "garbage", "", "52000\n"}, 52, true},
		{"absurd value", []string{"999999999\n"}, 0, false},
		{"no zone", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, body := range tt.zones {
				zone := filepath.Join(dir, "thermal_zone"+string(rune('0'+i)))
				if err := os.MkdirAll(zone, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(zone, "temp"), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := CPUTemperature(filepath.Join(dir, "thermal_zone*", "temp"))
			ok := err == nil
			if got != tt.want || ok != tt.ok {
				t.Errorf("cpuTemperature = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDiskFree(t *testing.T) {
	free, err := DiskFree(t.TempDir())
	if err != nil || free == 0 {
		t.Fatalf("DiskFree(temp dir) = %d, %v", free, err)
	}
	if _, err := DiskFree(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("diskFree of a missing path gave no error")
	}
}

// FuzzParseMilliCelsius: a thermal file never yields an implausible or
// non-finite temperature.
func FuzzParseMilliCelsius(f *testing.F) {
	for _, s := range []string{"47000\n", "-273000", "9223372036854775807", " 1e5", "NaN", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseMilliCelsius(s)
		if ok && !(c >= -60 && c <= 200) {
			t.Fatalf("ParseMilliCelsius(%q) = %v", s, c)
		}
	})
}
