package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
)

// PlayTimeEnv is the household's play-time rules as the check sees them.
type PlayTimeEnv struct {
	// Rules are cabinet.household.* as the configuration says: what is
	// shown when cabinet serve does not answer.
	Rules household.Rules
	// Daemon asks cabinet serve for the rules in force and today's budget
	// (household.Report, in its status over the socket). An error: it does
	// not answer (the daemon check says why); a nil report: it answered
	// without one (it is starting). nil: the daemon is not asked.
	Daemon func(ctx context.Context) (*household.Report, error)
	// Pads reads the game pads connected (nil: not read), so a parent sees each pad's id for
	// cabinet.household.profile.<name>.pad and whose it is.
	Pads func() ([]controllers.Pad, error)
	// UIMode reads EmulationStation's UI mode back (nil: not read).
	UIMode func() (uimode.State, error)
}

// CheckPlayTime is the play-time check's name.
const CheckPlayTime = "playtime"

// playTimeOff is the line of rules that are off.
const playTimeOff = `off — to limit play, set cabinet.household.enabled=1 (README: "Play time for children")`

// checkPlayTime shows the rules, today's budget and whether the clock can
// be trusted to place the day and bedtime. Limits reached are not faults:
// only rules that nothing enforces, or a clock not set, are warnings.
func checkPlayTime(ctx context.Context, env PlayTimeEnv) Result {
	res := playTime(ctx, env)
	res.Lines = append(res.Lines, profileLines(env)...)
	if env.UIMode != nil {
		res.Lines = append(res.Lines, uiModeLine(env.UIMode))
	}
	return res
}

// profileLines are the household's profiles (whose pad, whose turn) and the pads connected with
// their ids, to bind one to a profile.
func profileLines(env PlayTimeEnv) []string {
	var lines []string
	if names := env.Rules.ProfileNames(); len(names) > 0 {
		var ps []string
		for _, p := range env.Rules.Profiles {
			text := p.Name
			if p.Pad != "" {
				text += " (pad " + p.Pad + ")"
			}
			ps = append(ps, text)
		}
		lines = append(lines, "Profiles: "+strings.Join(ps, ", "))
	}
	if env.Pads == nil {
		return lines
	}
	pads, err := env.Pads()
	switch {
	case err != nil:
		lines = append(lines, "Game pads: not read ("+err.Error()+")")
	case len(pads) == 0:
		lines = append(lines, "Game pads: none connected")
	default:
		var ps []string
		for _, pad := range pads {
			text := fmt.Sprintf("%s [%s]", pad.Name, pad.Key)
			for _, p := range env.Rules.Profiles {
				if p.Holds(pad.Key) {
					text += " — " + p.Name + "'s"
				}
			}
			ps = append(ps, text)
		}
		lines = append(lines, "Game pads (the id in [] binds one: cabinet.household.profile.<name>.pad): "+strings.Join(ps, "; "))
	}
	return lines
}

func playTime(ctx context.Context, env PlayTimeEnv) Result {
	var rep *household.Report
	var err error
	if env.Daemon != nil {
		rep, err = env.Daemon(ctx)
	}
	if rep != nil {
		return reportedPlayTime(*rep)
	}
	r := env.Rules
	if !r.Enabled {
		return Result{Status: Skip, Detail: playTimeOff}
	}
	res := Result{Status: Warn, Detail: "on — " + rulesText(household.NewReport(r, household.Status{}, time.UTC).Rules)}
	switch {
	case env.Daemon == nil || err != nil:
		res.Lines = []string{"Today's budget and the clock: only `cabinet serve` counts play and enforces the rules, and it does not answer (see the daemon check)"}
		res.Hint = "start it (batocera-services start cabinet; `cabinet install` installs the service): until it runs, nothing limits play"
	default:
		res.Lines = []string{"Today's budget: cabinet serve answers but has not counted play yet (it is starting)"}
		res.Hint = "run `cabinet doctor` again in a moment"
	}
	return res
}

// reportedPlayTime is the check from the daemon's report.
func reportedPlayTime(rep household.Report) Result {
	if !rep.Enabled {
		if rep.Paused {
			// "Pause play now" works with the rules off too.
			return Result{Status: Warn, Detail: "off, but play is paused: a game started now is ended",
				Hint: "turn switch.batocera_pause_play off in Home Assistant (or call batocera_pause_play with paused=false)"}
		}
		return Result{Status: Skip, Detail: playTimeOff}
	}
	res := Result{Status: OK, Detail: "on — " + rulesText(rep.Rules), Lines: []string{todayText(rep), clockText(rep)}}
	if rep.LaunchRefused != nil {
		res.Lines = append(res.Lines, "A game started now would be ended: "+*rep.LaunchRefused)
	}
	if rep.NextPlay != nil {
		res.Facts = append(res.Facts, "play is possible again at "+*rep.NextPlay)
	}
	if !rep.ClockTrusted {
		res.Status = Warn
		res.Hint = "connect the cabinet to the network so NTP sets the clock (or check its clock chip's battery); until then no new day starts and bedtime waits"
	}
	return res
}

