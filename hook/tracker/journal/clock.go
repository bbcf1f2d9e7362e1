package journal

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Now stamps this instant on both clocks: the wall clock, and
// CLOCK_BOOTTIME with this boot's id (durations within a boot come from it,
// because boxes without a clock chip jump at NTP sync; it keeps counting
// through suspend).
func Now() tracker.Stamp {
	st := tracker.Stamp{At: time.Now()}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) == nil {
		st.Boot = time.Duration(ts.Nano())
		st.BootID = bootID()
	}
	return st
}

// bootID is the kernel's random id of this boot ("" when unreadable).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
