// Package bootclock stamps an instant on the two clocks tracking needs: the
// wall clock, and CLOCK_BOOTTIME with this boot's id. Durations within a
// boot come from the boot clock, because boxes without a clock chip jump
// at NTP sync, and it keeps counting through suspend. Every hook reads it
// first thing, on ES's path, so it costs two system calls and a file read.
package bootclock

import (
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
