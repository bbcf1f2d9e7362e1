package library

import "strings"

// fixtureGame is one gamelist entry of the fixture tables.
type fixtureGame struct {
	file, name string
	meta       map[string]string
}

// Captured returns the library the real ES served when es-captures/ was
// recorded: one nes system (without es_systems metadata, as in that build)
// holding the four captured games in ES's list order, with Plain.nes in its
// captured state. The golden conformance test serves it.
func Captured(romsRoot string) *Library {
	l := New(romsRoot)
	nes := nesSystem()
	nes.Extensions = []string{".nes", ".zip"}
	nes.HardwareType, nes.Manufacturer, nes.ReleaseYear = "", "", 0
	l.mustAdd(nes, capturedNES())
	return l
}

// Fixture returns the deterministic library shared by tests and the
// simulator: libretro systems nes, snes, megadrive and mame and a standalone
// gamecube, with names that exercise every quirk (spaces, parentheses, a
// stem with "(" and no space, apostrophes, "$", "&", "!", quotes, accents,
// emoji, control and bidi characters, titles present on two systems) and
// full gamelist metadata. nes starts with the four captured games.
func Fixture(romsRoot string) *Library {
	l := New(romsRoot)
	l.mustAdd(nesSystem(), append(capturedNES(), moreNES()...))
	l.mustAdd(snesSystem(), snesGames())
	l.mustAdd(megadriveSystem(), megadriveGames())
	l.mustAdd(mameSystem(), mameGames())
	l.mustAdd(gamecubeSystem(), gamecubeGames())
	return l
}

// mustAdd panics on a broken fixture table: that is a programming error in
// this file, caught by the package's tests.
func (l *Library) mustAdd(s System, games []fixtureGame) {
	if err := l.AddSystem(s); err != nil {
		panic(err)
	}
	for _, g := range games {
		if _, err := l.AddGame(s.Name, g.file, g.name, g.meta); err != nil {
			panic(err)
		}
	}
}

func nesSystem() System {
	return System{Name: "nes", FullName: "Nintendo Entertainment System", HardwareType: "console",
		Manufacturer: "Nintendo", ReleaseYear: 1985, Theme: "nes",
		Extensions: []string{".nes", ".unif", ".unf", ".zip", ".7z"},
		Libretro:   true, Emulator: "libretro", Core: "nestopia", CoreName: "Nestopia", RetroArchSystem: "nes"}
}

func snesSystem() System {
	return System{Name: "snes", FullName: "Super Nintendo Entertainment System", HardwareType: "console",
		Manufacturer: "Nintendo", ReleaseYear: 1990, Theme: "snes",
		Extensions: []string{".smc", ".fig", ".sfc", ".gd3", ".gd7", ".dx2", ".bsx", ".swc", ".zip", ".7z"},
		Libretro:   true, Emulator: "libretro", Core: "snes9x", CoreName: "Snes9x", RetroArchSystem: "super_nes"}
}

func megadriveSystem() System {
	return System{Name: "megadrive", FullName: "Mega Drive", HardwareType: "console",
		Manufacturer: "Sega", ReleaseYear: 1988, Theme: "megadrive",
		Extensions: []string{".bin", ".gen", ".md", ".sg", ".smd", ".zip", ".7z"},
		Libretro:   true, Emulator: "libretro", Core: "genesisplusgx", CoreName: "Genesis Plus GX", RetroArchSystem: "mega_drive"}
}

func mameSystem() System {
	return System{Name: "mame", FullName: "MAME", HardwareType: "arcade",
		Manufacturer: "Arcade", ReleaseYear: 1997, Theme: "mame",
		Extensions: []string{".zip", ".7z"},
		Libretro:   true, Emulator: "libretro", Core: "mame", CoreName: "MAME", RetroArchSystem: "arcade"}
}

