package library

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// generatedSystems are real Batocera system names used, in order, after the
// five fixture systems; past the end of the list systems are numbered.
var generatedSystems = [...]string{
	"atari2600", "atari7800", "lynx", "gb", "gbc", "gba", "n64", "nds", "3ds", "wii",
	"psx", "ps2", "psp", "pcengine", "pcenginecd", "mastersystem", "gamegear", "segacd",
	"sega32x", "saturn", "dreamcast", "neogeo", "neogeocd", "fbneo", "amiga500", "amiga1200",
	"c64", "msx1", "msx2", "zxspectrum", "amstradcpc", "dos", "scummvm", "pico8", "ngpc",
	"wswanc", "vectrex", "colecovision", "intellivision", "o2em", "virtualboy", "pokemini",
	"sg1000", "satellaview", "sufami", "fds", "gw", "atari800", "atarist", "x68000",
}

var (
	genAdjectives = [...]string{"Super", "Mega", "Ultra", "Hyper", "Final", "Dark", "Crystal",
		"Iron", "Silent", "Golden", "Shadow", "Lost", "Cosmic", "Wild", "Turbo", "Royal",
		"Little", "Brave", "Secret", "Eternal"}
	genNouns = [...]string{"Dragon", "Quest", "Racer", "Warrior", "Kingdom", "Fighter", "Legend",
		"Galaxy", "Ninja", "Castle", "Island", "Pilot", "Knight", "Planet", "Striker", "Tower",
		"Saga", "Hunter", "Empire", "Odyssey"}
	genRegions  = [...]string{"USA", "Europe", "Japan", "World", "USA, Europe"}
	genGenres   = [...]string{"Platform", "Shooter", "RPG", "Puzzle", "Racing", "Fighting", "Sports", "Action"}
	genPlayers  = [...]string{"1", "1-2", "1-4", "2"}
	genStudios  = [...]string{"Nintendo", "Sega", "Capcom", "Konami", "Namco", "Taito", "Hudson Soft", "SNK"}
	genFirst5   = [...]func() System{nesSystem, snesSystem, megadriveSystem, mameSystem, gamecubeSystem}
	genFirstExt = [...]string{".nes", ".sfc", ".md", ".zip", ".iso"}
)

// Generate returns a deterministic library of n games spread evenly over the
// given number of systems (the five fixture systems first), for benchmarks.
// The same arguments always give the same library. Its games are pinned
// (Game.Pinned): they have no ROM files, and a rescan keeps them.
func Generate(n, systems int, seed int64) *Library {
	return GenerateIn(DefaultRomsRoot, n, systems, seed)
}

// GenerateIn is Generate with ROMs under romsRoot.
func GenerateIn(romsRoot string, n, systems int, seed int64) *Library {
	if systems < 1 {
		systems = 1
	}
	l := New(romsRoot)
	exts := make([]string, systems)
	for i := 0; i < systems; i++ {
		s, ext := generatedSystem(i)
		if err := l.AddSystem(s); err != nil {
			panic(err) // names are unique by construction
		}
		exts[i] = ext
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	combos := len(genAdjectives) * len(genNouns)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < n; i++ {
		si := i % systems
		sys := l.systems[si].Name
		name := genAdjectives[i%len(genAdjectives)] + " " + genNouns[(i/len(genAdjectives))%len(genNouns)]
		if k := i / combos; k > 0 {
			name += " " + strconv.Itoa(k+1)
		}
		path := l.root + "/" + sys + "/" + name + " (" + genRegions[rng.IntN(len(genRegions))] + ")" + exts[si]
		g := Game{ID: GameID(path), System: sys, Path: path, Name: name, meta: generatedMeta(rng), pinned: true}
		if err := l.addLocked(g); err != nil {
			panic(err) // paths are unique by construction
		}
	}
	return l
}

func generatedSystem(i int) (System, string) {
	if i < len(genFirst5) {
		return genFirst5[i](), genFirstExt[i]
	}
	name := fmt.Sprintf("system%02d", i+1)
	if j := i - len(genFirst5); j < len(generatedSystems) {
		name = generatedSystems[j]
	}
	return System{Name: name, FullName: "Generated " + name, HardwareType: "console",
		Manufacturer: genStudios[i%len(genStudios)], ReleaseYear: 1980 + i%30, Theme: name,
		Extensions: []string{".rom", ".zip"}, Libretro: true, Emulator: "libretro",
		Core: "generated", CoreName: "Generated", RetroArchSystem: name}, ".rom"
}

func generatedMeta(rng *rand.Rand) map[string]string {
	m := map[string]string{
		"genre":       genGenres[rng.IntN(len(genGenres))],
		"players":     genPlayers[rng.IntN(len(genPlayers))],
		"developer":   genStudios[rng.IntN(len(genStudios))],
		"publisher":   genStudios[rng.IntN(len(genStudios))],
		"rating":      strconv.FormatFloat(float64(rng.IntN(21))/20, 'f', -1, 64),
		"releasedate": fmt.Sprintf("%04d%02d%02dT000000", 1980+rng.IntN(30), 1+rng.IntN(12), 1+rng.IntN(28)),
		"desc":        "A generated game for benchmarks.",
	}
	if rng.IntN(100) < 30 {
		m["playcount"] = strconv.Itoa(1 + rng.IntN(50))
		m["gametime"] = strconv.Itoa(60 + rng.IntN(36000))
		m["lastplayed"] = fmt.Sprintf("2025%02d%02dT%02d%02d00", 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60))
	}
	if rng.IntN(100) < 5 {
		m["favorite"] = "true"
	}
	return m
}
