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

	"github.com/batocera-cabinet/cabinet/daemon/household"
)

// setLimitsArgs are batocera_set_limits' arguments; nil is "leave as it is".
type setLimitsArgs struct {
	Enabled         *bool          `json:"enabled"`
	DailyMinutes    *int           `json:"daily_minutes"`
	WeekdayMinutes  map[string]int `json:"weekday_minutes"`
	TodayMinutes    *int           `json:"today_minutes"`
	SessionMinutes  *int           `json:"session_minutes"`
	Bedtime         *string        `json:"bedtime"`
	WarnAt          *[]int         `json:"warn_at"`
	AtLimit         *string        `json:"at_limit"`
	MinStartMinutes *int           `json:"min_start_minutes"`
}

// setLimitsArgNames are the arguments, for the refusal of a call with none.
const setLimitsArgNames = "enabled, daily_minutes, weekday_minutes, today_minutes, session_minutes, bedtime, warn_at, " +
	"at_limit, min_start_minutes"

func setLimitsTool(hh Household, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	minutes := func(d string, lo, hi int) js { return integer(d, minimum(lo), maximum(hi)) }
	days := make([]prop, len(dayNames))
	for i, d := range dayNames {
		days[i] = opt(d, minutes("Minutes on this day, 0 to 1440; -1: daily_minutes applies.", -1, household.MaxMinutes))
	}
	t := define("batocera_set_limits", "Set play-time rules",
		"Change the household's play-time rules (parental limits), kept in the cabinet's batocera.conf. These are "+
			"a parent's rules: change them only when a parent asks or agrees, never just because the player asks. "+
			"All times are minutes. Give any of: enabled (rules on or off), daily_minutes (-1: no daily limit), "+
			"weekday_minutes (per day mon…sun, -1: daily_minutes applies), today_minutes (today only, -1 clears "+
			"it), session_minutes (the longest one game may run, 0: none), bedtime (HH:MM-HH:MM local time, may "+
			"cross midnight, \"\": none), warn_at (minutes before the end to warn the player), at_limit (save_quit, "+
			"quit or warn_only) and min_start_minutes (a game starts only with this much time left). The answer "+
			"has the limits afterwards.",
		destroys, true,
		withInput(
			opt("enabled", boolean("true turns the rules on, false off.")),
			opt("daily_minutes", minutes("Minutes of play a day, 0 to 1440; -1: no daily limit.", -1, household.MaxMinutes)),
			opt("weekday_minutes", object("Limits for some weekdays, instead of daily_minutes.", days...)),
			opt("today_minutes", minutes("A limit for today only, 0 to 1440; -1 clears it (the rules' limit "+
				"applies).", -1, household.MaxMinutes)),
			opt("session_minutes", minutes("The longest one game may run, 1 to 1440; 0: no session limit.", 0,
				household.MaxMinutes)),
			opt("bedtime", str("No games in this window: HH:MM-HH:MM in local time, may cross midnight (21:00-07:00); "+
				"\"\": no bedtime.", maxLen(11), pattern(`^([0-9]{1,2}:[0-9]{2}-[0-9]{1,2}:[0-9]{2})?$`))),
			opt("warn_at", array("Warn the player this many minutes before the end (up to 6); []: no warnings.",
				integer("Minutes before the end, 1 to 120.", minimum(1), maximum(household.MaxWarnMinutes)),
				maxItems(household.MaxWarnPoints))),
			opt("at_limit", str("When the time is up during a game: save_quit saves where the emulator can, then "+
				"quits; quit quits (unsaved progress is lost); warn_only only keeps warning.",
				enum(string(household.SaveQuit), string(household.Quit), string(household.WarnOnly)))),
			opt("min_start_minutes", minutes("A game starts only with at least this many minutes left, 0 to 60.", 0,
				household.MaxStartMinutes)),
		),
		withOutput(actionProps(req("limits", object("The play-time limits afterwards (as batocera_get_limits).",
			reportProps()...)))...))
	return t, typed(func(ctx context.Context, a setLimitsArgs) (LimitsActionResult, error) {
		return setLimits(ctx, hh, g, cabinet, a)
	})
}

