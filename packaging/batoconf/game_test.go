package batoconf_test

import (
	"testing"

	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

const hardRom = "/userdata/roms/snes/Hacks/Super #1 = Best.sfc"

// hardcoreCases hold Hardcore to configgen's precedence: global < system <
// folder < game, "", default and auto counting as unset, and RetroArch's own
// key over all of it.
var hardcoreCases = []struct {
	name, conf, system, rom string
	want                    bool
}{
	{name: "nothing set: off", conf: "", system: "snes", rom: hardRom, want: false},
	{name: "global on", conf: "global.retroachievements.hardcore=1\n", system: "snes", rom: hardRom, want: true},
	{name: "system over global", conf: "global.retroachievements.hardcore=1\nsnes.retroachievements.hardcore=0\n", system: "snes", rom: hardRom, want: false},
	{name: "another system's key ignored", conf: "global.retroachievements.hardcore=1\nnes.retroachievements.hardcore=0\n", system: "snes", rom: hardRom, want: true},
	{name: "folder over system", conf: "snes.retroachievements.hardcore=0\nsnes.folder[\"/userdata/roms/snes/Hacks\"].retroachievements.hardcore=1\n", system: "snes", rom: hardRom, want: true},
	{name: "another folder ignored", conf: "snes.folder[\"/userdata/roms/snes\"].retroachievements.hardcore=1\n", system: "snes", rom: hardRom, want: false},
	{name: "game over folder, name without = and #", conf: "snes.folder[\"/userdata/roms/snes/Hacks\"].retroachievements.hardcore=1\nsnes[\"Super 1  Best.sfc\"].retroachievements.hardcore=0\n", system: "snes", rom: hardRom, want: false},
	{name: "game key with the raw name is not configgen's", conf: "snes[\"Super #1 = Best.sfc\"].retroachievements.hardcore=1\n", system: "snes", rom: hardRom, want: false},
	{name: "game on, global off", conf: "global.retroachievements.hardcore=0\nsnes[\"Super 1  Best.sfc\"].retroachievements.hardcore=true\n", system: "snes", rom: hardRom, want: true},
	{name: "auto at the game falls back", conf: "snes.retroachievements.hardcore=1\nsnes[\"Super 1  Best.sfc\"].retroachievements.hardcore=auto\n", system: "snes", rom: hardRom, want: true},
	{name: "default and empty fall back", conf: "global.retroachievements.hardcore=1\nsnes.retroachievements.hardcore=default\nsnes.folder[\"/userdata/roms/snes/Hacks\"].retroachievements.hardcore=\n", system: "snes", rom: hardRom, want: true},
	{name: "first occurrence of a key wins", conf: "global.retroachievements.hardcore=1\nglobal.retroachievements.hardcore=0\n", system: "snes", rom: hardRom, want: true},
	{name: "commented out", conf: "#global.retroachievements.hardcore=1\n", system: "snes", rom: hardRom, want: false},
	{name: "words configgen reads as true", conf: "global.retroachievements.hardcore=Enabled\n", system: "snes", rom: hardRom, want: true},
	{name: "anything else is off", conf: "global.retroachievements.hardcore=yes please\n", system: "snes", rom: hardRom, want: false},
	{name: "retroarch key over the setting", conf: "global.retroachievements.hardcore=1\nsnes.retroarch.cheevos_hardcore_mode_enable=\"false\"\n", system: "snes", rom: hardRom, want: false},
	{name: "retroarch key turns it on", conf: "global.retroarch.cheevos_hardcore_mode_enable=true\n", system: "snes", rom: hardRom, want: true},
	{name: "no game known: global only", conf: "global.retroachievements.hardcore=1\nsnes.retroachievements.hardcore=0\n", want: true},
	{name: "system known, no rom", conf: "snes.retroachievements.hardcore=1\n", system: "snes", want: true},
	{name: "crlf lines", conf: "global.retroachievements.hardcore=1\r\n", system: "snes", rom: hardRom, want: true},
}

func TestHardcorePrecedence(t *testing.T) {
	for _, tt := range hardcoreCases {
		t.Run(tt.name, func(t *testing.T) {
			if got := batoconf.Hardcore([]byte(tt.conf), tt.system, tt.rom); got != tt.want {
				t.Errorf("Hardcore(%q, %q, %q) = %v, want %v", tt.conf, tt.system, tt.rom, got, tt.want)
			}
		})
	}
}

func TestGameSetting(t *testing.T) {
	conf := []byte("global.k=g\nsnes.k=s\nsnes.folder[\"/r/snes\"].k=auto\nsnes[\"a.sfc\"].k=x\n")
	for _, tt := range []struct {
		system, rom, want string
		ok                bool
	}{
		{"snes", "/r/snes/a.sfc", "x", true},
		{"snes", "/r/snes/b.sfc", "s", true},
		{"nes", "/r/nes/a.sfc", "g", true},
		{"", "", "g", true},
	} {
		if got, ok := batoconf.GameSetting(conf, tt.system, tt.rom, "k"); got != tt.want || ok != tt.ok {
			t.Errorf("GameSetting(%s, %s) = %q, %v; want %q, %v", tt.system, tt.rom, got, ok, tt.want, tt.ok)
		}
	}
	if v, ok := batoconf.GameSetting(conf, "snes", "/r/snes/a.sfc", "other"); ok || v != "" {
		t.Errorf("an unset key: %q, %v", v, ok)
	}
}

func TestRetroAchievementsOn(t *testing.T) {
	for conf, want := range map[string]bool{
		"":                                       false,
		"global.retroachievements=0\n":           false,
		"global.retroachievements=1\n":           true,
		"global.retroachievements=1\r\n":         true,
		"#global.retroachievements=1\n":          false,
		"snes.retroachievements=true\n":          true,
		"snes[\"a.sfc\"].retroachievements=on\n": true,
		"global.retroachievements.hardcore=1\nglobal.retroachievements.username=me\n": false,
		"global.retroachievements=auto\n":                                             false,
	} {
		if got := batoconf.RetroAchievementsOn([]byte(conf)); got != want {
			t.Errorf("RetroAchievementsOn(%q) = %v, want %v", conf, got, want)
		}
	}
}
