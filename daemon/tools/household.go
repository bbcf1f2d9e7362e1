package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// The household tools: the play-time rules (parental limits) the daemon
// keeps and enforces (package household). batocera_get_limits reads them;
// batocera_set_limits, batocera_grant_time and batocera_pause_play change
// them and need the household token scope. They are registered only with
// Deps.Household, the writes never in read-only mode.

// householdBy is who the daemon records as the author of a change.
const householdBy = "mcp"

// LimitsResult is batocera_get_limits' answer: the household.Report and the
// cabinet's name.
type LimitsResult struct {
	Cabinet string `json:"cabinet"`
	household.Report
}

func (r LimitsResult) text() string { return limitsText(r.Report) }

// LimitsActionResult is the answer of the household write tools: the
// action result and the limits afterwards (in a dry run or when unchanged,
// as they are).
type LimitsActionResult struct {
	ActionResult
	Limits household.Report `json:"limits"`
}

func (r LimitsActionResult) text() string {
	return r.ActionResult.text() + "\n" + limitsText(r.Limits)
}

func limitsAction(r ActionResult, rep household.Report) LimitsActionResult {
	return LimitsActionResult{ActionResult: r, Limits: completeReport(rep)}
}

// dayNames are the weekday_minutes keys, Monday first (household's
// minutes.<day> suffixes).
var dayNames = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

// completeReport fills in what the output schema requires and a report
// built by hand may lack: every weekday and a non-nil warn_at.
func completeReport(rep household.Report) household.Report {
	days := make(map[string]*int, len(dayNames))
	for _, d := range dayNames {
		days[d] = rep.Rules.WeekdayMinutes[d]
	}
	rep.Rules.WeekdayMinutes = days
	if rep.Rules.WarnAt == nil {
		rep.Rules.WarnAt = []int{}
	}
	return rep
}

// reportProps are household.Report's fields, named as its JSON tags.
func reportProps() []prop {
	nint := func(d string) js { return nullable(integer(d)) }
	nstr := func(d string, mods ...mod) js { return nullable(str(d, mods...)) }
	days := make([]prop, len(dayNames))
	for i, d := range dayNames {
		days[i] = req(d, nint("Minutes on this day instead of daily_minutes; null: daily_minutes applies."))
	}
	return []prop{
		req("enabled", boolean("Whether the play-time rules are on.")),
		req("state", str("off: rules off; ok: play allowed; warning: the end is within the first warning point; "+
			"time_up: today's time or this game's session is used up; bedtime: inside the bedtime window; paused: a "+
			"parent paused play.", enum(string(household.StateOff), string(household.StateOK), string(household.StateWarning),
			string(household.StateTimeUp), string(household.StateBedtime), string(household.StatePaused)))),
		req("day", str("The play day counted, YYYY-MM-DD in local time.")),
		req("weekday", str("That day's weekday, e.g. Monday.")),
		req("clock_trusted", boolean("The wall clock is set (NTP or a clock chip); without it, today is the last day "+
			"the cabinet knew and bedtime waits.")),
		req("limit_minutes", nint("Today's limit in minutes (today's own, the weekday's or the daily one); null: none.")),
		req("bonus_minutes", integer("Extra minutes granted for today; they lapse at midnight.")),
		req("used_minutes", integer("Minutes played today.")),
		req("left_minutes", nint("Minutes left today; null: no daily limit.")),
		req("session_left_minutes", nint("The running game's minutes left by session_minutes; null: none or no game.")),
		req("bedtime", nstr("The bedtime window, HH:MM-HH:MM local time; null: none.")),
		req("in_bedtime", boolean("Bedtime is on now.")),
		req("paused", boolean("A parent paused play.")),
		req("launch_refused", nstr("Why a game started now would be ended at once; null: a game may start.")),
		req("next_play", nstr("When play is possible again (RFC 3339), when known; null otherwise.")),
		req("profile", nstr("Whose time and rules these are: the running game's player, else the player chosen; null: "+
			"the cabinet's own rules.")),
		req("player", nstr("The player chosen now (batocera_set_player); null: none.")),
		req("profiles", array("The household's players (cabinet.household.profiles).", str("A profile's name."))),
		req("ui_mode", nullable(str("EmulationStation's mode (batocera_set_ui_mode): Full, Kiosk or Kid; null: its "+
			"settings could not be read.", enum(haentities.UIModes...)))),
		req("rules", object("The rules in force (cabinet.household.* in batocera.conf).",
			req("daily_minutes", nint("Minutes of play a day; null: no daily limit.")),
			req("weekday_minutes", object("Limits per weekday.", days...)),
			req("session_minutes", nint("The longest one game may run, in minutes; null: no session limit.")),
			req("bedtime", nstr("No games in this window, HH:MM-HH:MM local time (may cross midnight); null: none.")),
			req("warn_at", array("The player is warned this many minutes before the end, largest first.",
				integer("Minutes before the end."))),
			req("at_limit", str("What happens when the time is up while a game runs: save_quit saves where the "+
				"emulator can, then quits; quit quits (unsaved progress is lost); warn_only keeps warning.",
				enum(string(household.SaveQuit), string(household.Quit), string(household.WarnOnly)))),
			req("min_start_minutes", integer("A game starts only with at least this many minutes left.")))),
	}
}