// ruleValues maps the arguments to cabinet.household.* values, each
// checked by household.Check and in the form household writes it.
func ruleValues(a setLimitsArgs) (map[string]string, error) {
	v := map[string]string{}
	p := household.Prefix
	num := func(n, empty int) string {
		if n == empty {
			return ""
		}
		return strconv.Itoa(n)
	}
	if a.Enabled != nil {
		v[p+"enabled"] = map[bool]string{true: "1", false: "0"}[*a.Enabled]
	}
	if a.DailyMinutes != nil {
		v[p+"minutes.daily"] = num(*a.DailyMinutes, -1)
	}
	for day, n := range a.WeekdayMinutes {
		if !slices.Contains(dayNames, day) {
			return nil, refuse("weekday_minutes: unknown day %q; the days are %s.", day, strings.Join(dayNames, ", "))
		}
		v[p+"minutes."+day] = num(n, -1)
	}
	if a.SessionMinutes != nil {
		v[p+"session_minutes"] = num(*a.SessionMinutes, 0)
	}
	if a.Bedtime != nil {
		v[p+"bedtime"] = strings.TrimSpace(*a.Bedtime)
	}
	if a.WarnAt != nil {
		pts := make([]string, len(*a.WarnAt))
		for i, n := range *a.WarnAt {
			pts[i] = strconv.Itoa(n)
		}
		v[p+"warn_at"] = strings.Join(pts, ",")
	}
	if a.AtLimit != nil {
		v[p+"at_limit"] = *a.AtLimit
	}
	if a.MinStartMinutes != nil {
		v[p+"min_start_minutes"] = strconv.Itoa(*a.MinStartMinutes)
	}
	for k, val := range v {
		if err := household.Check(k, val); err != nil {
			return nil, refuse("Cannot set %s: %v.", argOf(k), err)
		}
		v[k] = canonical(k, val)
	}
	return v, nil
}

// argOf names the argument of a rule key.
func argOf(key string) string {
	switch r := strings.TrimPrefix(key, household.Prefix); {
	case r == "minutes.daily":
		return "daily_minutes"
	case strings.HasPrefix(r, "minutes."):
		return "weekday_minutes." + strings.TrimPrefix(r, "minutes.")
	default:
		return r
	}
}

// canonical is a valid value as household writes it (warn_at sorted,
// bedtime's hours with two digits): Values is the inverse of Parse.
func canonical(key, value string) string {
	r, _ := household.Parse(map[string]string{key: value})
	return r.Values()[key]
}

// currentValues are the rules a report shows, as batocera.conf values.
func currentValues(rep household.Report) map[string]string {
	p, rr := household.Prefix, rep.Rules
	num := func(n *int) string {
		if n == nil {
			return ""
		}
		return strconv.Itoa(*n)
	}
	pts := make([]string, len(rr.WarnAt))
	for i, n := range rr.WarnAt {
		pts[i] = strconv.Itoa(n)
	}
	v := map[string]string{p + "enabled": map[bool]string{true: "1", false: "0"}[rep.Enabled],
		p + "minutes.daily": num(rr.DailyMinutes), p + "session_minutes": num(rr.SessionMinutes),
		p + "warn_at": strings.Join(pts, ","), p + "at_limit": string(rr.AtLimit),
		p + "min_start_minutes": strconv.Itoa(rr.MinStartMinutes)}
	if rr.Bedtime != nil {
		v[p+"bedtime"] = *rr.Bedtime
	}
	for _, d := range dayNames {
		v[p+"minutes."+d] = num(rr.WeekdayMinutes[d])
	}
	r, _ := household.Parse(v)
	return r.Values()
}

