package household

import (
	"path"
	"strings"
)

// SavePlan is how a running game's progress can be kept before the rules
// close it.
type SavePlan int

// The plans.
const (
	// SaveUnknown: not a RetroArch game, or RetroArch does not answer; a
	// standalone emulator cannot be told to save, so the warnings say
	// "save your game now".
	SaveUnknown SavePlan = iota
	// SaveAuto: Batocera's auto-save is on for the game (RetroArch's
	// savestate_auto_save): closing RetroArch writes its .auto state,
	// which the next launch loads.
	SaveAuto
	// SaveNewSlot: Batocera's incremental save states are on (its default;
	// RetroArch's savestate_auto_index): SAVE_STATE writes a new slot after
	// the highest and overwrites none of the player's.
	SaveNewSlot
	// SaveWouldOverwrite: incremental save states are off, so SAVE_STATE
	// would overwrite the slot the player uses: nothing is saved and the
	// warnings say so.
	SaveWouldOverwrite
)

// Saves reports whether the plan keeps the progress.
func (p SavePlan) Saves() bool { return p == SaveAuto || p == SaveNewSlot }

func (p SavePlan) String() string {
	switch p {
	case SaveAuto:
		return "auto-save on quit"
	case SaveNewSlot:
		return "a new save-state slot"
	case SaveWouldOverwrite:
		return "not saved: a save would overwrite the player's slot (incremental save states are off)"
	}
	return "not saved: the emulator cannot save on command"
}

// PlanSave reads Batocera's settings for a RetroArch game the way its
// configgen does (batocera.linux configgen generators/libretro/
// libretroConfig.py, "Autosave option"): a game's key
// (<system>["<rom file>"].<key>) over its system's (<system>.<key>) over
// global.<key>; autosave defaults to off, incrementalsavestates to on.
// get is batocera.conf's lookup (batoconf.Get).
func PlanSave(get func(key string) (string, bool), system, rom string) SavePlan {
	if boolSetting(get, system, rom, "autosave", false) {
		return SaveAuto
	}
	if boolSetting(get, system, rom, "incrementalsavestates", true) {
		return SaveNewSlot
	}
	return SaveWouldOverwrite
}

func boolSetting(get func(string) (string, bool), system, rom, key string, def bool) bool {
	var names []string
	if system != "" && rom != "" {
		names = append(names, system+`["`+path.Base(rom)+`"].`+key)
	}
	if system != "" {
		names = append(names, system+"."+key)
	}
	names = append(names, "global."+key)
	for _, n := range names {
		v, ok := get(n)
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "true", "on", "yes", "enabled":
			return true
		case "0", "false", "off", "no", "disabled":
			return false
		}
		// "auto" or anything else: the next level decides.
	}
	return def
}