// limitsText renders a report in a line or two.
func limitsText(rep household.Report) string {
	if !rep.Enabled {
		if rep.Paused {
			return "Play is paused (a parent turned pause play on); the other play-time rules are off."
		}
		return "Play-time rules are off."
	}
	var b strings.Builder
	b.WriteString("Limits on: ")
	if rep.LeftMinutes != nil && rep.LimitMinutes != nil {
		fmt.Fprintf(&b, "%d min left today (limit %d", *rep.LeftMinutes, *rep.LimitMinutes)
		if rep.BonusMinutes > 0 {
			fmt.Fprintf(&b, ", +%d extra", rep.BonusMinutes)
		}
		fmt.Fprintf(&b, ", used %d).", rep.UsedMinutes)
	} else {
		fmt.Fprintf(&b, "no daily limit today (used %d min).", rep.UsedMinutes)
	}
	if rep.SessionLeftMinutes != nil {
		fmt.Fprintf(&b, " This game: %d min left of its session.", *rep.SessionLeftMinutes)
	}
	if rep.Bedtime != nil {
		fmt.Fprintf(&b, " Bedtime %s", *rep.Bedtime)
		if rep.InBedtime {
			b.WriteString(" (now)")
		}
		b.WriteString(".")
	}
	if rep.Paused {
		b.WriteString(" Play is paused.")
	}
	if rep.LaunchRefused != nil {
		b.WriteString(" No game may start now: " + *rep.LaunchRefused)
	}
	if !rep.ClockTrusted {
		b.WriteString(" The clock is not set yet: today is the last day the cabinet knew, and bedtime waits.")
	}
	return b.String()
}

func getLimitsTool(hh Household, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_get_limits", "Play-time limits",
		"The household's play-time rules (parental limits) and where today stands, all times in minutes: whether "+
			"the rules are on, the state (ok, warning, time_up, bedtime, paused), today's limit, extra time granted, "+
			"minutes used and left, the running game's session time left, bedtime, whether a game may start now "+
			"and why not, and the rules themselves (daily and per-weekday limits, session limit, warnings, what "+
			"happens at the limit). Only a parent changes them (batocera_set_limits, batocera_grant_time, "+
			"batocera_pause_play).",
		reads, true,
		withOutput(append([]prop{req("cabinet", str("The cabinet's name."))}, reportProps()...)...))
	return t, typed(func(ctx context.Context, _ none) (LimitsResult, error) {
		rep, err := hh.Report(ctx)
		if err != nil {
			return LimitsResult{}, householdFailure("read the play-time rules", err)
		}
		return LimitsResult{Cabinet: cabinet, Report: completeReport(rep)}, nil
	})
}

// householdFailure turns an error of the daemon's rules into a refusal.
func householdFailure(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return refuse("Could not %s: %s. Check that the cabinet service runs (cabinet doctor).", what,
		untrusted.Clean(err.Error(), maxErrorRunes))
}

