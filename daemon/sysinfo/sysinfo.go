// Package sysinfo reads the few facts about the cabinet's machine that the
// health tool and the Home Assistant diagnostics report, from small
// bounded system files: the hottest thermal zone, the free space of a
// filesystem, the boot time, load and memory (/proc), and the default
// route's interface with its MAC and address.
package sysinfo

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadSmall reads at most limit bytes of a small system file.
func ReadSmall(path string, limit int64) (string, error) {
	if path == "" {
		return "", fmt.Errorf("no path configured")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit))
	return string(b), err
}

// CPUTemperature is the hottest readable thermal zone matching glob, in °C
// rounded to 0.1: which zone is the CPU's differs per board, and the CPU is
// the hottest part of a cabinet.
func CPUTemperature(glob string) (float64, error) {
	if glob == "" {
		return 0, fmt.Errorf("no thermal zone path configured")
	}
	zones, _ := filepath.Glob(glob)
	best, found := 0.0, false
	for _, z := range zones {
		s, err := ReadSmall(z, 64)
		if err != nil {
			continue
		}
		if c, ok := ParseMilliCelsius(s); ok && (!found || c > best) {
			best, found = c, true
		}
	}
	if !found {
		return 0, fmt.Errorf("no readable thermal zone at %s", glob)
	}
	return math.Round(best*10) / 10, nil
}

// ParseMilliCelsius reads a thermal zone's temp file ("47000\n"). Values
// outside what a working sensor reports (a disabled zone's -273000, a
// driver's garbage) are no reading at all.
func ParseMilliCelsius(s string) (float64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, false
	}
	c := float64(n) / 1000
	if c < -60 || c > 200 {
		return 0, false
	}
	return c, true
}
