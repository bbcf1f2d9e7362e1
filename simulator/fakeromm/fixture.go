package fakeromm

import "fmt"

// Fixture platform ids, for tests that ask for one by name.
const (
	PlatformNES = iota + 1
	PlatformSNES
	PlatformMegaDrive // slug genesis, fs_slug megadrive (Batocera's folder)
	PlatformPSX
	PlatformGB
	PlatformSuperFamicom // slug snes, fs_slug sfam: a folder Batocera does not have
	PlatformIOS          // maps to no Batocera system; RomM does not hash it
	fixturePlatforms     = PlatformIOS
)

// Fixture ROM ids.
const (
	ROMAlphaQuest    = iota + 1 // nes, one .nes file
	ROMBetaRacer                // nes, a zip with one member
	ROMCosmicCrusade            // snes, one .sfc file
	ROMDeltaForce               // megadrive, a zip with several members (one excluded, one directory)
	ROMEchoChamber              // psx, a folder: two discs as .cue/.bin
	ROMFoxtrotTales             // gb
	ROMGammaGears               // sfam
	ROMHotelHavoc               // ios: hashes empty
	ROMIotaInvaders             // nes, missing from the filesystem
	ROMAncientZeta              // snes, "The Ancient Zeta": sorted under A, after Alpha
	fixtureROMs      = ROMAncientZeta
)