// householdAllows refuses a launch the play-time rules would end at once
// (nil Household: no check). Reading the rules failing is a warning only:
// the daemon applies them again once the game starts.
func householdAllows(ctx context.Context, hh Household) (warnings []string, err error) {
	if hh == nil {
		return nil, nil
	}
	rep, err := hh.Report(ctx)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, err
	case err != nil:
		return []string{"Could not read the household's play-time rules (" + untrusted.Clean(err.Error(), maxShort) +
			"); the cabinet applies them once the game starts."}, nil
	case rep.Enabled && rep.LaunchRefused != nil:
		return nil, refuse("The household's play-time rules do not allow a game now: %s Only a parent can give "+
			"extra time or change the rules.", *rep.LaunchRefused)
	}
	return nil, nil
}

type grantArgs struct {
	Minutes int `json:"minutes"`
}

// maxGrant bounds one grant: loops and typos should not hand out a day.
const maxGrant = 240

func grantTimeTool(hh Household, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_grant_time", "Grant extra play time",
		"Give extra play time for today only, in minutes (1 to 240), on top of today's limit; it lapses at "+
			"midnight. A parent's decision: grant time only when a parent asks or agrees, never just because the "+
			"player asks. Each call adds more. Extra time does not lift bedtime or a pause. The answer has the "+
			"limits afterwards.",
		writes, false,
		withInput(req("minutes", integer("Extra minutes for today, 1 to 240.", minimum(1), maximum(maxGrant)))),
		withOutput(actionProps(req("limits", object("The play-time limits afterwards (as batocera_get_limits).",
			reportProps()...)))...))
	return t, typed(func(ctx context.Context, a grantArgs) (LimitsActionResult, error) {
		return grantTime(ctx, hh, g, cabinet, a)
	})
}

func grantTime(ctx context.Context, hh Household, g *guard, cabinet string, a grantArgs) (LimitsActionResult, error) {
	if a.Minutes < 1 || a.Minutes > maxGrant {
		return LimitsActionResult{}, refuse("minutes must be from 1 to %d, got %d.", maxGrant, a.Minutes)
	}
	rep, err := hh.Report(ctx)
	if err != nil {
		return LimitsActionResult{}, householdFailure("read the play-time rules", err)
	}
	sent := []string{fmt.Sprintf("GRANT +%d min today", a.Minutes)}
	dry, err := g.run(ctx, action{what: "grant time", sent: sent, send: func(ctx context.Context) error {
		after, err := hh.Grant(ctx, a.Minutes, householdBy)
		if err != nil {
			return householdFailure("grant the time", err)
		}
		rep = after
		return nil
	}})
	if err != nil {
		return LimitsActionResult{}, err
	}
	var warnings []string
	switch {
	case !rep.Enabled:
		warnings = append(warnings, "The play-time rules are off, so extra time changes nothing until they are on.")
	case rep.LimitMinutes == nil:
		warnings = append(warnings, "There is no daily limit today, so extra time changes nothing today.")
	}
	if rep.Enabled && (rep.InBedtime || rep.Paused) {
		warnings = append(warnings, "Extra time does not lift bedtime or a pause: no game may start now.")
	}
	if dry {
		return limitsAction(actionResult(cabinet, outcomeDryRun, fmt.Sprintf("Would grant %d extra minutes for today.",
			a.Minutes), sent, warnings), rep), nil
	}
	return limitsAction(actionResult(cabinet, outcomeDone, fmt.Sprintf("Granted %d extra minutes for today; they "+
		"lapse at midnight.", a.Minutes), sent, warnings), rep), nil
}

type pausePlayArgs struct {
	Paused *bool `json:"paused"`
}

