package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/tools/search"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Launching by name (issue 30): Home Assistant's text.batocera_play and select.batocera_favorite
// come here. A request is resolved with batocera_find_games' matching, and a clear best match goes
// through the launch path of batocera_launch_game (the household's rules, the launch/quit rate
// limit shared with MCP clients, dry run, ES's confirmation, the tracker told at once).

// Who launched, as the tracker records it (tracker.SourceMCP, tracker.SourceHA).
const (
	ViaMCP = "mcp"
	ViaHA  = "ha"
)

// Bounds of a request.
const (
	maxPlayBytes   = 4 << 10 // the text entity's 255 characters, with room for multibyte ones
	playCandidates = haentities.MaxPlayCandidates
	// playPool is how many hits a request looks at: enough to tell a tie from a clear match.
	playPool = 50
	// maxReason bounds a reason (haentities caps it again).
	maxReason = 300
)

// switchPrefix asks to quit the running game first.
const switchPrefix = "switch to "

// Play resolves a request ("sonic 2 on megadrive", "mario kart snes", "switch to tetris") and
// launches a clear best match; via says who asked (ViaHA). It never returns an error: what went
// wrong is the outcome's Reason. The caller sets the outcome's Query, At and Seq.
func (s *Server) Play(ctx context.Context, request, via string) haentities.PlayOutcome {
	if len(request) > maxPlayBytes {
		return haentities.PlayOutcome{Outcome: haentities.PlayRefused, Reason: fmt.Sprintf("The request is over %d bytes.", maxPlayBytes)}
	}
	text := strings.TrimSpace(untrusted.Clean(request, haentities.MaxPlayRunes))
	switchTo := hasPrefixFold(text, switchPrefix)
	if switchTo {
		text = strings.TrimSpace(text[len(switchPrefix):])
	} else if hasPrefixFold(text, "play ") && strings.TrimSpace(text[len("play "):]) != "" {
		text = strings.TrimSpace(text[len("play "):])
	}
	if text == "" {
		return haentities.PlayOutcome{Outcome: haentities.PlayNotFound, Reason: "Say which game to play."}
	}
	ix, _, err := s.launcher.cat.index(ctx)
	if err != nil {
		return haentities.PlayOutcome{Outcome: haentities.PlayRefused, Reason: reason(esFailure("read the game lists", err))}
	}
	systems, err := s.launcher.es.Systems(ctx)
	if err != nil {
		return haentities.PlayOutcome{Outcome: haentities.PlayRefused, Reason: reason(esFailure("read the systems", err))}
	}
	query, only := splitSystem(text, systems, ix.Systems())
	hits := playHits(ix, query, only)
	full := fullNames(systems)
	switch {
	case len(hits) == 0:
		r := fmt.Sprintf("No game matches %q", query)
		if len(only) > 0 {
			names := make([]string, len(only))
			for i, n := range only {
				names[i] = full(n)
			}
			r += " on " + strings.Join(names, " or ")
		}
		return haentities.PlayOutcome{Outcome: haentities.PlayNotFound, Reason: r + "."}
	case len(hits) > 1 && hits[0].Tier == hits[1].Tier:
		res := haentities.PlayOutcome{Outcome: haentities.PlayAmbiguous}
		for _, h := range hits {
			if h.Tier != hits[0].Tier || len(res.Candidates) == playCandidates {
				break
			}
			res.Candidates = append(res.Candidates, haentities.PlayCandidate{Game: h.Name, System: full(h.System)})
		}
		res.Reason = fmt.Sprintf("%d games match %q; say which one.", len(res.Candidates), query)
		return res
	}
	best := hits[0]
	return s.launcher.playGame(ctx, best.System, best.ID, best.Name, full(best.System), switchTo, via)
}

// Favorite is one of the cabinet's favourites, as the favourites select lists it.
type Favorite struct {
	Option     string // haentities.FavoriteOption: "Name (System)"
	System, ID string
}

