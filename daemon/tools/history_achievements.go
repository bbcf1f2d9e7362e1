package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds of the achievements in batocera_play_history.
const (
	maxHistoryAchievements = 10000 // unlocks read for the counts
	maxListedAchievements  = 50
	maxAchievementTitle    = 128 // runes, as kept (haentities)
	maxAchievementDesc     = 512
)

type achievementOut struct {
	At          string  `json:"at"`
	ID          uint32  `json:"id"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Hardcore    bool    `json:"hardcore"`
	Game        *string `json:"game"`
	System      *string `json:"system"`
	SessionID   *string `json:"session_id"`
}

type achievementTotals struct {
	Total  int               `json:"total"`
	ByGame []achievementGame `json:"by_game"`
	ByDay  []achievementDay  `json:"by_day"`
}

type achievementGame struct {
	Game   string `json:"game"`
	System string `json:"system"`
	Count  int    `json:"count"`
}

type achievementDay struct {
	Day   string `json:"day"`
	Count int    `json:"count"`
}

func achievementTotalsSchema() js {
	return object("RetroAchievements unlocked in the period.",
		req("total", integer("Unlocks in all.")),
		req("by_game", array("Games by unlocks, most first (top 20); an unlock with no known game counts under an empty name.",
			object("", req("game", str("Game name.")), req("system", str("System name.")), req("count", integer("Unlocks."))))),
		req("by_day", array("Days with unlocks, newest first (local dates).",
			object("", req("day", str("Date (YYYY-MM-DD).")), req("count", integer("Unlocks."))))))
}

func achievementsSchema() js {
	return array(fmt.Sprintf("RetroAchievements unlocked in the period, newest first (at most %d). Batocera passes no points; "+
		"hardcore is what batocera.conf configured for the game.", maxListedAchievements), object("",
		req("at", str("When (RFC 3339).")), req("id", integer("RetroAchievements id.")),
		req("title", str("Title.")), req("description", str("Description.")),
		req("hardcore", boolean("Hardcore mode was configured for the game.")),
		req("game", nullable(str("Game name, null when no session was known."))),
		req("system", nullable(str("System name, null when no session was known."))),
		req("session_id", nullable(str("The session it happened in, null when none was known."))),
	))
}

// addAchievements reads the period's unlocks into res: the newest listed, all counted. A system
// filter keeps the unlocks of that system's games.
func addAchievements(ctx context.Context, hist History, q HistoryQuery, loc *time.Location, res *historyResult) error {
	res.Achievements = []achievementOut{}
	res.Totals.Achievements = achievementTotals{ByGame: []achievementGame{}, ByDay: []achievementDay{}}
	system := q.System
	q.System, q.Limit = "", maxHistoryAchievements
	got, err := hist.Achievements(ctx, q)
	if err != nil {
		return refuse("Could not read the achievements: %s", untrusted.Clean(err.Error(), maxErrorRunes))
	}
	if len(got) >= maxHistoryAchievements {
		res.Warnings = append(res.Warnings, fmt.Sprintf("Only the newest %d achievements are counted; choose a shorter period.", maxHistoryAchievements))
	}
	slices.SortStableFunc(got, func(x, y Achievement) int { return y.At.Compare(x.At) })
	t := &res.Totals.Achievements
	games, days := map[[2]string]*achievementGame{}, map[string]*achievementDay{}
	for _, a := range got {
		o := achievementOut{At: timestamp(a.At, loc), ID: a.ID, Title: untrusted.Clean(a.Title, maxAchievementTitle),
			Description: untrusted.Clean(a.Description, maxAchievementDesc), Hardcore: a.Hardcore,
			Game: nonEmpty(untrusted.Clean(a.Game, maxName)), SessionID: nonEmpty(untrusted.Clean(a.SessionID, maxIdent))}
		if a.System != "" {
			o.System = ptr(systemName(a.System))
		}
		if system != "" && (o.System == nil || a.System != system) {
			continue
		}
		if len(res.Achievements) < maxListedAchievements {
			res.Achievements = append(res.Achievements, o)
		}
		t.Total++
		key := [2]string{orEmpty(o.Game), orEmpty(o.System)}
		if games[key] == nil {
			games[key] = &achievementGame{Game: key[0], System: key[1]}
		}
		games[key].Count++
		day := a.At.In(loc).Format("2006-01-02")
		if days[day] == nil {
			days[day] = &achievementDay{Day: day}
		}
		days[day].Count++
	}
	for _, g := range games {
		t.ByGame = append(t.ByGame, *g)
	}
	slices.SortFunc(t.ByGame, func(x, y achievementGame) int {
		if x.Count != y.Count {
			return y.Count - x.Count
		}
		return strings.Compare(x.Game+x.System, y.Game+y.System)
	})
	t.ByGame = t.ByGame[:min(len(t.ByGame), maxTotalsRows)]
	for _, d := range days {
		t.ByDay = append(t.ByDay, *d)
	}
	slices.SortFunc(t.ByDay, func(x, y achievementDay) int { return strings.Compare(y.Day, x.Day) })
	return nil
}

func (r historyResult) achievementsText(b *strings.Builder) {
	t := r.Totals.Achievements
	if t.Total == 0 {
		return
	}
	fmt.Fprintf(b, "\nAchievements unlocked: %d", t.Total)
	for _, a := range r.Achievements {
		fmt.Fprintf(b, "\n- %s %s", a.At, a.Title)
		if a.Game != nil {
			fmt.Fprintf(b, " (%s)", *a.Game)
		}
		if a.Hardcore {
			b.WriteString(", hardcore")
		}
	}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