func pausePlayTool(hh Household, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_pause_play", "Pause or resume play",
		"Pause all play now (paused: true) or resume it (false). While paused no game may start, and a running "+
			"game is saved where the emulator can and then quit. A parent's decision: only when a parent asks or "+
			"agrees; if a game is running, tell the player first. Not batocera_pause_game, which only freezes the "+
			"running game. The answer has the limits afterwards.",
		destroys, true,
		withInput(req("paused", boolean("true pauses play, false resumes it."))),
		withOutput(actionProps(req("limits", object("The play-time limits afterwards (as batocera_get_limits).",
			reportProps()...)))...))
	return t, typed(func(ctx context.Context, a pausePlayArgs) (LimitsActionResult, error) {
		return pausePlay(ctx, hh, g, cabinet, a)
	})
}

func pausePlay(ctx context.Context, hh Household, g *guard, cabinet string, a pausePlayArgs) (LimitsActionResult, error) {
	if a.Paused == nil {
		return LimitsActionResult{}, refuse("Give paused: true to pause play, false to resume it.")
	}
	on := *a.Paused
	rep, err := hh.Report(ctx)
	if err != nil {
		return LimitsActionResult{}, householdFailure("read the play-time rules", err)
	}
	var warnings []string // a pause applies with the rules off too
	done, would := "Resumed play: games may start again within the rules.", "Would resume play."
	if on {
		done = "Paused play: no game may start, and a running game is saved where possible and quit."
		would = "Would pause play: no game could start, and a running game would be saved where possible and quit."
	}
	if rep.Paused == on {
		state := map[bool]string{true: "Play already is paused.", false: "Play is not paused."}[on]
		return limitsAction(actionResult(cabinet, outcomeUnchanged, state, nil, warnings), rep), nil
	}
	sent := []string{"PAUSE " + map[bool]string{true: "on", false: "off"}[on]}
	dry, err := g.run(ctx, action{what: "pause play", sent: sent, send: func(ctx context.Context) error {
		after, err := hh.Pause(ctx, on, householdBy)
		if err != nil {
			return householdFailure("change the pause", err)
		}
		rep = after
		return nil
	}})
	switch {
	case err != nil:
		return LimitsActionResult{}, err
	case dry:
		return limitsAction(actionResult(cabinet, outcomeDryRun, would, sent, warnings), rep), nil
	}
	return limitsAction(actionResult(cabinet, outcomeDone, done, sent, warnings), rep), nil
}

type setPlayerArgs struct {
	Player *string `json:"player"`
}

func setPlayerTool(hh Household, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_set_player", "Choose the player",
		"Choose who plays from the next game on: one of the household's profiles (batocera_get_limits lists them "+
			"in profiles), whose own rules and time then apply; \"\" for none (the cabinet's rules). A game running "+
			"keeps its player's rules and time until it ends: switching never escapes a limit. A parent's decision, "+
			"or the player's own when a parent agrees. The answer has the limits afterwards.",
		writes, true,
		withInput(req("player", str("A profile's name, or \"\" for none.", maxLen(32)))),
		withOutput(actionProps(req("limits", object("The play-time limits afterwards (as batocera_get_limits).",
			reportProps()...)))...))
	return t, typed(func(ctx context.Context, a setPlayerArgs) (LimitsActionResult, error) {
		return setPlayer(ctx, hh, g, cabinet, a)
	})
}

func setPlayer(ctx context.Context, hh Household, g *guard, cabinet string, a setPlayerArgs) (LimitsActionResult, error) {
	if a.Player == nil {
		return LimitsActionResult{}, refuse("Give player: a profile's name, or \"\" for none.")
	}
	name := strings.ToLower(strings.TrimSpace(*a.Player))
	rep, err := hh.Report(ctx)
	if err != nil {
		return LimitsActionResult{}, householdFailure("read the play-time rules", err)
	}
	if name != "" && !slices.Contains(rep.Profiles, name) {
		if len(rep.Profiles) == 0 {
			return LimitsActionResult{}, refuse("The household has no profiles: a parent lists them in cabinet.household.profiles.")
		}
		return LimitsActionResult{}, refuse("No profile %q: the household's are %s.", untrusted.Clean(name, 32), strings.Join(rep.Profiles, ", "))
	}
	if rep.Player != nil && *rep.Player == name || rep.Player == nil && name == "" {
		return limitsAction(actionResult(cabinet, outcomeUnchanged, playerText(name)+" already plays.", nil, nil), rep), nil
	}
	sent := []string{"PLAYER " + map[bool]string{true: "none", false: name}[name == ""]}
	dry, err := g.run(ctx, action{what: "choose the player", sent: sent, send: func(ctx context.Context) error {
		after, err := hh.SetPlayer(ctx, name, householdBy)
		if err != nil {
			return householdFailure("choose the player", err)
		}
		rep = after
		return nil
	}})
	if err != nil {
		return LimitsActionResult{}, err
	}
	var warnings []string
	if rep.Profile != nil && *rep.Profile != name || rep.Profile == nil && name != "" {
		warnings = append(warnings, "A game is running: it keeps its own player's rules and time until it ends.")
	}
	if dry {
		return limitsAction(actionResult(cabinet, outcomeDryRun, "Would choose "+playerText(name)+".", sent, warnings), rep), nil
	}
	return limitsAction(actionResult(cabinet, outcomeDone, playerText(name)+" plays from the next game.", sent, warnings), rep), nil
}

