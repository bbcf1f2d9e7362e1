package tools

import (
	"context"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Message targets.
const (
	targetAuto         = "auto"
	targetGame         = "game"
	targetNotification = "notification"
	targetPopup        = "popup"
)

type messageArgs struct {
	Text   string `json:"text"`
	Target string `json:"target"`
}

func showMessageTool(ra raLink, e ES, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_show_message", "Show message",
		"Show one line of text on the cabinet's screen: over the running game (RetroArch on-screen message, a few "+
			"seconds), as an EmulationStation notification, or as an ES popup the player must dismiss (shown only "+
			"once no game runs). auto picks the game when RetroArch answers, else a notification.",
		writes, false,
		withInput(
			req("text", str("The message: one line, at most 200 characters.", minLen(1), maxLen(retroarch.MaxMessageRunes))),
			opt("target", str("Where to show it.", enum(targetAuto, targetGame, targetNotification, targetPopup),
				defaultValue(targetAuto))),
		),
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, a messageArgs) (ActionResult, error) {
		return showMessage(ctx, ra, e, g, cabinet, a)
	})
}

func showMessage(ctx context.Context, ra raLink, e ES, g *guard, cabinet string, a messageArgs) (ActionResult, error) {
	if err := retroarch.ValidateMessage(a.Text); err != nil {
		why := strings.TrimPrefix(err.Error(), retroarch.ErrInvalidMessage.Error()+": ")
		return ActionResult{}, refuse("Cannot show this text: %s.", why)
	}
	var warnings []string
	text := untrusted.Clean(a.Text, retroarch.MaxMessageRunes)
	if text == "" {
		return ActionResult{}, refuse("Cannot show this text: nothing visible is left once invisible characters are removed.")
	}
	if text != a.Text {
		warnings = append(warnings, "Invisible or formatting characters and extra spaces were removed from the text.")
	}
	target := a.Target
	if target == "" {
		target = targetAuto
	}
	if target == targetAuto || target == targetGame {
		_, err := ra.status(ctx)
		switch {
		case err == nil:
			target = targetGame
		case target == targetGame:
			return ActionResult{}, ra.failure(ctx, "show the message over the game", err)
		case errors.Is(err, context.Canceled):
			return ActionResult{}, err
		default:
			target = targetNotification
			if running, esErr := e.RunningGame(ctx); esErr == nil && running != nil {
				warnings = append(warnings, "RetroArch does not answer, so the message went to EmulationStation, "+
					"which is hidden while "+gameName(*running)+" runs.")
			}
		}
	}
	var act action
	var where string
	switch target {
	case targetGame:
		where = "over the game"
		act = action{sent: []string{"UDP SHOW_MSG " + text}, send: func(ctx context.Context) error {
			rctx, cancel := ra.bounded(ctx)
			defer cancel()
			if err := ra.ra.ShowMessage(rctx, text); err != nil {
				return ra.failure(ctx, "show the message over the game", err)
			}
			return nil
		}}
	case targetPopup:
		where = "as an EmulationStation popup"
		if running, err := e.RunningGame(ctx); err == nil && running != nil {
			warnings = append(warnings, "EmulationStation shows the popup only after "+gameName(*running)+" ends.")
		}
		act = action{sent: []string{"POST /messagebox " + text}, send: func(ctx context.Context) error {
			return esErr("show the popup", e.MessageBox(ctx, text))
		}}
	default:
		where = "as an EmulationStation notification"
		act = action{sent: []string{"POST /notify " + text}, send: func(ctx context.Context) error {
			return esErr("show the notification", e.Notify(ctx, text))
		}}
	}
	act.what, act.budget = "show a message", budgetMessage
	dry, err := g.run(ctx, act)
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(cabinet, outcomeDryRun, "Would show the message "+where+".", act.sent, warnings), nil
	}
	return actionResult(cabinet, outcomeDone, "Showed the message "+where+".", act.sent, warnings), nil
}

// esErr is esFailure for a possibly nil error.
func esErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return esFailure(what, err)
}

func reloadGamesTool(e ES, g *guard, cat *catalog, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_reload_games", "Reload game lists",
		"Make EmulationStation rescan its game lists, after ROMs were added or removed. While a game runs, ES "+
			"reloads once it ends. Rate-limited.",
		writes, true,
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, _ none) (ActionResult, error) {
		return reloadGames(ctx, e, g, cat, cabinet)
	})
}

func reloadGames(ctx context.Context, e ES, g *guard, cat *catalog, cabinet string) (ActionResult, error) {
	var warnings []string
	if running, err := e.RunningGame(ctx); err == nil && running != nil {
		warnings = append(warnings, "A game is running: EmulationStation reloads after "+gameName(*running)+" ends.")
	}
	sent := []string{"GET /reloadgames"}
	dry, err := g.run(ctx, action{what: "reload the game lists", budget: budgetReload, sent: sent,
		send: func(ctx context.Context) error {
			err := e.ReloadGames(ctx)
			cat.invalidate() // even on error: the request may have reached ES
			return esErr("reload the game lists", err)
		}})
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(cabinet, outcomeDryRun, "Would ask EmulationStation to reload its game lists.", sent,
			warnings), nil
	}
	return actionResult(cabinet, outcomeDone, "EmulationStation is reloading its game lists; searches use the new lists.",
		sent, warnings), nil
}
