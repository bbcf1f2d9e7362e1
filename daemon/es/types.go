package es

import "time"

// System is one entry of GET /systems: a game system, an auto collection
// ("all", "favorites", "recent"), a custom collection or a group.
type System struct {
	Name         string // ES's id: "nes", "favorites"
	FullName     string
	HardwareType string // "console", "arcade", "auto collection", ... ("" when unknown)
	Manufacturer string
	ReleaseYear  int // 0 when unknown
	Theme        string
	Extensions   []string
	Group        string
	Visible      bool
	Collection   bool
	GameSystem   bool
	GroupSystem  bool

	TotalGames    int
	VisibleGames  int
	FavoriteGames int
	PlayedGames   int // games with a playcount above 0
	HiddenGames   int
	MostPlayed    string // name of the game with the longest play time, else the most launched
	Logo          string // API URL (or theme path); "" without a theme logo
}

// IsGameSystem reports whether s holds ROMs of its own: a game system that
// is not a collection.
func (s System) IsGameSystem() bool { return s.GameSystem && !s.Collection }

// GameSystems keeps the real game systems of a /systems list, in order.
func GameSystems(all []System) []System {
	var out []System
	for _, s := range all {
		if s.IsGameSystem() {
			out = append(out, s)
		}
	}
	return out
}

// Game is one game as ES describes it. Text fields are ES's data as is
// (gamelist and scraper content: untrusted); values ES could not have sent
// decode to the zero value.
type Game struct {
	ID     string // md5 of Path: ES's game id
	Path   string // full ROM path as ES stores it (what POST /launch matches)
	Name   string
	System string // source system, even when listed through a collection

	Desc             string
	Genre            string
	Genres           string // ES genre ids, derived from Genre
	Players          string // e.g. "1-2"
	Developer        string
	Publisher        string
	Family           string
	ArcadeSystemName string
	Tags             string
	SortName         string
	Emulator, Core   string // per-game overrides; usually ""
	Region, Lang     string
	CRC32, MD5       string
	ScraperID        string // ScreenScraper id ("scraperId")

	Rating      float64   // 0..1
	ReleaseDate time.Time // zero when unknown
	Favorite    bool
	Hidden      bool
	KidGame     bool
	PlayCount   int
	GameTime    int64     // total play time, seconds
	LastPlayed  time.Time // zero when never played

	// Media: API URLs such as /systems/nes/games/<id>/media/image (relative
	// to the base URL), or file paths when fetched with localpaths.
	Image, Video, Marquee, Thumbnail, FanArt, Manual string
	// More media, in ES's words (MetaData.cpp): Marquee is the "Logo"
	// slot, which ES's scraper fills with the wheel; Thumbnail is "Box";
	// Wheel, BoxArt ("Alt BoxArt"), BoxBack, Cartridge and Mix are not
	// scraped by default.
	TitleShot, Magazine, Map, Bezel, Cartridge, BoxArt, BoxBack, Wheel, Mix string
}

// Caps is GET /caps.
type Caps struct {
	Version  string // batocera-version's first line: "42", or "43cu ..." with flag letters
	SortName bool
}