func playerText(name string) string {
	if name == "" {
		return "No profile (the cabinet's rules)"
	}
	return name
}

type setUIModeArgs struct {
	Mode *string `json:"mode"`
}

func setUIModeTool(hh Household, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_set_ui_mode", "Set EmulationStation's mode",
		"Set EmulationStation's user interface mode: Full (every menu and game), Kiosk (no settings menus) or Kid "+
			"(no settings menus, and only games marked as kid games — kidgame in the game list — are shown; "+
			"Cabinet's own entries always are). EmulationStation takes a new mode only when it starts, so it is "+
			"restarted (its menus are gone for a few seconds), and only while no game runs: during a game the "+
			"change is refused. On the cabinet, EmulationStation's passkey (entered with the pad) leaves Kiosk "+
			"and Kid mode. The answer has the limits afterwards, with ui_mode read back.",
		writes, true,
		withInput(req("mode", str("Full, Kiosk or Kid.", enum(haentities.UIModes...)))),
		withOutput(actionProps(req("limits", object("The play-time limits afterwards (as batocera_get_limits).",
			reportProps()...)))...))
	return t, typed(func(ctx context.Context, a setUIModeArgs) (LimitsActionResult, error) {
		return setUIMode(ctx, hh, g, cabinet, a)
	})
}

func setUIMode(ctx context.Context, hh Household, g *guard, cabinet string, a setUIModeArgs) (LimitsActionResult, error) {
	if a.Mode == nil {
		return LimitsActionResult{}, refuse("Give mode: Full, Kiosk or Kid.")
	}
	mode, err := haentities.ParseUIMode([]byte(*a.Mode))
	if err != nil {
		return LimitsActionResult{}, refuse("%v.", err)
	}
	rep, err := hh.Report(ctx)
	if err != nil {
		return LimitsActionResult{}, householdFailure("read the play-time rules", err)
	}
	if rep.UIMode != nil && *rep.UIMode == mode {
		return limitsAction(actionResult(cabinet, outcomeUnchanged, "EmulationStation already is in "+uimode.Describe(mode)+".",
			nil, nil), rep), nil
	}
	plan, err := hh.PlanUIMode(ctx, mode)
	if err != nil {
		return LimitsActionResult{}, refuse("Not changed: %s", untrusted.Clean(err.Error(), 300))
	}
	sent := []string{"S31emulationstation stop", "UIMode=" + mode, "S31emulationstation start"}
	var done string
	dry, err := g.run(ctx, action{what: "change EmulationStation's mode", sent: sent, send: func(ctx context.Context) error {
		after, text, err := hh.SetUIMode(ctx, mode, householdBy)
		if err != nil {
			return refuse("Not changed: %s", untrusted.Clean(err.Error(), 300))
		}
		rep, done = after, text
		return nil
	}})
	switch {
	case err != nil:
		return LimitsActionResult{}, err
	case dry:
		return limitsAction(actionResult(cabinet, outcomeDryRun, plan, sent, nil), rep), nil
	}
	return limitsAction(actionResult(cabinet, outcomeDone, done, sent, nil), rep), nil
}