func gamecubeSystem() System {
	return System{Name: "gamecube", FullName: "GameCube", HardwareType: "console",
		Manufacturer: "Nintendo", ReleaseYear: 2001, Theme: "gamecube",
		Extensions: []string{".gcm", ".iso", ".gcz", ".ciso", ".wbfs", ".rvz", ".elf", ".dol", ".m3u"},
		Emulator:   "dolphin", Core: "dolphin"}
}

// capturedNES are the four games of es-captures, in the order ES listed them.
func capturedNES() []fixtureGame {
	return []fixtureGame{
		{file: "Mario_(USA).nes"},
		{file: "Plain.nes", name: "Plain Game", meta: map[string]string{
			"desc": "A test entry.", "genre": "Platform", "image": "./images/plain.png",
			"rating": "0.8", "releasedate": "19850913T000000", "genres": "7", "players": "1-2",
			"favorite": "true", "playcount": "3", "lastplayed": "20240101T120000", "gametime": "125"}},
		{file: "Tom's $Game.nes"},
		{file: "Super Mario Bros. (World).nes"},
	}
}

func moreNES() []fixtureGame {
	return []fixtureGame{
		{file: "The Legend of Zelda (USA).nes", name: "The Legend of Zelda", meta: map[string]string{
			"desc":  "Link sets out across Hyrule to rescue Princess Zelda and recover the Triforce of Wisdom.",
			"genre": "Action-Adventure", "image": "./images/The Legend of Zelda (USA)-image.png",
			"marquee": "./images/The Legend of Zelda (USA)-marquee.png",
			"video":   "./videos/The Legend of Zelda (USA)-video.mp4", "rating": "0.9",
			"releasedate": "19860221T000000", "developer": "Nintendo R&D4", "publisher": "Nintendo",
			"players": "1", "favorite": "true", "playcount": "14", "lastplayed": "20250301T201500",
			"gametime": "52310", "region": "us", "lang": "en", "scraperId": "1441"}},
		{file: "Tetris (USA).nes", name: "Tetris", meta: map[string]string{
			"desc": "Falling tetrominoes.", "genre": "Puzzle", "players": "1-2", "rating": "0.85",
			"thumbnail":   "./images/Tetris (USA)-truncated.jpg",
			"releasedate": "19891101T000000", "developer": "Nintendo R&D1", "publisher": "Nintendo",
			"playcount": "5", "lastplayed": "20250110T190000", "gametime": "3600"}},
		{file: "Contra (USA).nes", name: "Contra\x1b[31m RED\x07\tTab", meta: map[string]string{
			"desc": longDesc(), "genre": "Shooter", "players": "1-2", "rating": "0.8",
			"thumbnail": "./images/Contra (USA)-bomb.png", "image": "./images/Contra (USA)-text.png",
			"releasedate": "19870220T000000", "developer": "Konami", "publisher": "Konami"}},
		{file: "Balloon Fight (USA).nes", name: "Balloon Fight \u202Eexe.gnp\u202C \u2066iso\u2069\u200B", meta: map[string]string{
			"genre": "Action", "players": "1-2", "kidgame": "true", "thumbnail": "./images/Balloon Fight (USA).svg"}},
		{file: "Duck Hunt (World).nes", name: "Duck Hunt", meta: map[string]string{
			"genre": "Lightgun Shooter", "players": "1", "hidden": "true", "kidgame": "true",
			"image": "./images/Duck Hunt (World)-huge.png"}},
	}
}

