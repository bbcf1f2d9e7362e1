package batoconf

import (
	"bytes"
	"path"
	"strings"
)

// GameSetting is the value Batocera's configgen uses for key (e.g.
// "retroachievements.hardcore") when it launches rom of system: it reads
// global.<key>, then <system>.<key>, then <system>.folder["<rom's
// folder>"].<key>, then <system>["<rom's file name>"].<key> (the file name
// without '=' and '#', as ES's FileData::getConfigurationName writes it), and
// the last one set wins; "", "default" and "auto" count as not set
// (batocera.linux configgen Emulator.py, __init__ and updateConfiguration).
// Each line is read as Get reads it. ok is false when no level sets key.
func GameSetting(data []byte, system, rom, key string) (value string, ok bool) {
	names := []string{"global." + key}
	if system != "" {
		names = append(names, system+"."+key)
		if rom != "" {
			names = append(names,
				system+`.folder["`+path.Dir(rom)+`"].`+key,
				system+`["`+strings.NewReplacer("=", "", "#", "").Replace(path.Base(rom))+`"].`+key)
		}
	}
	for _, n := range names {
		v, found := Get(data, n)
		if !found {
			continue
		}
		switch strings.TrimSpace(v) {
		case "", "default", "auto":
			continue
		}
		value, ok = v, true
	}
	return value, ok
}

// Hardcore says whether RetroAchievements' hardcore mode is configured for
// rom of system, as configgen sets RetroArch's cheevos_hardcore_mode_enable
// (generators/libretro/libretroConfig.py): retroachievements.hardcore
// (GameSetting; off unless set), overridden by a retroarch.
// cheevos_hardcore_mode_enable setting, which configgen copies into
// RetroArch's configuration last. Netplay, which forces hardcore off, and a
// pause RetroArch makes at run time (a loaded state, cheats) cannot be seen
// from here: this is what was asked for, not what runs.
func Hardcore(data []byte, system, rom string) bool {
	on := false
	if v, ok := GameSetting(data, system, rom, "retroachievements.hardcore"); ok {
		on = truthy(v)
	}
	if v, ok := GameSetting(data, system, rom, "retroarch.cheevos_hardcore_mode_enable"); ok {
		on = truthy(v)
	}
	return on
}

// truthy is configgen's get_bool: 1, true, on or enabled (any case; quotes
// around a RetroArch value are dropped).
func truthy(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `"`)) {
	case "1", "true", "on", "enabled":
		return true
	}
	return false
}

// RetroAchievementsOn says whether batocera.conf turns RetroAchievements on
// anywhere: a retroachievements key, at any level (global, a system, a
// folder, a game), whose value configgen reads as true. Only then can
// RetroArch run the achievements scripts.
func RetroAchievementsOn(data []byte) bool {
	for rest := skipBOM(data); len(rest) > 0; {
		var line []byte
		line, rest = nextLine(rest)
		k, v, ok := setting(line)
		if !ok || !bytes.HasSuffix(k, []byte(".retroachievements")) {
			continue
		}
		if truthy(strings.TrimSuffix(string(skipLeadingWhitespace(v)), "\r")) {
			return true
		}
	}
	return false
}
