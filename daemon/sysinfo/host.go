package sysinfo

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Limits of the proc files read here. The kernel's uptime and loadavg are
// one short line; meminfo is about 1.5 KiB. A file at the limit is not the
// file we know, so it is refused rather than parsed from a prefix.
const (
	lineFileLimit    = 256
	meminfoFileLimit = 64 << 10
)

// Memory is the machine's memory use in bytes. Used is MemTotal minus
// MemAvailable: memory the kernel could not hand to a new program without
// swapping, which is what "is the cabinet short of memory" means (page cache
// is free in that sense, so MemTotal−MemFree would overstate it).
type Memory struct {
	Used, Total uint64
}

// Uptime is how long the machine has run, from <procDir>/uptime.
func Uptime(procDir string) (time.Duration, error) {
	s, err := readProc(procDir, "uptime", lineFileLimit)
	if err != nil {
		return 0, err
	}
	d, err := parseUptime(s)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", filepath.Join(procDir, "uptime"), err)
	}
	return d, nil
}

// Load1 is the 1-minute load average, from <procDir>/loadavg.
func Load1(procDir string) (float64, error) {
	s, err := readProc(procDir, "loadavg", lineFileLimit)
	if err != nil {
		return 0, err
	}
	l, err := parseLoadavg(s)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", filepath.Join(procDir, "loadavg"), err)
	}
	return l, nil
}

// MemoryUse is the machine's memory use, from <procDir>/meminfo.
func MemoryUse(procDir string) (Memory, error) {
	s, err := readProc(procDir, "meminfo", meminfoFileLimit)
	if err != nil {
		return Memory{}, err
	}
	m, err := parseMeminfo(s)
	if err != nil {
		return Memory{}, fmt.Errorf("parse %s: %w", filepath.Join(procDir, "meminfo"), err)
	}
	return m, nil
}

// readProc reads a small proc file whole, refusing one at or over limit.
func readProc(procDir, name string, limit int64) (string, error) {
	if procDir == "" {
		return "", errors.New("no proc dir configured: pass \"/proc\"")
	}
	path := filepath.Join(procDir, name)
	s, err := ReadSmall(path, limit+1)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err) // err names the path
	}
	if int64(len(s)) > limit {
		return "", fmt.Errorf("read %s: longer than %d bytes, not a proc file this version knows", path, limit)
	}
	return s, nil
}

// oneLine returns s without its single trailing newline, refusing anything
// else the kernel does not write: more lines, or surrounding blanks.
func oneLine(s string) (string, error) {
	line, ok := strings.CutSuffix(s, "\n")
	if !ok {
		return "", errors.New("no newline at the end")
	}
	if line == "" || strings.ContainsAny(line, "\n\r\t") || strings.TrimSpace(line) != line {
		return "", fmt.Errorf("not a single line: %q", truncate(s))
	}
	return line, nil
}

// maxUptimeSeconds (100 years) keeps a garbage uptime from overflowing a
// time.Duration, which ends near 292 years.
const maxUptimeSeconds = 100 * 366 * 24 * 3600

// parseUptime reads "33552.09 46498.51\n": seconds up, then idle seconds
// summed over all CPUs (so idle may exceed uptime; it is only checked).
func parseUptime(s string) (time.Duration, error) {
	line, err := oneLine(s)
	if err != nil {
		return 0, err
	}
	fields := strings.Split(line, " ")
	if len(fields) != 2 {
		return 0, fmt.Errorf("want 2 fields, got %d in %q", len(fields), truncate(line))
	}
	whole, nanos, err := parseFixed(fields[0])
	if err != nil {
		return 0, fmt.Errorf("uptime: %w", err)
	}
	if _, _, err := parseFixed(fields[1]); err != nil {
		return 0, fmt.Errorf("idle time: %w", err)
	}
	if whole > maxUptimeSeconds {
		return 0, fmt.Errorf("uptime %s s is more than 100 years", fields[0])
	}
	return time.Duration(whole)*time.Second + time.Duration(nanos), nil
}

// parseLoadavg reads "0.25 0.06 0.07 6/135 18241\n" and returns the first
// figure. Every field is checked, so a file that is not loadavg is refused
// rather than half-read.
func parseLoadavg(s string) (float64, error) {
	line, err := oneLine(s)
	if err != nil {
		return 0, err
	}
	fields := strings.Split(line, " ")
	if len(fields) != 5 {
		return 0, fmt.Errorf("want 5 fields, got %d in %q", len(fields), truncate(line))
	}
	for i, f := range fields[:3] {
		if _, _, err := parseFixed(f); err != nil {
			return 0, fmt.Errorf("load average %d: %w", i+1, err)
		}
	}
	running, total, ok := strings.Cut(fields[3], "/")
	if !ok || !isDigits(running, 10) || !isDigits(total, 10) {
		return 0, fmt.Errorf("runnable/total tasks: want N/N, got %q", truncate(fields[3]))
	}
	if !isDigits(fields[4], 10) {
		return 0, fmt.Errorf("last pid: want a number, got %q", truncate(fields[4]))
	}
	// fields[0] passed parseFixed: plain digits, so ParseFloat cannot fail
	// nor yield NaN or Inf.
	return strconv.ParseFloat(fields[0], 64)
}