func snesGames() []fixtureGame {
	return []fixtureGame{
		{file: "Super Mario World (USA).sfc", name: "Super Mario World", meta: map[string]string{
			"desc": "Mario and Yoshi explore Dinosaur Land.", "genre": "Platform", "players": "1-2",
			"rating": "0.95", "releasedate": "19901121T000000", "developer": "Nintendo EAD",
			"publisher": "Nintendo", "favorite": "true", "playcount": "21",
			"lastplayed": "20250412T183000", "gametime": "80000", "image": "./images/smw.png"}},
		{file: "Street Fighter II - The World Warrior (USA).sfc", name: "Street Fighter II", meta: map[string]string{
			"genre": "Fighting", "players": "1-2", "rating": "0.85", "releasedate": "19920715T000000",
			"developer": "Capcom", "publisher": "Capcom", "playcount": "4", "gametime": "2400",
			"lastplayed": "20250102T210000"}},
		{file: "Chrono Trigger (USA).sfc", name: "Chrono Trigger", meta: map[string]string{
			"desc": "A time-travelling role-playing game.", "genre": "RPG", "players": "1",
			"rating": "0.98", "releasedate": "19950311T000000", "developer": "Square",
			"publisher": "Square", "playcount": "2", "gametime": "7200", "lastplayed": "20241224T100000",
			"thumbnail": "./images/Chrono Trigger (USA)-missing.png"}},
		{file: "Donkey Kong Country (USA) (Rev 2).sfc", name: "Donkey Kong Country", meta: map[string]string{
			"genre": "Platform", "players": "1-2", "rating": "0.9", "releasedate": "19941121T000000",
			"developer": "Rare", "publisher": "Nintendo"}},
		{file: "Astérix (Europe) (En,Fr,De,Es,It).sfc", name: "Astérix", meta: map[string]string{
			"genre": "Platform", "players": "1", "developer": "Infogrames", "publisher": "Infogrames",
			"region": "eu", "lang": "en,fr,de,es,it"}},
		{file: "Kirby's Dream Course (USA).sfc", name: "Kirby's Dream Course 🌟", meta: map[string]string{
			"genre": "Sports", "players": "1-2", "developer": "HAL Laboratory", "publisher": "Nintendo",
			"rating": "0.7"}},
		{file: "Earthworm Jim 2 (USA).sfc"},
	}
}

func megadriveGames() []fixtureGame {
	return []fixtureGame{
		{file: "Sonic The Hedgehog (USA, Europe).md", name: "Sonic The Hedgehog", meta: map[string]string{
			"desc": "Sonic races through the Green Hill Zone.", "genre": "Platform", "players": "1",
			"rating": "0.9", "releasedate": "19910623T000000", "developer": "Sonic Team",
			"publisher": "Sega", "favorite": "true", "playcount": "9", "gametime": "15400",
			"lastplayed": "20250405T170000", "thumbnail": "./images/Sonic The Hedgehog (USA, Europe)-thumb.jpg"}},
		{file: "Sonic The Hedgehog 2 (World) (Rev A).md", name: "Sonic The Hedgehog 2", meta: map[string]string{
			"genre": "Platform", "players": "1-2", "developer": "Sega Technical Institute", "publisher": "Sega"}},
		{file: "Streets of Rage 2 (USA).md", name: "Streets of Rage 2", meta: map[string]string{
			"genre": "Beat'em Up", "players": "1-2", "rating": "0.9", "developer": "Ancient",
			"publisher": "Sega", "playcount": "1", "gametime": "1800", "lastplayed": "20241031T220000"}},
		{file: "Tetris (Japan).md", name: "Tetris", meta: map[string]string{
			"genre": "Puzzle", "players": "1-2", "developer": "Sega", "publisher": "Sega", "region": "jp"}},
		{file: "ToeJam & Earl (USA, Europe).md", name: "ToeJam & Earl", meta: map[string]string{
			"genre": "Action", "players": "1-2", "developer": "Johnson Voorsanger Productions", "publisher": "Sega"}},
		{file: "Shōgi no Hoshi (Japan).md", name: "Shōgi no Hoshi", meta: map[string]string{
			"genre": "Board game", "players": "1", "region": "jp", "lang": "ja"}},
		{file: "Gunstar Heroes (USA).md", name: "Gunstar Heroes", meta: map[string]string{
			"genre": "Shooter", "players": "1-2", "rating": "0.92", "developer": "Treasure", "publisher": "Sega"}},
	}
}

