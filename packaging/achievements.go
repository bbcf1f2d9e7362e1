package packaging

import (
	"fmt"
	"path"

	"github.com/batocera-cabinet/cabinet/hook/journal"
)

// AchievementsDir is the folder of ES's scripts Batocera's
// call_achievements_hooks.sh runs on every RetroAchievements unlock (after
// the tmpfs /var/run/emulationstation/scripts/achievements/), each file with
// argv `id title description`. ES itself fires no event of that name.
const AchievementsDir = "achievements"

// Bounds of the achievements wrapper's record, in bytes: printf's precision
// cuts what RetroArch passes (a real unlock is under 168 bytes in all), so a
// hostile title can neither fill the tmpfs nor pass the inbox's record
// bound. The binary cuts and cleans them again (hook/argv, the tracker).
const (
	unlockIDBytes    = 32
	unlockTitleBytes = 1 << 10
	unlockDescBytes  = 2 << 10
)

// AchievementsScript is where the achievements wrapper is installed.
func (l Layout) AchievementsScript() string {
	return path.Join(l.ESScripts, AchievementsDir, "cabinet")
}

// achievements is the wrapper RetroArch runs on an unlock, synchronously on
// its main loop (system(), no timeout: the game freezes until every script
// returns). While the daemon runs it costs a shell and one printf of a record
// with bounded fields. With no daemon it runs the binary as the configgen
// source, which never touches the network: the unlock is stored (the store's
// lock is waited for 60 ms at most) or else spooled, and a detached flusher
// publishes it a few seconds later, off RetroArch's path. It passes exactly
// the three arguments, and never reads stdin (the pipe of script names
// call_achievements_hooks.sh reads from).
func (l Layout) achievements() string {
	args := fmt.Sprintf(`'%%s\0%%s\0%%s\0%%s\0%%s\0%%s\0%%.%ds\0%%.%ds\0%%.%ds\0%%s\0' %s "$u" 6 --source configgen %s "$1" "$2" "$3" %s`,
		unlockIDBytes, unlockTitleBytes, unlockDescBytes, journal.InboxMagic, AchievementsDir, journal.InboxEnd)
	return header +
		"# RetroArch runs this on every RetroAchievements unlock (id title description) and waits for it.\n" +
		l.handOverPrintf(args) +
		fmt.Sprintf("exec %s hook --source configgen %s \"$1\" \"$2\" \"$3\" </dev/null >/dev/null\n", shQuote(l.Binary), AchievementsDir)
}