func (l *library) addFixture() error {
	l.platforms = []Platform{
		{ID: PlatformNES, Slug: "nes", FSSlug: "nes", Name: "Nintendo Entertainment System", Category: "Console", Generation: 3, FamilyName: "Nintendo", FamilySlug: "nintendo", Hashable: true},
		{ID: PlatformSNES, Slug: "snes", FSSlug: "snes", Name: "Super Nintendo Entertainment System", Category: "Console", Generation: 4, FamilyName: "Nintendo", FamilySlug: "nintendo", Hashable: true},
		{ID: PlatformMegaDrive, Slug: "genesis", FSSlug: "megadrive", Name: "Sega Mega Drive/Genesis", Category: "Console", Generation: 4, FamilyName: "Sega", FamilySlug: "sega", Hashable: true},
		{ID: PlatformPSX, Slug: "psx", FSSlug: "psx", Name: "PlayStation", Category: "Console", Generation: 5, FamilyName: "PlayStation", FamilySlug: "playstation", Hashable: true},
		{ID: PlatformGB, Slug: "gb", FSSlug: "gb", Name: "Game Boy", Category: "Portable Console", Generation: 4, FamilyName: "Nintendo", FamilySlug: "nintendo", Hashable: true},
		{ID: PlatformSuperFamicom, Slug: "snes", FSSlug: "sfam", Name: "Super Nintendo Entertainment System", CustomName: "Super Famicom", Category: "Console", Generation: 4, FamilyName: "Nintendo", FamilySlug: "nintendo", Hashable: true},
		{ID: PlatformIOS, Slug: "ios", FSSlug: "ios", Name: "iOS", Category: "Operating System", FamilyName: "Apple", FamilySlug: "apple"},
	}

	deltaMembers := []zipEntry{ // written unsorted; RomM sorts before hashing
		{"readme.txt", []byte("Delta Force Rally\r\nInsert coin.\r\n")},
		{"Delta Force Rally (USA, Europe).md", fill("delta-md", 12288)},
		{"DELTA.CFG", []byte("[controls]\nP1=pad\n")},
		{"extras/", nil},
		{"extras/map.bin", fill("delta-map", 1024)},
		{"settings.ini", []byte("[video]\nscale=2\n")}, // excluded by extension
	}
	deltaZip, err := buildZip(deltaMembers)
	if err != nil {
		return err
	}
	betaZip, err := buildZip([]zipEntry{{"Beta Racer (Europe).nes", nesImage("beta-racer")}})
	if err != nil {
		return err
	}
	disc := func(n int) (cue, bin string) {
		base := fmt.Sprintf("Echo Chamber (USA) (Disc %d)", n)
		return base + ".cue", base + ".bin"
	}
	cue1, bin1 := disc(1)
	cue2, bin2 := disc(2)

	type spec struct {
		rom   ROM
		files []zipEntry // one file: fs_name is the file; several: a folder
	}
	specs := []spec{
		{ROM{PlatformID: PlatformNES, Name: "Alpha Quest", FSName: "Alpha Quest (USA).nes", IGDBID: 1101,
			Regions: []string{"USA"}, Languages: []string{"En"}, Genres: []string{"Adventure"}, Franchises: []string{"Quest"},
			Companies: []string{"Northwind Games"}, GameModes: []string{"Single player"}, PlayerCount: "1",
			ReleaseMillis: 599616000000, Rating: 71.5, Summary: "A knight looks for the first letter."},
			[]zipEntry{{"Alpha Quest (USA).nes", nesImage("alpha-quest")}}},
		{ROM{PlatformID: PlatformNES, Name: "Beta Racer", FSName: "Beta Racer (Europe).zip", IGDBID: 1102,
			Regions: []string{"Europe"}, Languages: []string{"En", "Fr", "De"}, Genres: []string{"Racing"},
			Companies: []string{"Southpaw"}, GameModes: []string{"Single player", "Multiplayer"}, PlayerCount: "1-2",
			ReleaseMillis: 631152000000, Rating: 64},
			[]zipEntry{{"Beta Racer (Europe).zip", betaZip}}},
		{ROM{PlatformID: PlatformSNES, Name: "Cosmic Crusade", FSName: "Cosmic Crusade (USA).sfc", IGDBID: 1103,
			Regions: []string{"USA"}, Languages: []string{"En"}, Genres: []string{"Shooter"}, Franchises: []string{"Crusade"},
			Companies: []string{"Northwind Games"}, GameModes: []string{"Single player"}, PlayerCount: "1",
			ReleaseMillis: 725846400000, Rating: 88},
			[]zipEntry{{"Cosmic Crusade (USA).sfc", fill("cosmic-crusade", 16384)}}},
		{ROM{PlatformID: PlatformMegaDrive, Name: "Delta Force Rally", FSName: "Delta Force Rally (USA, Europe).zip", IGDBID: 1104,
			Regions: []string{"USA", "Europe"}, Languages: []string{"En"}, Genres: []string{"Racing"},
			Companies: []string{"Southpaw"}, GameModes: []string{"Single player", "Multiplayer"}, PlayerCount: "1-4",
			Collections: []string{"Rally Legends"}, ReleaseMillis: 757382400000, Rating: 77},
			[]zipEntry{{"Delta Force Rally (USA, Europe).zip", deltaZip}}},
		{ROM{PlatformID: PlatformPSX, Name: "Echo Chamber", FSName: "Echo Chamber (USA)", Folder: true, IGDBID: 1105,
			Regions: []string{"USA"}, Languages: []string{"En"}, Genres: []string{"Puzzle", "Adventure"},
			Companies: []string{"Hollow Tone"}, GameModes: []string{"Single player"}, PlayerCount: "1",
			ReleaseMillis: 883612800000, Rating: 81},
			[]zipEntry{
				{cue1, cueSheet(bin1)}, {bin1, fill("echo-disc-1", 2352*4)},
				{cue2, cueSheet(bin2)}, {bin2, fill("echo-disc-2", 2352*3)},
			}},
		{ROM{PlatformID: PlatformGB, Name: "Foxtrot Tales", FSName: "Foxtrot Tales (World).gb", IGDBID: 1106,
			Regions: []string{"World"}, Languages: []string{"En", "Ja"}, Genres: []string{"Role-playing (RPG)"}, Franchises: []string{"Quest"},
			Companies: []string{"Northwind Games"}, GameModes: []string{"Single player"}, PlayerCount: "1",
			ReleaseMillis: 662688000000, Rating: 69},
			[]zipEntry{{"Foxtrot Tales (World).gb", fill("foxtrot-tales", 32768)}}},
		{ROM{PlatformID: PlatformSuperFamicom, Name: "Gamma Gears", FSName: "Gamma Gears (Japan).sfc",
			Regions: []string{"Japan"}, Languages: []string{"Ja"}},
			[]zipEntry{{"Gamma Gears (Japan).sfc", fill("gamma-gears", 8192)}}},
		{ROM{PlatformID: PlatformIOS, Name: "Hotel Havoc", FSName: "Hotel Havoc.ipa"},
			[]zipEntry{{"Hotel Havoc.ipa", fill("hotel-havoc", 2048)}}},
		{ROM{PlatformID: PlatformNES, Name: "Iota Invaders", FSName: "Iota Invaders (USA).nes", MissingFromFS: true, IGDBID: 1109,
			Regions: []string{"USA"}, Languages: []string{"En"}, Genres: []string{"Shooter"}, GameModes: []string{"Single player"},
			PlayerCount: "1", ReleaseMillis: 536457600000, Rating: 55},
			[]zipEntry{{"Iota Invaders (USA).nes", nesImage("iota-invaders")}}},
		{ROM{PlatformID: PlatformSNES, Name: "The Ancient Zeta", FSName: "The Ancient Zeta (USA) (Rev 1).sfc", IGDBID: 1110,
			Revision: "Rev 1", Regions: []string{"USA"}, Languages: []string{"En"}, Genres: []string{"Adventure", "Role-playing (RPG)"},
			Franchises: []string{"Zeta"}, Companies: []string{"Hollow Tone"}, GameModes: []string{"Single player"}, PlayerCount: "1",
			ReleaseMillis: 700000000000, Rating: 93},
			[]zipEntry{{"The Ancient Zeta (USA) (Rev 1).sfc", fill("ancient-zeta", 16384)}}},
	}
	fileID := 0
	for i, sp := range specs {
		r := sp.rom
		r.ID = i + 1
		p := l.platforms[r.PlatformID-1]
		r.Files, r.Hashes = scanFiles(r, p, sp.files, &fileID)
		for j, f := range r.Files {
			l.fileIndex[f.ID] = [2]int{i, j}
		}
		l.fixture = append(l.fixture, r)
	}

	scph := fill("scph5501", 4096)
	gbBIOS := fill("dmg-boot", 256)
	l.firmware = []Firmware{
		{ID: 1, PlatformID: PlatformPSX, FileName: "scph5501.bin", Bytes: scph, Hashes: hashBytes(scph)},
		{ID: 2, PlatformID: PlatformGB, FileName: "gb_bios.bin", Bytes: gbBIOS, Hashes: hashBytes(gbBIOS)},
	}
	l.colls = []collection{
		{id: 1, name: "Favourites", romIDs: []int{ROMAlphaQuest, ROMCosmicCrusade}, favorite: true},
		{id: 2, name: "Couch co-op", desc: "Games for two or more at the cabinet", romIDs: []int{ROMBetaRacer, ROMDeltaForce, ROMEchoChamber}, public: true},
	}
	l.smart = []smartCollection{
		{id: 1, name: "Handhelds", desc: "Everything for the Game Boy",
			criteria: map[string]any{"platform_ids": []int{PlatformGB}}, summary: "Platform: Game Boy", platformIDs: []int{PlatformGB}},
	}
	return nil
}