func mameGames() []fixtureGame {
	return []fixtureGame{
		{file: "sf2.zip", name: "Street Fighter II", meta: map[string]string{
			"genre": "Fighting", "players": "1-2", "developer": "Capcom", "publisher": "Capcom",
			"releasedate": "19910101T000000", "arcadesystemname": "cps1", "playcount": "3",
			"gametime": "900", "lastplayed": "20250320T230000", "region": "World",
			"thumbnail": "./images/sf2-thumb.png", "marquee": "./images/sf2-marquee.png"}},
		{file: "pacman.zip", name: "Pac-Man", meta: map[string]string{
			"genre": "Maze", "players": "1-2", "developer": "Namco", "publisher": "Midway",
			"releasedate": "19800522T000000", "favorite": "true", "playcount": "30",
			"gametime": "9000", "lastplayed": "20250414T120000"}},
		{file: "galaga.zip", name: "Galaga", meta: map[string]string{
			"genre": "Shooter", "players": "1-2", "developer": "Namco", "publisher": "Namco",
			"releasedate": "19810901T000000"}},
		{file: "dkong.zip", name: "Donkey Kong", meta: map[string]string{
			"genre": "Platform", "players": "1-2", "developer": "Nintendo", "publisher": "Nintendo"}},
		{file: "mslug.zip", name: "Metal Slug - Super Vehicle-001", meta: map[string]string{
			"genre": "Run and Gun", "players": "1-2", "developer": "Nazca", "publisher": "SNK",
			"arcadesystemname": "neogeo"}},
		{file: "1942.zip", name: "1942", meta: map[string]string{"genre": "Shooter", "players": "1-2"}},
		{file: "pacplus.zip", name: `Pac-Man Plus "Special" \ Edition`, meta: map[string]string{
			"genre": "Maze", "players": "1-2", "desc": `Quotes " and backslashes \ survive JSON.`}},
	}
}

func gamecubeGames() []fixtureGame {
	return []fixtureGame{
		{file: "Pokémon Colosseum (USA).iso", name: "Pokémon Colosseum", meta: map[string]string{
			"genre": "RPG", "players": "1-2", "developer": "Genius Sonority", "publisher": "Nintendo",
			"releasedate": "20040322T000000"}},
		{file: "Super Smash Bros. Melee (USA) (En,Ja) (Rev 2).rvz", name: "Super Smash Bros. Melee", meta: map[string]string{
			"genre": "Fighting", "players": "1-4", "rating": "0.93", "developer": "HAL Laboratory",
			"publisher": "Nintendo", "favorite": "true", "playcount": "11", "gametime": "40000",
			"lastplayed": "20250413T210000"}},
		{file: "The Legend of Zelda - The Wind Waker (USA).rvz", name: "The Legend of Zelda: The Wind Waker", meta: map[string]string{
			"genre": "Action-Adventure", "players": "1", "developer": "Nintendo EAD", "publisher": "Nintendo"}},
		{file: "Metroid Prime (USA).iso", name: "Metroid Prime", meta: map[string]string{
			"genre": "Action-Adventure", "players": "1", "developer": "Retro Studios", "publisher": "Nintendo"}},
		{file: "Mario Kart - Double Dash!! (USA).rvz", name: "Mario Kart: Double Dash!!", meta: map[string]string{
			"genre": "Racing", "players": "1-4", "developer": "Nintendo EAD", "publisher": "Nintendo",
			"playcount": "6", "gametime": "5400", "lastplayed": "20250215T160000"}},
		{file: "F-Zero GX (USA).rvz", name: "F-Zero GX", meta: map[string]string{
			"genre": "Racing", "players": "1-4", "developer": "Amusement Vision", "publisher": "Nintendo"}},
	}
}

// longDesc is a description longer than 2,000 characters, for truncation
// tests; it ends with a marker so a test can tell it was cut.
func longDesc() string {
	const para = "Bill and Lance fight through the jungle, the base and the alien lair. " +
		"Thirty lives with the Konami code, spread gun first, never the laser. \n"
	return strings.Repeat(para, 16) + "END-OF-LONG-DESC"
}
