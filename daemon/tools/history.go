package tools

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds of batocera_play_history.
const (
	maxHistorySessions = 10000 // sessions read for the totals
	maxTotalsRows      = 20
	defaultHistoryDays = 7
)

type historyArgs struct {
	Since  string `json:"since"`
	Until  string `json:"until"`
	System string `json:"system"`
	// Profile keeps one player's sessions ("none": those with no profile).
	Profile string `json:"profile"`
	Limit   int    `json:"limit"`
}

type historyResult struct {
	Since        string           `json:"since"`
	Until        string           `json:"until"`
	Sessions     []sessionOut     `json:"sessions"`
	Totals       historyTotals    `json:"totals"`
	Achievements []achievementOut `json:"achievements"`
	Warnings     []string         `json:"warnings"`
}

type sessionOut struct {
	SessionID    string  `json:"session_id"`
	Game         string  `json:"game"`
	System       string  `json:"system"`
	ROM          string  `json:"rom"`
	Started      string  `json:"started"`
	Ended        *string `json:"ended"`
	DurationS    int64   `json:"duration_s"`
	Source       string  `json:"source"`
	Achievements int     `json:"achievements"`
	Profile      *string `json:"profile"`
}

type historyTotals struct {
	ByGame       []gameTotal       `json:"by_game"`
	BySystem     []systemTotal     `json:"by_system"`
	TotalS       int64             `json:"total_s"`
	Achievements achievementTotals `json:"achievements"`
}

type gameTotal struct {
	Game     string `json:"game"`
	System   string `json:"system"`
	Sessions int    `json:"sessions"`
	TotalS   int64  `json:"total_s"`
}

type systemTotal struct {
	System   string `json:"system"`
	Sessions int    `json:"sessions"`
	TotalS   int64  `json:"total_s"`
}

func playHistoryTool(hist History, clock Clock, loc *time.Location) (mcp.Tool, server.ToolHandlerFunc) {
	when := "RFC 3339 time, a date (2025-04-01), today, yesterday, now, or an age such as 7d, 24h, 2w."
	t := define("batocera_play_history", "Play history",
		"Play sessions the cabinet logged: which game, when, for how long, newest first; with totals per game and "+
			"per system over the period (default: the last 7 days), and the RetroAchievements unlocked in it "+
			"(\"what did we unlock this week?\": since=7d), with counts per game and per day.",
		reads, true,
		withInput(
			opt("since", str("Start of the period: "+when, maxLen(40))),
			opt("until", str("End of the period (default now): "+when, maxLen(40))),
			opt("system", systemArg("Only sessions of this system.")),
			opt("profile", str("Only this player's sessions (a profile of the household, as batocera_get_limits lists "+
				"them); none: the sessions nobody's profile launched. Totals follow; achievements stay everyone's.", maxLen(32))),
			opt("limit", integer("Sessions listed (totals cover the whole period).", minimum(1), maximum(maxLimit),
				defaultValue(defaultLimit))),
		),
		withOutput(
			req("since", str("Start of the period (RFC 3339).")), req("until", str("End of the period (RFC 3339).")),
			req("sessions", array("Sessions, newest first.", object("",
				req("session_id", str("Session id.")), req("game", str("Game name.")), req("system", str("System name.")),
				req("rom", str("ROM path.")), req("started", str("Start (RFC 3339).")),
				req("ended", nullable(str("End (RFC 3339), null while it runs."))),
				req("duration_s", integer("Length in seconds.")), req("source", str("How the session was detected.")),
				req("achievements", integer("RetroAchievements unlocked in the session.")),
				req("profile", nullable(str("The household's player who launched it; null: none."))),
			))),
			req("totals", object("Totals over the period.",
				req("by_game", array("Games by time played, most first (top 20).", object("",
					req("game", str("Game name.")), req("system", str("System name.")),
					req("sessions", integer("Sessions.")), req("total_s", integer("Seconds played."))))),
				req("by_system", array("Systems by time played, most first (top 20).", object("",
					req("system", str("System name.")), req("sessions", integer("Sessions.")),
					req("total_s", integer("Seconds played."))))),
				req("total_s", integer("Seconds played in all.")),
				req("achievements", achievementTotalsSchema()))),
			req("achievements", achievementsSchema()),
			req("warnings", array("Things worth knowing about the figures.", str("One warning."))),
		))
	return t, typed(func(ctx context.Context, a historyArgs) (historyResult, error) {
		return playHistory(ctx, hist, clock.Now().In(loc), a)
	})
}