// weekdays are the minutes.<day> keys of household.RulesReport, Monday
// first, with their short names.
var weekdays = []struct{ key, name string }{
	{"mon", "Mon"}, {"tue", "Tue"}, {"wed", "Wed"}, {"thu", "Thu"}, {"fri", "Fri"}, {"sat", "Sat"}, {"sun", "Sun"},
}

// rulesText is the rules on one line: "90 min a day (Mon 60, Sat 0),
// bedtime 21:00-07:00, warnings at 15,5,1 min, at the limit save_quit".
func rulesText(r household.RulesReport) string {
	var days []string
	for _, d := range weekdays {
		if n := r.WeekdayMinutes[d.key]; n != nil {
			days = append(days, fmt.Sprintf("%s %d", d.name, *n))
		}
	}
	var parts []string
	switch {
	case r.DailyMinutes != nil && len(days) > 0:
		parts = append(parts, fmt.Sprintf("%d min a day (%s)", *r.DailyMinutes, strings.Join(days, ", ")))
	case r.DailyMinutes != nil:
		parts = append(parts, fmt.Sprintf("%d min a day", *r.DailyMinutes))
	case len(days) > 0:
		parts = append(parts, fmt.Sprintf("no daily limit except %s min", strings.Join(days, ", ")))
	default:
		parts = append(parts, "no daily limit")
	}
	if r.SessionMinutes != nil {
		parts = append(parts, fmt.Sprintf("at most %d min a game", *r.SessionMinutes))
	}
	if r.Bedtime != nil {
		parts = append(parts, "bedtime "+*r.Bedtime)
	}
	if len(r.WarnAt) == 0 {
		parts = append(parts, "no warnings")
	} else {
		pts := make([]string, len(r.WarnAt))
		for i, p := range r.WarnAt {
			pts[i] = strconv.Itoa(p)
		}
		parts = append(parts, "warnings at "+strings.Join(pts, ",")+" min")
	}
	parts = append(parts, "at the limit "+string(r.AtLimit))
	if r.MinStartMinutes != 1 {
		parts = append(parts, fmt.Sprintf("a game starts with at least %d min left", r.MinStartMinutes))
	}
	return strings.Join(parts, ", ")
}

// todayText is today's budget: "Today (2026-12-06, Sunday): limit 90 min,
// used 35 min, extra +15, 70 min left; state ok".
func todayText(rep household.Report) string {
	var parts []string
	if rep.LimitMinutes == nil {
		parts = append(parts, "no limit")
	} else {
		limit := fmt.Sprintf("limit %d min", *rep.LimitMinutes)
		if n, ok := rulesDayLimit(rep); !ok || n != *rep.LimitMinutes {
			limit += " (set for today)"
		}
		parts = append(parts, limit)
	}
	parts = append(parts, fmt.Sprintf("used %d min", rep.UsedMinutes))
	if rep.BonusMinutes > 0 {
		parts = append(parts, fmt.Sprintf("extra +%d", rep.BonusMinutes))
	}
	if rep.LeftMinutes != nil {
		parts = append(parts, fmt.Sprintf("%d min left", *rep.LeftMinutes))
	}
	if rep.SessionLeftMinutes != nil {
		parts = append(parts, fmt.Sprintf("%d min left for this game", *rep.SessionLeftMinutes))
	}
	return fmt.Sprintf("Today (%s, %s): %s; state %s", rep.Day, rep.Weekday, strings.Join(parts, ", "), rep.State)
}

// rulesDayLimit is the limit the rules give the report's day (false:
// none), to tell a limit set for today from Home Assistant or MCP.
func rulesDayLimit(rep household.Report) (int, bool) {
	if len(rep.Weekday) >= 3 {
		if n := rep.Rules.WeekdayMinutes[strings.ToLower(rep.Weekday[:3])]; n != nil {
			return *n, true
		}
	}
	if n := rep.Rules.DailyMinutes; n != nil {
		return *n, true
	}
	return 0, false
}

// clockText says whether the clock places the day and bedtime.
func clockText(rep household.Report) string {
	if rep.ClockTrusted {
		return "Clock: set (NTP or clock chip) — days and bedtime follow it"
	}
	s := fmt.Sprintf("Clock: NOT set yet — today is the last day the cabinet knew (%s)", rep.Day)
	if rep.Rules.Bedtime != nil {
		return s + "; bedtime waits until NTP sets the clock"
	}
	return s + " until NTP sets the clock"
}

// uiModeLine is EmulationStation's mode, and what forces it.
func uiModeLine(read func() (uimode.State, error)) string {
	st, err := read()
	switch {
	case err != nil:
		return "EmulationStation: its mode not read (" + err.Error() + ")"
	case st.Forced != "":
		return "EmulationStation: " + uimode.Describe(st.Mode) + ", forced by es.customsargs in batocera.conf"
	}
	return "EmulationStation: " + uimode.Describe(st.Mode) + " (select.batocera_ui_mode, batocera_set_ui_mode)"
}