// parseFixed reads a non-negative fixed-point number as the kernel prints
// one ("%lu.%02lu"): digits, then optionally a dot and digits. No sign,
// exponent, hex, NaN or blanks. It returns the whole part and the fraction
// in nanoseconds-of-a-unit (digits past the ninth are dropped).
func parseFixed(s string) (whole uint64, nanos int64, err error) {
	w, frac, hasDot := strings.Cut(s, ".")
	if !isDigits(w, 12) || (hasDot && !isDigits(frac, 18)) {
		return 0, 0, fmt.Errorf("want a decimal like 12.34, got %q", truncate(s))
	}
	whole, _ = strconv.ParseUint(w, 10, 64) // ≤ 12 digits: fits
	if len(frac) > 9 {
		frac = frac[:9]
	}
	if frac != "" {
		n, _ := strconv.ParseInt(frac, 10, 64)
		for range 9 - len(frac) {
			n *= 10
		}
		nanos = n
	}
	return whole, nanos, nil
}

// isDigits reports whether s is 1 to max ASCII digits.
func isDigits(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseMeminfo reads the kernel's "Key:   value kB" lines and returns
// MemTotal − MemAvailable. Every line must have that shape (a file that is
// not meminfo is refused, not mined for two numbers), and the two keys used
// must each appear once, in kB.
func parseMeminfo(s string) (Memory, error) {
	body, ok := strings.CutSuffix(s, "\n")
	if !ok || body == "" {
		return Memory{}, errors.New("empty, or no newline at the end")
	}
	var total, avail uint64
	var haveTotal, haveAvail bool
	for n, line := range strings.Split(body, "\n") {
		key, value, unit, err := meminfoLine(line)
		if err != nil {
			return Memory{}, fmt.Errorf("line %d: %w", n+1, err)
		}
		var dst *uint64
		var seen *bool
		switch key {
		case "MemTotal":
			dst, seen = &total, &haveTotal
		case "MemAvailable":
			dst, seen = &avail, &haveAvail
		default:
			continue
		}
		if *seen {
			return Memory{}, fmt.Errorf("line %d: %s appears twice", n+1, key)
		}
		if unit != "kB" {
			return Memory{}, fmt.Errorf("line %d: %s in %q, want kB", n+1, key, unit)
		}
		if value > math.MaxUint64/1024 {
			return Memory{}, fmt.Errorf("line %d: %s of %d kB overflows", n+1, key, value)
		}
		*dst, *seen = value*1024, true
	}
	switch {
	case !haveTotal:
		return Memory{}, errors.New("no MemTotal line")
	case !haveAvail:
		// Linux has had it since 3.14; Batocera's kernels are far newer.
		return Memory{}, errors.New("no MemAvailable line (kernel older than 3.14?)")
	case total == 0:
		return Memory{}, errors.New("MemTotal is 0")
	case avail > total:
		return Memory{}, fmt.Errorf("MemAvailable %d exceeds MemTotal %d", avail, total)
	}
	return Memory{Used: total - avail, Total: total}, nil
}

// meminfoLine splits "Active(anon):     1234 kB" (or a unitless
// "HugePages_Total:       0").
func meminfoLine(line string) (key string, value uint64, unit string, err error) {
	key, rest, ok := strings.Cut(line, ":")
	if !ok || key == "" || len(key) > 64 {
		return "", 0, "", fmt.Errorf("want \"Key: value\", got %q", truncate(line))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c > '~' {
			return "", 0, "", fmt.Errorf("bad key %q", truncate(key))
		}
	}
	rest = strings.TrimLeft(rest, " ")
	num, unit, _ := strings.Cut(rest, " ")
	if !isDigits(num, 20) || (unit != "" && unit != "kB") {
		return "", 0, "", fmt.Errorf("%s: want a number and an optional kB, got %q", key, truncate(rest))
	}
	value, err = strconv.ParseUint(num, 10, 64)
	if err != nil {
		return "", 0, "", fmt.Errorf("%s: %w", key, err)
	}
	return key, value, unit, nil
}

// truncate keeps garbage quoted in an error message short.
func truncate(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