// playHistory reads the sessions of the period a asks for, now being the
// current time in the location dates are rendered in.
func playHistory(ctx context.Context, hist History, now time.Time, a historyArgs) (historyResult, error) {
	loc := now.Location()
	since, err := parseWhen(a.Since, now, now.AddDate(0, 0, -defaultHistoryDays))
	if err != nil {
		return historyResult{}, refuse("since: %v", err)
	}
	until, err := parseWhen(a.Until, now, now)
	if err != nil {
		return historyResult{}, refuse("until: %v", err)
	}
	if !since.Before(until) {
		return historyResult{}, refuse("since (%s) must be before until (%s).", since.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	sessions, err := hist.Sessions(ctx, HistoryQuery{Since: since, Until: until, System: a.System, Limit: maxHistorySessions})
	if err != nil {
		return historyResult{}, refuse("Could not read the play history: %s", untrusted.Clean(err.Error(), maxErrorRunes))
	}
	if p := strings.ToLower(strings.TrimSpace(a.Profile)); p != "" {
		if p == "none" {
			p = ""
		}
		sessions = slices.DeleteFunc(sessions, func(s Session) bool { return s.Profile != p })
	}
	slices.SortStableFunc(sessions, func(x, y Session) int { return y.Started.Compare(x.Started) })
	limit := a.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	res := historyResult{Since: timestamp(since, loc), Until: timestamp(until, loc), Sessions: []sessionOut{},
		Warnings: []string{}, Totals: historyTotals{ByGame: []gameTotal{}, BySystem: []systemTotal{}}}
	if err := addAchievements(ctx, hist, HistoryQuery{Since: since, Until: until, System: a.System}, loc, &res); err != nil {
		return historyResult{}, err
	}
	if len(sessions) >= maxHistorySessions {
		res.Warnings = append(res.Warnings, fmt.Sprintf("Only the newest %d sessions are counted; choose a shorter period.", maxHistorySessions))
	}
	games, systems := map[[2]string]*gameTotal{}, map[string]*systemTotal{}
	for i, s := range sessions {
		o := sessionOut{SessionID: untrusted.Clean(s.ID, maxIdent), Game: untrusted.Clean(s.Game, maxName),
			System: systemName(s.System), ROM: untrusted.Clean(s.ROM, maxPath), Started: timestamp(s.Started, loc),
			DurationS: int64(max(s.Duration, 0) / time.Second), Source: untrusted.Clean(s.Source, maxIdent),
			Achievements: max(s.Achievements, 0)}
		if !s.Ended.IsZero() {
			o.Ended = ptr(timestamp(s.Ended, loc))
		}
		if s.Profile != "" {
			o.Profile = ptr(untrusted.Clean(s.Profile, maxIdent))
		}
		if i < limit {
			res.Sessions = append(res.Sessions, o)
		}
		res.Totals.TotalS += o.DurationS
		g := games[[2]string{o.Game, o.System}]
		if g == nil {
			g = &gameTotal{Game: o.Game, System: o.System}
			games[[2]string{o.Game, o.System}] = g
		}
		g.Sessions++
		g.TotalS += o.DurationS
		st := systems[o.System]
		if st == nil {
			st = &systemTotal{System: o.System}
			systems[o.System] = st
		}
		st.Sessions++
		st.TotalS += o.DurationS
	}
	for _, g := range games {
		res.Totals.ByGame = append(res.Totals.ByGame, *g)
	}
	for _, s := range systems {
		res.Totals.BySystem = append(res.Totals.BySystem, *s)
	}
	slices.SortFunc(res.Totals.ByGame, func(x, y gameTotal) int {
		if x.TotalS != y.TotalS {
			return int(y.TotalS - x.TotalS)
		}
		return strings.Compare(x.Game+x.System, y.Game+y.System)
	})
	slices.SortFunc(res.Totals.BySystem, func(x, y systemTotal) int {
		if x.TotalS != y.TotalS {
			return int(y.TotalS - x.TotalS)
		}
		return strings.Compare(x.System, y.System)
	})
	res.Totals.ByGame = res.Totals.ByGame[:min(len(res.Totals.ByGame), maxTotalsRows)]
	res.Totals.BySystem = res.Totals.BySystem[:min(len(res.Totals.BySystem), maxTotalsRows)]
	return res, nil
}

// parseWhen reads a point in time: "" gives def.
func parseWhen(s string, now, def time.Time) (time.Time, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	switch s {
	case "":
		return def, nil
	case "now":
		return now, nil
	case "today":
		return midnight, nil
	case "yesterday":
		return midnight.AddDate(0, 0, -1), nil
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(s)); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, now.Location()); err == nil {
		return t, nil
	}
	if len(s) >= 2 {
		n, err := strconv.Atoi(s[:len(s)-1])
		unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
		if err == nil && unit > 0 && n >= 0 && n <= 3660*24 && time.Duration(n)*unit <= 3660*24*time.Hour {
			return now.Add(-time.Duration(n) * unit), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use an RFC 3339 time, a date (2025-04-01), today, yesterday, now, or an age such as 7d, 24h, 2w", s)
}

func (r historyResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "From %s to %s: %s played", r.Since, r.Until, time.Duration(r.Totals.TotalS)*time.Second)
	for _, g := range r.Totals.ByGame {
		fmt.Fprintf(&b, "\n- %s (%s): %d sessions, %s", g.Game, g.System, g.Sessions, time.Duration(g.TotalS)*time.Second)
	}
	if len(r.Sessions) > 0 {
		b.WriteString("\nLatest sessions:")
		for _, s := range r.Sessions {
			fmt.Fprintf(&b, "\n- %s %s (%s), %s", s.Started, s.Game, s.System, time.Duration(s.DurationS)*time.Second)
		}
	}
	r.achievementsText(&b)
	for _, w := range r.Warnings {
		b.WriteString("\nWarning: " + w)
	}
	return b.String()
}
