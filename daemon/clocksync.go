package daemon

import (
	"path/filepath"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/bootclock"
)

// clockSynced says whether the wall clock can place play on the calendar
// (Options.ClockSynced in tests; else the kernel's NTP status or a clock
// chip under cabinet.paths.root's /sys).
func (d *Daemon) clockSynced(now time.Time) bool {
	if d.opts.ClockSynced != nil {
		return d.opts.ClockSynced(now)
	}
	rtc := ""
	if sys := d.config().System.Sys; sys != "" {
		rtc = filepath.Join(sys, "class/rtc/rtc0")
	}
	return bootclock.Synced(now, rtc)
}
