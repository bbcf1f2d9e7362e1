package library

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
)

// System is one es_systems entry as ES knows it, plus what the simulator
// needs to start the right fake emulator for it.
type System struct {
	Name         string // es_systems <name>, e.g. "nes"
	FullName     string // es_systems <fullname>
	HardwareType string // "console", "arcade", ... ("" when es_systems has no metadata)
	Manufacturer string
	ReleaseYear  int // 0 = unknown; ES then omits releaseYear from its JSON
	Theme        string
	Extensions   []string

	// Libretro is true for systems that Batocera runs through RetroArch, so
	// the fake RetroArch must come up while one of their games runs.
	Libretro bool
	// Emulator and Core are what Batocera's configgen passes to user scripts
	// (gameStart|gameStop system emulator core rom).
	Emulator string
	Core     string
	// CoreName is the libretro library name RetroArch 1.14 reports in
	// GET_STATUS when it cannot match the core to its info file.
	CoreName string
	// RetroArchSystem is the core info systemid RetroArch reports in
	// GET_STATUS ("nes", "super_nes", ...).
	RetroArchSystem string
}

// Game is a snapshot of one ROM and its gamelist metadata. Snapshots are
// values: the library replaces a game's metadata map on change instead of
// editing it, so a snapshot never changes under its holder.
type Game struct {
	ID     string // lowercase hex md5 of Path, as ES computes it
	System string // source system name
	Path   string // full ROM path exactly as ES stores it
	Name   string // gamelist <name>, or the file stem when there is none
	meta   map[string]string
	pinned bool // kept by Sync without a file (see Pinned)
}

// Meta returns the stored gamelist value of key ("" when unset). Keys are
// ES metadata keys (see MetaDecls); the ScreenScraper id is "scraperId".
func (g Game) Meta(key string) string {
	if key == "name" {
		return g.Name
	}
	return g.meta[key]
}

// Value returns what ES's MetaDataList::get returns: the stored value, or
// the declared default when none is stored.
func (g Game) Value(key string) string {
	if v := g.Meta(key); v != "" {
		return v
	}
	if d, ok := declIndex(key); ok {
		return metaDecls[d].Default
	}
	return ""
}

// MetaKeys lists the keys that have a stored value, in MetaDecls order.
func (g Game) MetaKeys() []string {
	var keys []string
	for _, d := range metaDecls {
		if g.meta[d.Key] != "" {
			keys = append(keys, d.Key)
		}
	}
	return keys
}

// Stem is the file name without extension, as ES's getStem computes it.
func (g Game) Stem() string { return Stem(g.Path) }

// Favorite reports the favorite flag.
func (g Game) Favorite() bool { return g.Value("favorite") == "true" }

// Hidden reports the hidden flag.
func (g Game) Hidden() bool { return g.Value("hidden") == "true" }

// PlayCount is the parsed playcount (0 when absent or invalid).
func (g Game) PlayCount() int { return atoi(g.Value("playcount")) }

// GameTime is the total play time in seconds (0 when absent or invalid).
func (g Game) GameTime() int { return atoi(g.Value("gametime")) }

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// GameID is ES's game id: lowercase hex md5 of the full path
// (HttpApi::getFileDataId).
func GameID(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

// Stem mirrors ES's Utils::FileSystem::getStem: the last path element
// without its extension. A name whose only dot is its first character has an
// empty stem, as in ES.
func Stem(path string) string {
	lastSplit, ext := 0, -1
	for i := len(path) - 1; i >= 0; i-- {
		if ext < 0 && path[i] == '.' {
			ext = i
		}
		if path[i] == '/' || path[i] == '\\' {
			lastSplit = i + 1
			break
		}
	}
	if ext < 0 {
		return path[lastSplit:]
	}
	return path[lastSplit:ext]
}

// MetaDecl is one ES metadata declaration (es-app/src/MetaData.cpp).
type MetaDecl struct {
	Key     string
	Path    bool   // MD_PATH: rewritten to a media URL in the API
	Default string // what MetaDataList::get returns when nothing is stored
}

// metaDecls is MetaDataList::getMDD() in declaration (= JSON emission) order,
// without "name". The ScreenScraper id (MDD key "id") is named "scraperId"
// here, as in the API, so it never clashes with the md5 game id.
var metaDecls = [...]MetaDecl{
	{Key: "desc"}, {Key: "genre"}, {Key: "tags"}, {Key: "sortname"},
	{Key: "emulator"}, {Key: "core"},
	{Key: "image", Path: true}, {Key: "video", Path: true},
	{Key: "marquee", Path: true}, {Key: "thumbnail", Path: true},
	{Key: "fanart", Path: true}, {Key: "titleshot", Path: true},
	{Key: "manual", Path: true}, {Key: "magazine", Path: true},
	{Key: "map", Path: true}, {Key: "bezel", Path: true},
	{Key: "cartridge", Path: true}, {Key: "boxart", Path: true},
	{Key: "boxback", Path: true}, {Key: "wheel", Path: true},
	{Key: "mix", Path: true},
	{Key: "rating", Default: "0.000000"},
	{Key: "releasedate", Default: "not-a-date-time"},
	{Key: "developer"}, {Key: "publisher"}, {Key: "family"}, {Key: "genres"},
	{Key: "arcadesystemname"}, {Key: "players"},
	{Key: "favorite", Default: "false"}, {Key: "hidden", Default: "false"},
	{Key: "kidgame", Default: "false"},
	{Key: "playcount", Default: "0"}, {Key: "lastplayed", Default: "0"},
	{Key: "crc32"}, {Key: "md5"},
	{Key: "gametime", Default: "0"},
	{Key: "lang"}, {Key: "region"}, {Key: "cheevosHash"}, {Key: "cheevosId"},
	{Key: "scraperId"}, {Key: "multidisk"},
}

// MetaDecls returns ES's metadata declarations in emission order (without
// "name", which the API emits first on its own).
func MetaDecls() []MetaDecl { return append([]MetaDecl(nil), metaDecls[:]...) }

func declIndex(key string) (int, bool) {
	for i := range metaDecls {
		if metaDecls[i].Key == key {
			return i, true
		}
	}
	return 0, false
}

// IsPathKey reports whether key is a path-typed (media) metadata key.
func IsPathKey(key string) bool {
	i, ok := declIndex(key)
	return ok && metaDecls[i].Path
}
