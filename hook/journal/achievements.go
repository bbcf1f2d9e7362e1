package journal

import (
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// withHardcore sets, on every achievement of evs (events applied for the first time), whether
// hardcore was configured for the game that runs: batocera.conf's setting for its system and ROM
// (batoconf.Hardcore), read once per apply, and only when an unlock is there. The game is the
// running session of st, else the latest game start among evs before the unlock; with neither,
// the global setting. Set once, it travels with the event (its window, the spool), so replays
// and the log agree whatever the file says later.
func withHardcore(st tracker.State, r Rules, evs []tracker.Event) []tracker.Event {
	var conf []byte
	read := false
	var running haentities.Session
	for i, ev := range evs {
		if ev.Kind != tracker.KindAchievement {
			continue
		}
		if !read {
			read = true
			if r.BatoceraConf != "" {
				conf, _ = batoconf.ReadFile(r.BatoceraConf) // unreadable: Batocera's default, off
			}
			running = tracker.Running(st, r.Tracker)
		}
		system, rom := running.System, running.Rom
		if running.ID == "" {
			system, rom = startBefore(evs, ev)
		}
		evs[i].Unlock.Hardcore = batoconf.Hardcore(conf, system, rom)
	}
	return evs
}

// startBefore is the system and ROM of the latest game start among evs at or before ev.
func startBefore(evs []tracker.Event, ev tracker.Event) (system, rom string) {
	var best tracker.Event
	for _, e := range evs {
		if e.Kind != tracker.KindGameStart || e.BootID != ev.BootID || e.Boot > ev.Boot || e.Boot < best.Boot {
			continue
		}
		best = e
	}
	if best.Kind == "" {
		return "", ""
	}
	return tracker.GameSystem(best), best.Path
}

// logUnlocks appends the unlocks that became final to the achievements log, once each.
func logUnlocks(tx *store.Tx, unlocked []haentities.Achievement) error {
	if len(unlocked) == 0 {
		return nil
	}
	b, err := store.Achievements.Within(tx)
	if err != nil {
		return err
	}
	for _, a := range unlocked {
		if err := b.Put(store.AchievementKey(a), a); err != nil {
			return err
		}
	}
	return nil
}
