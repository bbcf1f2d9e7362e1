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

func launchGameTool(e ES, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_launch_game", "Launch game",
		"Start a game on the cabinet by its system and game_id (from batocera_find_games). Refused while a game "+
			"runs (quit it first) or another launch is under way. Waits until EmulationStation reports the game "+
			"running. Rate-limited together with batocera_quit_game.",
		writes, false,
		withInput(req("system", systemArg("The game's system, e.g. snes.")), req("game_id", gameIDArg())),
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, a launchArgs) (ActionResult, error) {
		return launchGame(ctx, e, g, cabinet, a)
	})
}

func launchGame(ctx context.Context, e ES, g *guard, cabinet string, a launchArgs) (ActionResult, error) {
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
			_, err := e.LaunchGame(ctx, a.System, a.GameID)
			return launchFailure(name, err)
		}})
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(cabinet, outcomeDryRun, "Would launch "+name+".", sent, nil), nil
	}
	return actionResult(cabinet, outcomeDone, "Launched "+name+"; EmulationStation reports it running.", sent, nil), nil
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

func quitGameTool(e ES, g *guard, cat *catalog, cabinet string, wait time.Duration) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_quit_game", "Quit game",
		"Quit the running game and return to EmulationStation. Unsaved progress is lost: ask the user first, and "+
			"offer batocera_save_state for RetroArch games. Does nothing when no game runs. Rate-limited together "+
			"with batocera_launch_game.",
		destroys, true,
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, _ none) (ActionResult, error) {
		return quitGame(ctx, e, g, cat, cabinet, wait)
	})
}

func quitGame(ctx context.Context, e ES, g *guard, cat *catalog, cabinet string,
	wait time.Duration) (ActionResult, error) {
	running, err := e.RunningGame(ctx)
	if err != nil {
		return ActionResult{}, esFailure("check the running game", err)
	}
	if running == nil {
		return actionResult(cabinet, outcomeUnchanged, "No game is running.", nil, nil), nil
	}
	name := fmt.Sprintf("%s (%s)", gameName(*running), systemName(running.System))
	sent := []string{"GET /emukill"}
	dry, err := g.run(ctx, action{what: "quit " + name, budget: budgetLaunchQuit, sent: sent,
		send: func(ctx context.Context) error {
			if err := e.EmuKill(ctx); err != nil {
				return esFailure("quit "+name, err)
			}
			return nil
		}})
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(cabinet, outcomeDryRun, "Would quit "+name+"; unsaved progress would be lost.", sent, nil), nil
	}
	cat.invalidate() // ES updates play statistics when a game ends
	var warnings []string
	if still := awaitQuit(ctx, e, running.ID, wait); still != nil {
		warnings = append(warnings, fmt.Sprintf("EmulationStation still reports %s running; check batocera_get_status.",
			gameName(*still)))
	}
	return actionResult(cabinet, outcomeDone, "Quit "+name+".", sent, warnings), nil
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