func setLimits(ctx context.Context, hh Household, g *guard, cabinet string, a setLimitsArgs) (LimitsActionResult, error) {
	want, err := ruleValues(a)
	if err != nil {
		return LimitsActionResult{}, err
	}
	if len(want) == 0 && a.TodayMinutes == nil {
		return LimitsActionResult{}, refuse("Nothing to change: give at least one of %s.", setLimitsArgNames)
	}
	if t := a.TodayMinutes; t != nil && (*t < -1 || *t > household.MaxMinutes) {
		return LimitsActionResult{}, refuse("today_minutes must be from 0 to %d, or -1 to clear it; got %d.",
			household.MaxMinutes, *t)
	}
	rep, err := hh.Report(ctx)
	if err != nil {
		return LimitsActionResult{}, householdFailure("read the play-time rules", err)
	}
	// Only what differs is written; today's own limit is always set (the
	// report does not say whether today's limit is its own).
	cur := currentValues(rep)
	changed := map[string]string{}
	var sent, said []string
	for _, k := range household.Keys() {
		if v, ok := want[k.Name]; ok {
			said = append(said, ruleText(k.Name, v))
			if v != cur[k.Name] {
				changed[k.Name] = v
				sent = append(sent, "SET "+k.Name+"="+v)
			}
		}
	}
	if a.TodayMinutes != nil {
		said = append(said, todayText(*a.TodayMinutes))
		sent = append(sent, fmt.Sprintf("SET today_minutes=%d", *a.TodayMinutes))
	}
	summary := strings.Join(said, ", ") + "."
	enabled := rep.Enabled
	if v, ok := want[household.Prefix+"enabled"]; ok {
		enabled = v == "1"
	}
	others := len(want) // what is set besides enabled
	if a.Enabled != nil {
		others--
	}
	if a.TodayMinutes != nil {
		others++
	}
	var warnings []string
	if !enabled && others > 0 {
		warnings = append(warnings, "The play-time rules are off: these apply once they are turned on (enabled: true).")
	}
	if len(sent) == 0 {
		return limitsAction(actionResult(cabinet, outcomeUnchanged, "The play-time rules already are so: "+summary, nil,
			warnings), rep), nil
	}
	dry, err := g.run(ctx, action{what: "change the play-time rules", sent: sent, send: func(ctx context.Context) error {
		if len(changed) > 0 {
			after, err := hh.SetRules(ctx, changed, householdBy)
			if err != nil {
				return householdFailure("change the play-time rules", err)
			}
			rep = after
		}
		if a.TodayMinutes != nil {
			after, err := hh.SetTodayLimit(ctx, *a.TodayMinutes, householdBy)
			if err != nil {
				what := "set today's limit"
				if len(changed) > 0 {
					what += " (the other rules were changed)"
				}
				return householdFailure(what, err)
			}
			rep = after
		}
		return nil
	}})
	switch {
	case err != nil:
		return LimitsActionResult{}, err
	case dry:
		return limitsAction(actionResult(cabinet, outcomeDryRun, "Would set the play-time rules: "+summary, sent,
			warnings), rep), nil
	}
	return limitsAction(actionResult(cabinet, outcomeDone, "Set the play-time rules: "+summary, sent, warnings), rep), nil
}

// ruleText says what one rule value means, for the result's detail.
func ruleText(key, v string) string {
	r := strings.TrimPrefix(key, household.Prefix)
	switch {
	case r == "enabled" && v == "1":
		return "rules on"
	case r == "enabled":
		return "rules off"
	case r == "minutes.daily" && v == "":
		return "no daily limit"
	case r == "minutes.daily":
		return "daily limit " + v + " min"
	case strings.HasPrefix(r, "minutes."):
		day := weekdayName(strings.TrimPrefix(r, "minutes."))
		if v == "" {
			return day + ": the daily limit"
		}
		return day + " " + v + " min"
	case r == "session_minutes" && v == "":
		return "no session limit"
	case r == "session_minutes":
		return "session limit " + v + " min"
	case r == "bedtime" && v == "":
		return "no bedtime"
	case r == "bedtime":
		return "bedtime " + v
	case r == "warn_at" && v == "":
		return "no warnings"
	case r == "warn_at":
		return "warnings " + strings.ReplaceAll(v, ",", ", ") + " min before the end"
	case r == "at_limit":
		return "at the limit " + v
	case r == "min_start_minutes":
		return "a game needs " + v + " min left to start"
	}
	return r + "=" + v
}

func todayText(n int) string {
	if n < 0 {
		return "today's own limit cleared"
	}
	return fmt.Sprintf("today's limit %d min", n)
}

func weekdayName(day string) string {
	i := slices.Index(dayNames, day)
	if i < 0 {
		return day
	}
	return time.Weekday((i + 1) % 7).String()
}
