package fakeromm

import (
	"fmt"
	"strings"
	"sync"
)

// synthetic describes the generated ROMs: ROM firstID+i is the i-th, on
// platform platforms[i % len(platforms)], with one RomFile of id
// firstFileID+i. Everything else is a function of the id.
type synthetic struct {
	n           int
	firstID     int
	firstFileID int
	platforms   []int // platform ids
	lib         *library
}

// synthPlatforms are real RomM slugs over Batocera folders
// (batocera-romm-platform-map.yml), with a typical extension; the fixture's
// folders are left out so that no fs_slug appears twice.
var synthPlatforms = []struct{ fs, slug, name, ext string }{
	{"gba", "gba", "Game Boy Advance", "gba"}, {"gbc", "gbc", "Game Boy Color", "gbc"},
	{"n64", "n64", "Nintendo 64", "z64"}, {"nds", "nds", "Nintendo DS", "nds"},
	{"gamecube", "ngc", "Nintendo GameCube", "rvz"}, {"wii", "wii", "Wii", "rvz"},
	{"virtualboy", "virtualboy", "Virtual Boy", "vb"}, {"fds", "fds", "Family Computer Disk System", "fds"},
	{"mastersystem", "sms", "Sega Master System/Mark III", "sms"}, {"gamegear", "gamegear", "Sega Game Gear", "gg"},
	{"segacd", "segacd", "Sega CD", "chd"}, {"sega32x", "sega32", "Sega 32X", "32x"},
	{"saturn", "saturn", "Sega Saturn", "chd"}, {"dreamcast", "dc", "Dreamcast", "chd"},
	{"sg1000", "sg1000", "SG-1000", "sg"}, {"ps2", "ps2", "PlayStation 2", "chd"},
	{"psp", "psp", "PlayStation Portable", "cso"}, {"pcengine", "tg16", "TurboGrafx-16/PC Engine", "pce"},
	{"pcenginecd", "turbografx-cd", "TurboGrafx-CD", "chd"}, {"supergrafx", "supergrafx", "PC Engine SuperGrafx", "pce"},
	{"pcfx", "pc-fx", "PC-FX", "chd"}, {"neogeo", "neogeoaes", "Neo Geo AES", "zip"},
	{"neogeocd", "neo-geo-cd", "Neo Geo CD", "chd"}, {"ngp", "neo-geo-pocket", "Neo Geo Pocket", "ngp"},
	{"ngpc", "neo-geo-pocket-color", "Neo Geo Pocket Color", "ngc"}, {"mame", "arcade", "Arcade", "zip"},
	{"atari2600", "atari2600", "Atari 2600", "a26"}, {"atari5200", "atari5200", "Atari 5200", "a52"},
	{"atari7800", "atari7800", "Atari 7800", "a78"}, {"lynx", "lynx", "Atari Lynx", "lnx"},
	{"jaguar", "jaguar", "Atari Jaguar", "j64"}, {"atarist", "atari-st", "Atari ST/STE", "st"},
	{"colecovision", "colecovision", "ColecoVision", "col"}, {"intellivision", "intellivision", "Intellivision", "int"},
	{"vectrex", "vectrex", "Vectrex", "vec"}, {"odyssey2", "odyssey", "Odyssey 2", "bin"},
	{"c64", "c64", "Commodore C64/128/MAX", "d64"}, {"amiga500", "amiga", "Amiga", "adf"},
	{"amstradcpc", "acpc", "Amstrad CPC", "dsk"}, {"zxspectrum", "zxs", "ZX Spectrum", "tzx"},
	{"msx1", "msx", "MSX", "rom"}, {"msx2", "msx2", "MSX2", "rom"},
	{"dos", "dos", "DOS", "zip"}, {"scummvm", "scummvm", "ScummVM", "scummvm"},
	{"3do", "3do", "3DO Interactive Multiplayer", "chd"}, {"cdi", "philips-cd-i", "Philips CD-i", "chd"},
	{"wswan", "wonderswan", "WonderSwan", "ws"}, {"wswanc", "wonderswan-color", "WonderSwan Color", "wsc"},
	{"pokemini", "pokemon-mini", "Pokémon mini", "min"}, {"x68000", "sharp-x68000", "Sharp X68000", "dim"},
	{"pc98", "pc-9800-series", "PC-9800 Series", "hdi"}, {"tic80", "tic-80", "TIC-80", "tic"},
	{"openbor", "openbor", "OpenBOR", "pak"}, {"satellaview", "satellaview", "Satellaview", "bs"},
	{"sufami", "sufami-turbo", "Sufami Turbo", "st"}, {"supervision", "supervision", "Watara Supervision", "sv"},
	{"channelf", "fairchild-channel-f", "Fairchild Channel F", "bin"}, {"gameandwatch", "g-and-w", "Game & Watch", "mgw"},
	{"megacd", "segacd", "Sega Mega-CD", "chd"}, {"xbox", "xbox", "Xbox", "iso"},
	{"apple2", "appleii", "Apple II", "dsk"}, {"c128", "c128", "Commodore 128", "d71"},
	{"bbc", "bbcmicro", "BBC Microcomputer System", "ssd"}, {"thomson", "thomson-mo5", "Thomson MO5", "k7"},
}

