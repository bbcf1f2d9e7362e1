package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// pollEvery is how often a confirmation re-reads ES.
const pollEvery = 100 * time.Millisecond

type launchArgs struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
}

func launchGameTool(l launcher) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_launch_game", "Launch game",
		"Start a game on the cabinet by its system and game_id (from batocera_find_games). Refused while a game "+
			"runs (quit it first), while another launch is under way, or when the household's play-time rules "+
			"allow no game now. Waits until EmulationStation reports the game running. Rate-limited together with "+
			"batocera_quit_game.",
		writes, false,
		withInput(req("system", systemArg("The game's system, e.g. snes.")), req("game_id", gameIDArg())),
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, a launchArgs) (ActionResult, error) {
		return l.launch(ctx, a, ViaMCP)
	})
}

// launch is the one launch: the household's rules, one launch at a time, the launch/quit rate
// limit and dry run (the guard), ES's launch and its confirmation; the tracker is told the moment
// ES confirms (Deps.Launched), so a game whose ES hook never runs is timed from its launch.
func (l launcher) launch(ctx context.Context, a launchArgs, via string) (ActionResult, error) {
	e, g := l.es, l.guard
	warnings, err := householdAllows(ctx, l.hh)
	if err != nil {
		return ActionResult{}, err
	}
	end, err := g.beginLaunch()
	if err != nil {
		return ActionResult{}, err
	}
	defer end()
	// The lookups cache the system's whole game list in the ES client; the
	// search index already holds what is needed, so the list is not kept.
	defer e.InvalidateSystem(a.System)
	game, err := launchable(ctx, e, a.System, a.GameID)
	if err != nil {
		return ActionResult{}, err
	}
	name := fmt.Sprintf("%s (%s)", gameName(game), systemName(a.System))
	sent := []string{"POST /launch " + untrusted.Clean(game.Path, maxPath)}
	dry, err := g.run(ctx, action{what: "launch " + name, budget: budgetLaunchQuit, sent: sent,
		send: func(ctx context.Context) error {
			started, err := e.LaunchGame(ctx, a.System, a.GameID)
			if err == nil && l.launched != nil {
				if started.Path == "" {
					started = game
				}
				l.launched(via, started)
			}
			return launchFailure(name, err)
		}})
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(l.cabinet, outcomeDryRun, "Would launch "+name+".", sent, warnings), nil
	}
	return actionResult(l.cabinet, outcomeDone, "Launched "+name+"; EmulationStation reports it running.", sent, warnings), nil
}

func launchFailure(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, es.ErrLaunchNotConfirmed):
		return refuse("EmulationStation accepted the launch of %s but did not report it running in time. It may still "+
			"be starting, or ES is showing a dialog, or the emulator failed; check batocera_get_status before retrying.", name)
	case errors.Is(err, es.ErrGameRunning):
		return refuse("A game started meanwhile; quit it first with batocera_quit_game.")
	case errors.Is(err, es.ErrLaunchInProgress):
		return refuse("Another launch is still in progress; wait a few seconds and check batocera_get_status.")
	case errors.Is(err, es.ErrNotFound):
		return refuse("EmulationStation no longer lists %s; reload the game lists or search again.", name)
	}
	return esFailure("launch "+name, err)
}

// quitter ends the running game: batocera_quit_game, and the household's
// rules through Server.QuitForRules.
type quitter struct {
	es      ES
	guard   *guard
	cat     *catalog
	cabinet string
	wait    time.Duration // Options.QuitWait
}

func quitGameTool(q quitter) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_quit_game", "Quit game",
		"Quit the running game and return to EmulationStation. Unsaved progress is lost: ask the user first, and "+
			"offer batocera_save_state for RetroArch games. Does nothing when no game runs. Rate-limited together "+
			"with batocera_launch_game.",
		destroys, true,
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, _ none) (ActionResult, error) {
		return q.quit(ctx, false)
	})
}

// quit ends the running game with GET /emukill and waits for /runningGame
// to clear. For the tool (forRules false) the guard applies: the
// launch+quit budget and dry run, and nothing is sent when no game runs.
// For the household's rules the guard is bypassed (guard.enforce), and
// /emukill goes out even when ES shows no game: a launch the rules refuse
// may not show in /runningGame yet.
func (q quitter) quit(ctx context.Context, forRules bool) (ActionResult, error) {
	running, err := q.es.RunningGame(ctx)
	if err != nil {
		return ActionResult{}, esFailure("check the running game", err)
	}
	if running == nil && !forRules {
		return actionResult(q.cabinet, outcomeUnchanged, "No game is running.", nil, nil), nil
	}
	name := "the game starting"
	if running != nil {
		name = fmt.Sprintf("%s (%s)", gameName(*running), systemName(running.System))
	}
	sent := []string{"GET /emukill"}
	act := action{what: "quit " + name, budget: budgetLaunchQuit, sent: sent,
		send: func(ctx context.Context) error {
			if err := q.es.EmuKill(ctx); err != nil {
				return esFailure("quit "+name, err)
			}
			return nil
		}}
	var dry bool
	if forRules {
		err = q.guard.enforce(ctx, act)
	} else {
		dry, err = q.guard.run(ctx, act)
	}
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(q.cabinet, outcomeDryRun, "Would quit "+name+"; unsaved progress would be lost.", sent, nil), nil
	}
	q.cat.invalidate() // ES updates play statistics when a game ends
	if running == nil {
		return actionResult(q.cabinet, outcomeDone, "EmulationStation showed no game running; sent /emukill in case "+
			"one was starting.", sent, nil), nil
	}
	var warnings []string
	if still := awaitQuit(ctx, q.es, running.ID, q.wait); still != nil {
		warnings = append(warnings, fmt.Sprintf("EmulationStation still reports %s running; check batocera_get_status.",
			gameName(*still)))
	}
	return actionResult(q.cabinet, outcomeDone, "Quit "+name+".", sent, warnings), nil
}

// QuitForRules ends the running game for the household's play-time rules
// (the daemon's enforcement): batocera_quit_game's path, but never refused
// by a rate limit nor spending a token, and sent even when this server is a
// dry run: rate limits and dry run are about what MCP clients do, and the
// rules must end a game whatever they did. With no game in ES's
// /runningGame it still sends /emukill once and says so.
func (s *Server) QuitForRules(ctx context.Context) (ActionResult, error) {
	return s.quitter.quit(ctx, true)
}

// awaitQuit polls /runningGame until the game with id is gone, for at most
// wait (Options.QuitWait); it returns the game still running, or nil.
func awaitQuit(ctx context.Context, e ES, id string, wait time.Duration) *es.Game {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		g, err := e.RunningGame(ctx)
		if err == nil && (g == nil || g.ID != id) {
			return nil
		}
		select {
		case <-ctx.Done():
			return g
		case <-tick.C:
		}
	}
}