// scanFiles builds a ROM's RomFiles and ROM-level hashes as RomM's scanner
// does (handler/filesystem/roms_handler.py get_rom_files): a lone archive
// gets the composite of its members; a lone file its own hashes; a folder
// per-file hashes and a ROM-level hash over its top-level files, fed in
// name order (RomM feeds them in os.walk order, which is whatever order
// the directory lists in, so a folder's ROM-level hash is not reproducible
// across RomM servers either; per-file hashes are).
func scanFiles(r ROM, p Platform, entries []zipEntry, nextID *int) ([]File, Hashes) {
	fsPath := "roms/" + p.FSSlug
	var files []File
	newFile := func(name, dir string, data []byte, h Hashes, members []Member) {
		*nextID++
		files = append(files, File{ID: *nextID, ROMID: r.ID, FileName: name, FilePath: dir, Bytes: data,
			Hashes: h, ArchiveMembers: members, TopLevel: true})
	}
	if !r.Folder {
		e := entries[0]
		if !p.Hashable {
			newFile(e.name, fsPath, e.data, Hashes{}, nil)
			return files, Hashes{}
		}
		if isArchive(e.name) {
			h, members := hashArchive(e.data)
			newFile(e.name, fsPath, e.data, h, members)
			return files, h
		}
		h := hashBytes(e.data)
		newFile(e.name, fsPath, e.data, h, nil)
		return files, h
	}
	dir := fsPath + "/" + r.FSName
	rom := newHasher()
	for _, e := range sortedEntries(entries) {
		if !p.Hashable {
			newFile(e.name, dir, e.data, Hashes{}, nil)
			continue
		}
		stream := folderStream(e.name, e.data)
		rom.Write(stream)
		newFile(e.name, dir, e.data, hashBytes(stream), nil)
	}
	if !p.Hashable {
		return files, Hashes{}
	}
	return files, rom.sum()
}

func sortedEntries(in []zipEntry) []zipEntry {
	out := append([]zipEntry(nil), in...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].name < out[j-1].name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