// Words of synthetic names: about 30,000 combinations, times nine numbers.
var (
	synthAdjectives = sync.OnceValue(func() []string {
		return strings.Fields("Crystal Iron Silent Golden Hidden Neon Lost Frozen Burning Velvet Hollow Broken " +
			"Rapid Ancient Electric Shadow Lunar Solar Wild Royal Savage Tiny Mighty Crimson Emerald Cosmic Turbo Final " +
			"Eternal Thunder Mystic Atomic")
	})
	synthNouns = sync.OnceValue(func() []string {
		return strings.Fields("Harbor Kingdom Circuit Fortress Garden Engine Legend Voyage Arena Tower Forest " +
			"Galaxy Canyon Dragon Knight Racer Pilot Island Temple Castle Comet Ninja Robot Wizard Pirate Falcon Tiger " +
			"Ghost Warrior Planet Rocket Ocean")
	})
	synthSuffixes = sync.OnceValue(func() []string {
		return strings.Fields("Adventure Tactics Chronicles Saga Quest Rally Strikers Odyssey Legends Warriors " +
			"Heroes Deluxe Arcade Party Blast Battle Dash Fighters Story Trials Masters Rush Zero Origins Unleashed " +
			"Revenge Returns Frontier Horizon Invasion Redux")
	})
	synthRegions = []string{"USA", "Europe", "Japan", "World", "USA, Europe"}
	synthGenres  = []string{"Action", "Adventure", "Platform", "Racing", "Shooter", "Puzzle", "Sport", "Role-playing (RPG)"}
)

// splitmix64 mixes an id into well-spread bits.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (l *library) addSynthetic(scale Scale) {
	l.synth = synthetic{lib: l}
	if scale.ROMs == 0 {
		return
	}
	taken := map[string]bool{}
	for _, p := range l.platforms {
		taken[p.FSSlug] = true
	}
	var defs []Platform
	for _, sp := range synthPlatforms {
		if !taken[sp.fs] {
			defs = append(defs, Platform{Slug: sp.slug, FSSlug: sp.fs, Name: sp.name, Category: "Console", Hashable: true, ext: sp.ext})
		}
	}
	for i := len(defs); i < scale.Platforms; i++ {
		fs := fmt.Sprintf("synthetic-%03d", i+1)
		defs = append(defs, Platform{Slug: fs, FSSlug: fs, Name: fmt.Sprintf("Synthetic System %d", i+1), Hashable: true, ext: "bin"})
	}
	defs = defs[:scale.Platforms]
	for _, p := range defs {
		p.ID = len(l.platforms) + 1
		l.platforms = append(l.platforms, p)
		l.synth.platforms = append(l.synth.platforms, p.ID)
	}
	maxFile := 0
	for id := range l.fileIndex {
		maxFile = max(maxFile, id)
	}
	l.synth.n = scale.ROMs
	l.synth.firstID = len(l.fixture) + 1
	l.synth.firstFileID = maxFile + 1
}

func (s synthetic) has(id int) bool { return id >= s.firstID && id < s.firstID+s.n }

func (s synthetic) fileROM(fileID int) (int, bool) {
	i := fileID - s.firstFileID
	if i < 0 || i >= s.n {
		return 0, false
	}
	return s.firstID + i, true
}

func (s synthetic) platformOf(id int) int { return s.platforms[(id-s.firstID)%len(s.platforms)] }

// name is the synthetic ROM's name: three words and a number, from the id's
// hash, so names repeat now and then, as titles do across platforms.
func (s synthetic) name(id int) string {
	h := splitmix64(uint64(id))
	pick := func(words []string, bits uint64) string { return words[bits%uint64(len(words))] }
	return fmt.Sprintf("%s %s %s %d", pick(synthAdjectives(), h), pick(synthNouns(), h>>8), pick(synthSuffixes(), h>>16), 1+(h>>24)%9)
}

// missing: every seventh synthetic ROM is a row without a file, as on the
// large libraries ROMarr was written against.
func (s synthetic) missing(id int) bool { return (id-s.firstID)%7 == 6 }

// fsName is name plus region and the platform's extension.
func (s synthetic) fsName(id int) string {
	h := splitmix64(uint64(id))
	p := s.lib.platforms[s.platformOf(id)-1]
	return fmt.Sprintf("%s (%s).%s", s.name(id), synthRegions[(h>>32)%uint64(len(synthRegions))], p.ext)
}

func (s synthetic) size(id int) int { return 256 + int((splitmix64(uint64(id))>>40)%1024) }

// meta is synthetic ROM id without its bytes and hashes: what filters read.
func (s synthetic) meta(id int) ROM {
	h := splitmix64(uint64(id))
	return ROM{ID: id, PlatformID: s.platformOf(id), Name: s.name(id), FSName: s.fsName(id),
		MissingFromFS: s.missing(id), Regions: []string{synthRegions[(h>>32)%uint64(len(synthRegions))]},
		Genres: []string{synthGenres[(h>>48)%uint64(len(synthGenres))]}, PlayerCount: "1"}
}

// rom materialises synthetic ROM id with its single file: 256 to 1,279
// bytes derived from the id, hashed raw (a synthetic ".zip" is not a zip,
// and RomM hashes an archive it cannot read raw too).
func (s synthetic) rom(id int) ROM {
	r := s.meta(id)
	p := s.lib.platforms[r.PlatformID-1]
	data := fill(fmt.Sprintf("synthetic-%d", id), s.size(id))
	r.Hashes = hashBytes(data)
	r.Files = []File{{ID: s.firstFileID + (id - s.firstID), ROMID: id, FileName: r.FSName, FilePath: "roms/" + p.FSSlug,
		Bytes: data, Hashes: r.Hashes, TopLevel: true}}
	return r
}
