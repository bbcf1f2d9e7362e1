package argv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// EventAchievements is the argv name of a RetroAchievements unlock: the
// folder Batocera's call_achievements_hooks.sh runs (ES's
// scripts/achievements/), whose scripts get `id title description`.
const EventAchievements = "achievements"

// Bounds on an unlock's argv. RetroArch builds the command in 256 bytes, so a
// real unlock is far shorter; anything longer is cut here, not refused, and
// cleaned and capped again in runes by the tracker (Event.Normalize).
const (
	maxUnlockIDBytes    = 32
	maxUnlockTitleBytes = 1 << 10
	maxUnlockDescBytes  = 2 << 10
)

// boundUnlock cuts an unlock's arguments (after the event name) to their
// bounds, so an over-long title is kept short rather than the event lost.
func boundUnlock(args []string) []string {
	out := append([]string(nil), args...)
	for i, limit := range []int{0, maxUnlockIDBytes, maxUnlockTitleBytes, maxUnlockDescBytes} {
		if i > 0 && i < len(out) && len(out[i]) > limit {
			out[i] = out[i][:limit] // Normalize mends a rune cut in half
		}
	}
	return out
}

// parseUnlock reads `achievements ID TITLE DESCRIPTION`. The id is RetroArch's
// %u: decimal, or the event is refused. Title and description arrive through
// RetroArch's unescaped "%s" in sh -c, so they may have lost quotes, "$words"
// or backslashes; they are kept as given, cleaned by Normalize.
func parseUnlock(ev tracker.Event, id, title, desc string) (tracker.Event, error) {
	id = strings.TrimSpace(id)
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return tracker.Event{}, fmt.Errorf("%s: id %q is not a decimal achievement id", EventAchievements, clip(id))
	}
	ev.Kind = tracker.KindAchievement
	ev.Unlock = tracker.Unlock{ID: uint32(n), Title: title, Description: desc}
	return ev.Normalize(), nil
}