// Favorites are ES's favourites, by name, at most haentities.MaxFavorites-1 (the select's first
// option is haentities.FavoriteNone). Options that would read the same are told apart by their
// position.
func (s *Server) Favorites(ctx context.Context) ([]Favorite, error) {
	ix, _, err := s.launcher.cat.index(ctx)
	if err != nil {
		return nil, esFailure("read the game lists", err)
	}
	systems, err := s.launcher.es.Systems(ctx)
	if err != nil {
		return nil, esFailure("read the systems", err)
	}
	full := fullNames(systems)
	r := ix.Find(search.Query{Mode: search.ModeFavorites, Limit: haentities.MaxFavorites - 1})
	out := make([]Favorite, 0, len(r.Hits))
	seen := map[string]int{}
	for _, h := range r.Hits {
		opt := haentities.FavoriteOption(h.Name, full(h.System))
		if seen[opt]++; seen[opt] > 1 {
			opt = haentities.FavoriteOption(fmt.Sprintf("%s #%d", h.Name, seen[opt]), full(h.System))
		}
		out = append(out, Favorite{Option: opt, System: h.System, ID: h.ID})
	}
	return out, nil
}

// PlayFavorite launches a favourite chosen from the select (not while a game runs: a favourite is
// no "switch to").
func (s *Server) PlayFavorite(ctx context.Context, f Favorite, via string) haentities.PlayOutcome {
	g, err := s.launcher.es.LookupGame(ctx, f.System, f.ID)
	name := f.Option
	if err == nil {
		name = gameName(g)
	}
	systems, _ := s.launcher.es.Systems(ctx)
	return s.launcher.playGame(ctx, f.System, f.ID, name, fullNames(systems)(f.System), false, via)
}

// launcher is the one launch path: batocera_launch_game's, Play's and PlayFavorite's.
type launcher struct {
	es       ES
	guard    *guard
	hh       Household
	cat      *catalog
	quit     quitter
	cabinet  string
	launched func(via string, g es.Game) // Deps.Launched
}

// playGame launches one resolved game for a request: refused while a game runs unless
// switchTo (the running game is quit first, through batocera_quit_game's path).
func (l launcher) playGame(ctx context.Context, system, id, name, systemFull string, switchTo bool, via string) haentities.PlayOutcome {
	res := haentities.PlayOutcome{Game: name, System: systemFull}
	refused := func(err error) haentities.PlayOutcome {
		res.Outcome, res.Reason = haentities.PlayRefused, reason(err)
		return res
	}
	running, err := l.es.RunningGame(ctx)
	if err != nil {
		return refused(esFailure("check the running game", err))
	}
	if running != nil {
		if running.System == system && running.ID == id {
			res.Outcome, res.Reason = haentities.PlayLaunched, name+" is already running."
			return res
		}
		if !switchTo {
			return refused(refuse("%s is running. Quit it first, or ask to switch to %s.", gameName(*running), name))
		}
		if _, err := l.quit.quit(ctx, false); err != nil {
			return refused(err)
		}
	}
	a, err := l.launch(ctx, launchArgs{System: system, GameID: id}, via)
	if err != nil {
		return refused(err)
	}
	res.Outcome = haentities.PlayLaunched
	if a.Outcome == outcomeDryRun {
		res.Reason = "Dry run: nothing was launched."
	} else if len(a.Warnings) > 0 {
		res.Reason = strings.Join(a.Warnings, " ")
	}
	return res
}

// reason is an error as a request's reason: the refusal's own text, cleaned.
func reason(err error) string { return untrusted.Clean(errText(err), maxReason) }

// playHits are the hits of query, best first, on the systems only (all when empty).
func playHits(ix *search.Index, query string, only []string) []search.Hit {
	r := ix.Find(search.Query{Text: query, Limit: playPool})
	if len(only) == 0 {
		return r.Hits
	}
	return slices.DeleteFunc(r.Hits, func(h search.Hit) bool { return !slices.Contains(only, h.System) })
}

// fullNames returns a system's full name from ES, else its folder name.
func fullNames(systems []es.System) func(string) string {
	return func(name string) string {
		for _, s := range systems {
			if s.Name == name && s.FullName != "" {
				return untrusted.Clean(s.FullName, maxName)
			}
		}
		return systemName(name)
	}
}

