package fakees

import (
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// Clock is the time source of the fake ES: its launch delays, play timers
// and play-statistics timestamps. clock.Real (the default) and *clock.Fake
// satisfy it; tests inject a *clock.Fake, whose AfterFunc callbacks run
// inside Advance, so that nothing sleeps for real.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine (clock.Real) or from Advance
	// (*clock.Fake) once d has elapsed.
	AfterFunc(d time.Duration, f func()) clock.Timer
}
