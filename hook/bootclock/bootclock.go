// Package bootclock stamps an instant on the two clocks tracking needs: the
// wall clock, and CLOCK_BOOTTIME with this boot's id. Durations within a
// boot come from the boot clock, because boxes without a clock chip jump
// at NTP sync, and it keeps counting through suspend. Every hook reads it
// first thing, on ES's path, so it costs two system calls and a file read.
package bootclock

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Now stamps this instant on both clocks.
func Now() tracker.Stamp {
	st := tracker.Stamp{At: time.Now()}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) == nil {
		st.Boot = time.Duration(ts.Nano())
		st.BootID = bootID()
	}
	return st
}

// bootID is the kernel's random id of this boot ("" when unreadable). Read
// with bare system calls: os.ReadFile spends five more of them on the
// poller, and every hook reads this file on ES's path.
func bootID() string {
	fd, err := unix.Open("/proc/sys/kernel/random/boot_id", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	var b [64]byte
	n, err := unix.Read(fd, b[:])
	if err != nil || n <= 0 {
		return ""
	}
	return strings.TrimSpace(string(b[:n]))
}

// plausibleYear is the first year a set clock can show: a clock chip whose
// battery died comes up in 2000 or 1970.
const plausibleYear = 2025

// Synced reports whether the wall clock can be trusted to say which day it
// is: the kernel says NTP has set it (adjtimex does not answer TIME_ERROR),
// or a clock chip kept it (sysRTC, e.g. /sys/class/rtc/rtc0, exists) and it
// shows a plausible year. A Raspberry Pi 4 has no clock chip: it boots in
// the past and is trusted only once NTP has set the clock.
func Synced(now time.Time, sysRTC string) bool {
	var tx unix.Timex
	if state, err := unix.Adjtimex(&tx); err == nil && state != unix.TIME_ERROR {
		return true
	}
	if now.Year() < plausibleYear || sysRTC == "" {
		return false
	}
	_, err := os.Stat(sysRTC)
	return err == nil
}