// splitSystem finds the system a request names: after its last " on " ("sonic 2 on megadrive"),
// else in its last one to three words ("mario kart snes", "tetris game boy"), by ES's folder or
// full name or a common alias (systemAliases), among the systems with games (indexed). It
// returns the rest of the request and the systems named (none: any).
func splitSystem(text string, systems []es.System, indexed []string) (string, []string) {
	if i := lastIndexFold(text, " on "); i > 0 {
		if only := namedSystems(text[i+4:], systems, indexed); len(only) > 0 {
			return strings.TrimSpace(text[:i]), only
		}
	}
	words := strings.Fields(text)
	for n := min(3, len(words)-1); n >= 1; n-- {
		if only := namedSystems(strings.Join(words[len(words)-n:], " "), systems, indexed); len(only) > 0 {
			return strings.Join(words[:len(words)-n], " "), only
		}
	}
	return text, nil
}

// hasPrefixFold and lastIndexFold compare ASCII letters without case, byte for byte, so the
// indexes are the text's own (strings.ToLower may change a text's length: "İ").
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && asciiEqualFold(s[:len(prefix)], prefix)
}

func lastIndexFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if asciiEqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// asciiEqualFold says whether a equals b, b being lower-case ASCII, A-Z matching a-z.
func asciiEqualFold(a, b string) bool {
	for i := 0; i < len(b); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}

// namedSystems are the indexed systems phrase names: ES's folder or full name, or an alias, with
// case, accents, punctuation and spaces ignored ("Mega Drive", "mega-drive", "MEGADRIVE").
func namedSystems(phrase string, systems []es.System, indexed []string) []string {
	key := compactKey(phrase)
	if key == "" {
		return nil
	}
	var out []string
	add := func(name string) {
		if slices.Contains(indexed, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, s := range systems {
		if compactKey(s.Name) == key || compactKey(s.FullName) == key {
			add(s.Name)
		}
	}
	for _, a := range systemAliases() {
		if slices.ContainsFunc(a.says, func(s string) bool { return compactKey(s) == key }) {
			for _, n := range a.systems {
				add(n)
			}
		}
	}
	return out
}

// compactKey folds like the search index and drops the spaces.
func compactKey(s string) string { return strings.ReplaceAll(search.Fold(s), " ", "") }

type systemAlias struct {
	says    []string // what people call it
	systems []string // Batocera's folders it can mean
}

// systemAliases are the names people use for Batocera's systems besides ES's own (the folder
// and full name, which always work). A function, not a package variable: nothing is built at
// start.
func systemAliases() []systemAlias {
	return []systemAlias{
		{[]string{"genesis", "sega genesis", "mega drive", "sega mega drive", "md"}, []string{"megadrive"}},
		{[]string{"super nintendo", "super nes", "super famicom", "sfc", "snes"}, []string{"snes", "sfc"}},
		{[]string{"nintendo", "famicom", "nes"}, []string{"nes", "famicom"}},
		{[]string{"nintendo 64", "n64"}, []string{"n64"}},
		{[]string{"game boy", "gameboy"}, []string{"gb"}},
		{[]string{"game boy color", "gameboy color", "gbc"}, []string{"gbc"}},
		{[]string{"game boy advance", "gameboy advance", "gba"}, []string{"gba"}},
		{[]string{"playstation", "playstation 1", "ps1", "psx", "psone"}, []string{"psx"}},
		{[]string{"playstation 2", "ps2"}, []string{"ps2"}},
		{[]string{"psp"}, []string{"psp"}},
		{[]string{"master system", "sega master system", "sms"}, []string{"mastersystem"}},
		{[]string{"game gear", "sega game gear"}, []string{"gamegear"}},
		{[]string{"mega cd", "sega cd"}, []string{"segacd"}},
		{[]string{"saturn", "sega saturn"}, []string{"saturn"}},
		{[]string{"dreamcast"}, []string{"dreamcast"}},
		{[]string{"pc engine", "turbografx", "turbografx 16", "tg16"}, []string{"pcengine"}},
		{[]string{"neo geo", "neogeo"}, []string{"neogeo"}},
		{[]string{"arcade"}, []string{"mame", "fbneo", "arcade", "neogeo", "cps1", "cps2", "cps3"}},
		{[]string{"atari 2600", "2600"}, []string{"atari2600"}},
		{[]string{"gamecube", "game cube"}, []string{"gamecube"}},
		{[]string{"wii"}, []string{"wii"}},
		{[]string{"nintendo ds", "ds"}, []string{"nds"}},
	}
}
