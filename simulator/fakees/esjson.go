package fakees

import (
	"sort"
	"strconv"
	"strings"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// view is what ES keeps in SystemData::sSystemVector: a real system or an
// auto collection, with the games it lists.
type view struct {
	sys        library.System
	collection bool
	games      []library.Game
	hidden     bool // not visible: Kid mode with nothing to show (SystemData::isVisible)
}

// collectionDecls are ES's auto collections that the fake supports
// (CollectionSystemManager.cpp:39-41), in the order ES lists them (a
// std::map keyed by name, so alphabetical).
var collectionDecls = [...]struct{ name, fullname, theme string }{
	{"all", "all games", "auto-allgames"},
	{"favorites", "favorites", "auto-favorites"},
	{"recent", "last played", "auto-lastplayed"},
}

// lastPlayedMax is LAST_PLAYED_MAX: the "recent" collection keeps 50 games.
const lastPlayedMax = 50

func (s *Server) collectionEnabled(name string) bool {
	for _, c := range s.cfg.Collections {
		if c == name {
			return true
		}
	}
	return false
}

// views lists every system and enabled collection in ES's order.
func (s *Server) views() []view {
	var out []view
	for _, sys := range s.lib.Systems() {
		out = append(out, view{sys: sys, games: s.lib.Games(sys.Name)})
	}
	var all []library.Game
	for _, d := range collectionDecls {
		if !s.collectionEnabled(d.name) {
			continue
		}
		if all == nil {
			all = s.lib.AllGames()
		}
		out = append(out, s.collectionView(d.name, all))
	}
	if s.uiKid() {
		for i := range out {
			out[i].games = kidGames(out[i].games)
			// In Kid mode an empty system is hidden, and so is an empty collection but favorites
			// (SystemData::isVisible; seen on the real ES: /systems lists them "visible": "false").
			out[i].hidden = len(out[i].games) == 0 && !(out[i].collection && out[i].sys.Name == "favorites")
		}
	}
	return out
}

// kidGames are the games Kid mode shows: kidgame true (es-app FileData's kid filter).
func kidGames(games []library.Game) []library.Game {
	var out []library.Game
	for _, g := range games {
		if g.Meta("kidgame") == "true" {
			out = append(out, g)
		}
	}
	return out
}

// view finds one system or enabled collection by name (SystemData::getSystem).
func (s *Server) view(name string) (view, bool) {
	if sys, ok := s.lib.System(name); ok {
		return view{sys: sys, games: s.lib.Games(name)}, true
	}
	if !s.collectionEnabled(name) {
		return view{}, false
	}
	for _, d := range collectionDecls {
		if d.name == name {
			return s.collectionView(name, s.lib.AllGames()), true
		}
	}
	return view{}, false
}

func (s *Server) collectionView(name string, all []library.Game) view {
	v := view{collection: true}
	for _, d := range collectionDecls {
		if d.name == name {
			v.sys = library.System{Name: d.name, FullName: d.fullname, HardwareType: "auto collection",
				Manufacturer: "Collections", Theme: d.theme}
		}
	}
	for _, g := range all {
		switch {
		case name == "all",
			name == "favorites" && g.Favorite(),
			// ES compares the strings: playcount > "0".
			name == "recent" && g.Value("playcount") > "0":
			v.games = append(v.games, g)
		}
	}
	if name == "recent" {
		sort.SliceStable(v.games, func(i, j int) bool {
			return v.games[i].Value("lastplayed") > v.games[j].Value("lastplayed")
		})
		if len(v.games) > lastPlayedMax {
			v.games = v.games[:lastPlayedMax]
		}
		return v
	}
	sort.SliceStable(v.games, func(i, j int) bool {
		return strings.ToLower(v.games[i].Name) < strings.ToLower(v.games[j].Name)
	})
	return v
}

// findGame is HttpApi::findFileData: a game of the view by id.
func (v view) findGame(id string) (library.Game, bool) {
	for _, g := range v.games {
		if g.ID == id {
			return g, true
		}
	}
	return library.Game{}, false
}

// writeSystem is HttpApi::getSystemDataJson. The fake has no theme, so no
// "logo" key, like the captured build.
func writeSystem(w *prettyWriter, v view) {
	w.startObject()
	w.kv("name", v.sys.Name)
	w.kv("fullname", v.sys.FullName)
	w.kv("hardwareType", v.sys.HardwareType)
	w.kv("manufacturer", v.sys.Manufacturer)
	if v.sys.ReleaseYear != 0 {
		w.key("releaseYear")
		w.integer(v.sys.ReleaseYear)
	}
	// ES writes "theme" twice: the metadata theme folder, then the folder
	// in use. Both are the same here.
	w.kv("theme", v.sys.Theme)
	w.kv("theme", v.sys.Theme)
	if len(v.sys.Extensions) > 0 {
		w.key("extensions")
		w.startArray()
		for _, e := range v.sys.Extensions {
			w.str(e)
		}
		w.endArray()
	}
	w.kv("visible", strconv.FormatBool(!v.hidden))
	w.kv("collection", strconv.FormatBool(v.collection))
	w.kv("gamesystem", "true")
	w.kv("groupsystem", "false")
	c := countGames(v.games)
	w.key("totalGames")
	w.integer(len(v.games))
	w.key("visibleGames")
	w.integer(len(v.games))
	w.key("favoriteGames")
	w.integer(c.favorites)
	w.key("playedGames")
	w.integer(c.played)
	w.key("hiddenGames")
	w.integer(c.hidden)
	w.kv("mostPlayedGame", c.mostPlayed)
	w.endObject()
}

type gameCounts struct {
	favorites, played, hidden int
	mostPlayed                string
}

// countGames is SystemData::getGameCountInfo: the most played game is the
// one with the longest gametime, else the one with the highest playcount.
func countGames(games []library.Game) gameCounts {
	var c gameCounts
	mostCount, mostTime := 0, 0
	byCount := ""
	for _, g := range games {
		if g.Favorite() {
			c.favorites++
		}
		if g.Hidden() {
			c.hidden++
		}
		if n := g.PlayCount(); n > 0 {
			c.played++
			if n > mostCount {
				byCount, mostCount = g.Name, n
			}
		}
		if t := g.GameTime(); t > 0 && t > mostTime {
			c.mostPlayed, mostTime = g.Name, t
		}
	}
	if c.mostPlayed == "" {
		c.mostPlayed = byCount
	}
	return c
}

// writeGame is HttpApi::getFileDataJson.
// writeGame writes a game as ES's JSON. lib, when given, is the library
// whose media paths localpaths=true resolves: ES holds a gamelist's "./"
// paths resolved against the system's folder and serves them so.
func writeGame(w *prettyWriter, decls []library.MetaDecl, g library.Game, lib *library.Library) {
	localpaths := lib != nil
	w.startObject()
	w.kv("id", g.ID)
	w.kv("path", g.Path)
	w.kv("name", g.Name)
	w.kv("systemName", g.System)
	for _, d := range decls {
		v := g.Value(d.Key)
		if v == "" {
			continue
		}
		switch {
		case d.Path && !localpaths:
			v = "/systems/" + g.System + "/games/" + g.ID + "/media/" + d.Key
		case d.Path:
			if abs := lib.MediaPath(g, d.Key); abs != "" {
				v = abs
			}
		}
		w.kv(d.Key, v)
	}
	w.endObject()
}

func systemsJSON(vs []view) []byte {
	var w prettyWriter
	w.startArray()
	for _, v := range vs {
		writeSystem(&w, v)
	}
	w.endArray()
	return w.b
}

func systemJSON(v view) []byte {
	var w prettyWriter
	writeSystem(&w, v)
	return w.b
}

func (s *Server) gamesJSON(games []library.Game) []byte {
	w := prettyWriter{b: make([]byte, 0, 700*len(games)+2)}
	w.startArray()
	for _, g := range games {
		writeGame(&w, s.decls, g, nil)
	}
	w.endArray()
	return w.b
}

func (s *Server) gameJSON(g library.Game, localpaths bool) []byte {
	var w prettyWriter
	var lib *library.Library
	if localpaths {
		lib = s.lib
	}
	writeGame(&w, s.decls, g, lib)
	return w.b
}

func capsJSON(version string) []byte {
	var w prettyWriter
	w.startObject()
	w.kv("Version", version)
	w.key("SortName")
	w.boolean(false)
	w.endObject()
	return w.b
}
