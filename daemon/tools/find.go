package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/tools/search"
)

// Bounds of batocera_find_games.
const (
	defaultLimit = 20
	maxLimit     = 100
	maxOffset    = 1_000_000
	maxQuery     = 200
	maxPlayerArg = 16
)

type findArgs struct {
	Query   string `json:"query"`
	System  string `json:"system"`
	Genre   string `json:"genre"`
	Players int    `json:"players"`
	Mode    string `json:"mode"`
	Offset  int    `json:"offset"`
	Limit   int    `json:"limit"`
}

type findResult struct {
	Games      []gameHit `json:"games"`
	Total      int       `json:"total"`
	NextOffset *int      `json:"next_offset"`
}

type gameHit struct {
	System     string `json:"system"`
	GameID     string `json:"game_id"`
	Name       string `json:"name"`
	Year       int    `json:"year,omitempty"`
	Genre      string `json:"genre,omitempty"`
	Players    string `json:"players,omitempty"`
	Favorite   bool   `json:"favorite"`
	PlayCount  int    `json:"play_count"`
	PlayTimeS  int64  `json:"play_time_s"`
	LastPlayed string `json:"last_played,omitempty"`
}

func findGamesTool(cat *catalog, seed func() uint64, loc *time.Location) (mcp.Tool, server.ToolHandlerFunc) {
	modes := make([]string, 0, 6)
	for _, m := range search.Modes() {
		modes = append(modes, string(m))
	}
	t := define("batocera_find_games", "Find games",
		"Search the cabinet's games by name, ignoring case, punctuation, accents and word order; partial words work "+
			"(\"zelda link\", \"street fighter 2\", \"pokemon\"). Filter by system, genre and number of players. Modes: "+
			"search (best match first, or by name without a query), favorites, most_played, most_time, recent, random. "+
			"Results are paged: pass next_offset as offset for the next page. Use game_id with batocera_launch_game.",
		reads, true,
		withInput(
			opt("query", str("Words of the game's name; empty lists every game.", maxLen(maxQuery))),
			opt("system", systemArg("Only games of this system (a name from batocera_list_systems, e.g. snes).")),
			opt("genre", str("Only games whose genre contains this, e.g. platform, shooter, rpg.", maxLen(50))),
			opt("players", integer("Only games playable by this many players.", minimum(1), maximum(maxPlayerArg))),
			opt("mode", str("Which games and in what order.", enum(modes...), defaultValue(string(search.ModeSearch)))),
			opt("offset", integer("Skip this many results (from next_offset). Ignored by random.", minimum(0),
				maximum(maxOffset), defaultValue(0))),
			opt("limit", integer("Results per page.", minimum(1), maximum(maxLimit), defaultValue(defaultLimit))),
		),
		withOutput(
			req("games", array("Matching games, best first.", object("",
				req("system", str("System name.")), req("game_id", str("ES game id, for batocera_launch_game.")),
				req("name", str("Display name.")), opt("year", integer("Release year.")), opt("genre", str("Genre.")),
				opt("players", str("Players, e.g. 1-2.")), req("favorite", boolean("Marked favorite.")),
				req("play_count", integer("Times launched.")), req("play_time_s", integer("Total play time in seconds.")),
				opt("last_played", str("When last played (RFC 3339).")),
			))),
			req("total", integer("How many games match in all.")),
			req("next_offset", nullable(integer("Offset of the next page; null at the end (and for random)."))),
		))
	return t, typed(func(ctx context.Context, a findArgs) (findResult, error) { return findGames(ctx, cat, seed, loc, a) })
}

func findGames(ctx context.Context, cat *catalog, seed func() uint64, loc *time.Location,
	a findArgs) (findResult, error) {
	ix, systems, err := cat.index(ctx)
	if err != nil {
		return findResult{}, esFailure("read the game lists", err)
	}
	if a.System != "" && !slices.Contains(systems, a.System) {
		hint := ""
		if a.System == "favorites" || a.System == "recent" || a.System == "all" {
			hint = " For favorites or recently played games use mode favorites or recent."
		}
		return findResult{}, refuse("Unknown system %q.%s Systems: %s.", a.System, hint, listNames(systems, 60))
	}
	n := seed()
	q := search.Query{Text: a.Query, System: a.System, Genre: a.Genre, Players: a.Players, Mode: search.Mode(a.Mode),
		Offset: min(max(a.Offset, 0), maxOffset), Limit: a.Limit, Rand: rand.New(rand.NewPCG(n, n^0x5eed))}
	if q.Limit <= 0 {
		q.Limit = defaultLimit
	}
	q.Limit = min(q.Limit, maxLimit)
	r := ix.Find(q)
	res := findResult{Games: make([]gameHit, 0, len(r.Hits)), Total: r.Total}
	if r.NextOffset >= 0 {
		res.NextOffset = ptr(r.NextOffset)
	}
	for _, hit := range r.Hits {
		g := gameHit{System: hit.System, GameID: hit.ID, Name: hit.Name, Year: hit.Year, Genre: hit.Genre,
			Players: hit.Players, Favorite: hit.Favorite, PlayCount: hit.PlayCount, PlayTimeS: hit.PlayTime}
		if !hit.LastPlayed.IsZero() {
			g.LastPlayed = timestamp(hit.LastPlayed, loc)
		}
		res.Games = append(res.Games, g)
	}
	return res, nil
}

// listNames joins at most max names for a message.
func listNames(names []string, max int) string {
	if len(names) == 0 {
		return "none (EmulationStation lists no game systems)"
	}
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more (see batocera_list_systems)", len(names)-max)
}

func (r findResult) text() string {
	if r.Total == 0 {
		return "No games match. Try fewer or shorter words, or drop a filter."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d games match", r.Total)
	if len(r.Games) < r.Total {
		fmt.Fprintf(&b, ", %d shown", len(r.Games))
	}
	b.WriteString(":")
	for _, g := range r.Games {
		fmt.Fprintf(&b, "\n- %s (%s, game_id %s)", g.Name, g.System, g.GameID)
		var facts []string
		if g.Year != 0 {
			facts = append(facts, fmt.Sprint(g.Year))
		}
		if g.Genre != "" {
			facts = append(facts, g.Genre)
		}
		if g.Players != "" {
			facts = append(facts, g.Players+" players")
		}
		if g.Favorite {
			facts = append(facts, "favorite")
		}
		if g.PlayCount > 0 || g.PlayTimeS > 0 {
			var last *string
			if g.LastPlayed != "" {
				last = &g.LastPlayed
			}
			facts = append(facts, played(g.PlayCount, g.PlayTimeS, last))
		}
		if len(facts) > 0 {
			b.WriteString(": " + strings.Join(facts, ", "))
		}
	}
	if r.NextOffset != nil {
		fmt.Fprintf(&b, "\nMore: call again with offset %d.", *r.NextOffset)
	}
	return b.String()
}
