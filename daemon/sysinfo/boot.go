package sysinfo

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// BootTime is when the machine booted: the btime line of <procDir>/stat, in
// whole seconds. It is the same at every reading (unlike now minus
// /proc/uptime, which jitters), so Home Assistant records one state a boot.
func BootTime(procDir string) (time.Time, error) {
	s, err := ReadSmall(filepath.Join(procDir, "stat"), 256<<10)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the boot time: %w", err)
	}
	return ParseBootTime(s)
}

// ParseBootTime reads the btime line of /proc/stat.
func ParseBootTime(stat string) (time.Time, error) {
	for _, line := range strings.Split(stat, "\n") {
		rest, ok := strings.CutPrefix(line, "btime ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		// Before 2000 or in the far future: a broken clock, not a boot.
		if err != nil || n < 946684800 || n > 32503680000 {
			return time.Time{}, fmt.Errorf("/proc/stat: btime %q is not a boot time", truncate(rest))
		}
		return time.Unix(n, 0), nil
	}
	return time.Time{}, fmt.Errorf("/proc/stat has no btime line")
}
