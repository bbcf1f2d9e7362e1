package romarr

import "sync"

// batoceraToROMarr maps a Batocera system folder (/userdata/roms/<folder>) to ROMarr's platform
// slug. ROMarr's slugs (romarr/platforms.py, PLATFORMS) are RomM folder names of two eras —
// IGDB-style ones such as "genesis-slash-megadrive" and "turbografx16--1" beside short ones such
// as "acpc" and "zxs" — and its resolve() knows few Batocera folders ("pcengine", "mastersystem",
// "wswan" resolve to nothing), so the mapping is spelled out here.
//
// Left out on purpose: folders ROMarr has no platform for, and Batocera's variants whose files
// would be filed in the wrong place (naomi, atomiswave, cps1-3: ROMarr's "arcade" is MAME
// romsets; snes-msu1, megadrive-msu, sgb, gb2players: packaging or meta systems).
//
// It is built on first use, not at program start: every ES event starts this
// binary, and cmd/cabinet's startup test keeps package initialisation empty.
var batoceraToROMarr = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"3do":           "3do",
		"3ds":           "3ds",
		"amiga500":      "amiga",
		"amiga1200":     "amiga",
		"amiga4000":     "amiga",
		"amigacd32":     "amiga-cd32",
		"amstradcpc":    "acpc",
		"apple2":        "apple2",
		"atari2600":     "atari2600",
		"atari5200":     "atari5200",
		"atari7800":     "atari7800",
		"atari800":      "atari8bit",
		"atarist":       "atari-st",
		"c128":          "c128",
		"c20":           "vic-20",
		"c64":           "c64",
		"cdi":           "philips-cd-i",
		"colecovision":  "colecovision",
		"dos":           "dos",
		"dreamcast":     "dc",
		"fbneo":         "arcade",
		"fds":           "fds",
		"gamecube":      "ngc",
		"gamegear":      "gamegear",
		"gb":            "gb",
		"gba":           "gba",
		"gbc":           "gbc",
		"intellivision": "intellivision",
		"jaguar":        "jaguar",
		"jaguarcd":      "atari-jaguar-cd",
		"lynx":          "lynx",
		"macintosh":     "mac",
		"mame":          "arcade",
		"mastersystem":  "sms",
		"megacd":        "segacd",
		"megadrive":     "genesis-slash-megadrive",
		"msx1":          "msx",
		"msx2":          "msx2",
		"n64":           "n64",
		"nds":           "nds",
		"neogeo":        "neogeoaes",
		"neogeocd":      "neo-geo-cd",
		"nes":           "nes",
		"ngp":           "neo-geo-pocket",
		"ngpc":          "neo-geo-pocket-color",
		"odyssey2":      "odyssey-2-slash-videopac-g7000",
		"pcengine":      "turbografx16--1",
		"pcenginecd":    "turbografx-16-slash-pc-engine-cd",
		"pcfx":          "pc-fx",
		"pet":           "cpet",
		"ps2":           "ps2",
		"ps3":           "ps3",
		"psp":           "psp",
		"psx":           "psx",
		"saturn":        "saturn",
		"sega32x":       "sega32",
		"segacd":        "segacd",
		"sg1000":        "sg1000",
		"snes":          "snes",
		"supergrafx":    "supergrafx",
		"vectrex":       "vectrex",
		"virtualboy":    "virtualboy",
		"wii":           "wii",
		"wiiu":          "wiiu",
		"windows":       "win",
		"wswan":         "wonderswan",
		"wswanc":        "wonderswan-color",
		"x68000":        "sharp-x68000",
		"xbox":          "xbox",
		"xbox360":       "xbox360",
		"zx81":          "sinclair-zx81",
		"zxspectrum":    "zxs",
	}
})

// PlatformFor returns ROMarr's platform slug for a Batocera system folder ("megadrive" →
// "genesis-slash-megadrive"). The folder is matched exactly, as Batocera names it on disk.
func PlatformFor(batoceraFolder string) (slug string, ok bool) {
	slug, ok = batoceraToROMarr()[batoceraFolder]
	return slug, ok
}
