package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

type systemsResult struct {
	Systems []systemInfo `json:"systems"`
}

type systemInfo struct {
	Name          string  `json:"name"`
	FullName      string  `json:"fullname"`
	TotalGames    int     `json:"total_games"`
	PlayedGames   int     `json:"played_games"`
	FavoriteGames int     `json:"favorite_games"`
	MostPlayed    *string `json:"most_played"`
}

func listSystemsTool(e ES) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_list_systems", "List systems",
		"The cabinet's game systems (consoles, arcade, computers; not collections): their names for the system "+
			"arguments of other tools, full names, how many games each holds, how many were played or are "+
			"favorites, and the most played game.",
		reads, true,
		withOutput(req("systems", array("Real game systems in EmulationStation's order.", object("",
			req("name", str("System name, as the system argument of other tools takes it (e.g. snes).")),
			req("fullname", str("Display name, e.g. Super Nintendo Entertainment System.")),
			req("total_games", integer("Games in the system.")),
			req("played_games", integer("Games played at least once.")),
			req("favorite_games", integer("Games marked favorite.")),
			req("most_played", nullable(str("Name of the most played game, null when none was played."))),
		)))))
	return t, typed(func(ctx context.Context, _ none) (systemsResult, error) { return listSystems(ctx, e) })
}

func listSystems(ctx context.Context, e ES) (systemsResult, error) {
	all, err := e.Systems(ctx)
	if err != nil {
		return systemsResult{}, esFailure("list the systems", err)
	}
	res := systemsResult{Systems: []systemInfo{}}
	for _, s := range es.GameSystems(all) {
		info := systemInfo{Name: systemName(s.Name), FullName: untrusted.Clean(s.FullName, maxShort),
			TotalGames: s.TotalGames, PlayedGames: s.PlayedGames, FavoriteGames: s.FavoriteGames}
		if mp := untrusted.Clean(s.MostPlayed, maxName); mp != "" {
			info.MostPlayed = &mp
		}
		res.Systems = append(res.Systems, info)
	}
	return res, nil
}

func (r systemsResult) text() string {
	if len(r.Systems) == 0 {
		return "EmulationStation lists no game systems."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d systems:", len(r.Systems))
	for _, s := range r.Systems {
		fmt.Fprintf(&b, "\n- %s (%s): %d games, %d played, %d favorites", s.Name, s.FullName, s.TotalGames,
			s.PlayedGames, s.FavoriteGames)
		if s.MostPlayed != nil {
			fmt.Fprintf(&b, "; most played: %s", *s.MostPlayed)
		}
	}
	return b.String()
}
