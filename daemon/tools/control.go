package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
)

// pauseConfirm bounds the wait for GET_STATUS to show a pause or resume:
// RetroArch acts on the next frame.
const pauseConfirm = time.Second

// hotkey is one RetroArch hotkey a tool presses.
type hotkey struct {
	cmd      retroarch.Command
	budget   budget
	what     string // "save a state": for refusals and the dry-run detail ("Would save a state ...")
	done     string // detail when done, "%s" is the game
	warnings []string
	// running: RetroArch ignores the hotkey while paused (1.14 drops save
	// and load state, slot changes and reset then; screenshot and volume
	// work), so a paused game is resumed around it.
	running bool
}

// press checks that RetroArch runs a game, then presses the hotkey through
// the guard; a paused game is resumed for the hotkeys that need it and
// paused again, and sent says so.
func press(ctx context.Context, ra raLink, g *guard, cabinet string, k hotkey) (ActionResult, error) {
	st, err := ra.playing(ctx, k.what)
	if err != nil {
		return ActionResult{}, err
	}
	warnings := append([]string(nil), k.warnings...)
	sent := []string{udp(k.cmd)}
	send := func(ctx context.Context) error { return ra.send(ctx, k.cmd) }
	if k.running && st.State == retroarch.StatePaused {
		sent = []string{udp(retroarch.CmdPauseToggle), udp(k.cmd), udp(retroarch.CmdPauseToggle)}
		warnings = append(warnings, "RetroArch ignores this while paused, so the game was resumed for a moment and paused again.")
		send = func(ctx context.Context) error {
			err := ra.whileRunning(ctx, k)
			if err != nil {
				return err
			}
			if now, ok := ra.awaitState(ctx, retroarch.StatePaused); !ok {
				warnings = append(warnings, "RetroArch reports "+string(now)+" instead of paused; pause it with batocera_pause_game.")
			}
			return nil
		}
	}
	dry, err := g.run(ctx, action{what: k.what, budget: k.budget, sent: sent, send: send})
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(cabinet, outcomeDryRun, "Would "+k.what+" in "+describeRA(st)+".", sent, warnings), nil
	}
	return actionResult(cabinet, outcomeDone, fmt.Sprintf(k.done, describeRA(st)), sent, warnings), nil
}

// whileRunning resumes the game, presses k and pauses again. A GET_STATUS
// round trip after the hotkey shows RetroArch has read it (it reads the
// queued commands, then acts on them in the same frame), so the second
// PAUSE_TOGGLE cannot land in the frame that takes the hotkey.
func (l raLink) whileRunning(ctx context.Context, k hotkey) error {
	if err := l.send(ctx, retroarch.CmdPauseToggle); err != nil {
		return err
	}
	if now, ok := l.awaitState(ctx, retroarch.StatePlaying); !ok {
		return refuse("Could not %s: the game is paused and RetroArch did not resume (it reports %s); resume it with "+
			"batocera_pause_game and retry.", k.what, now)
	}
	if err := l.send(ctx, k.cmd); err != nil {
		return err
	}
	if _, err := l.status(ctx); err != nil {
		return l.failure(ctx, k.what, err)
	}
	return l.send(ctx, retroarch.CmdPauseToggle)
}

// playing reads GET_STATUS and refuses unless RetroArch runs a game.
func (l raLink) playing(ctx context.Context, what string) (retroarch.Status, error) {
	st, err := l.status(ctx)
	if err != nil {
		return st, l.failure(ctx, what, err)
	}
	if st.State == retroarch.StateContentless {
		return st, refuse("Could not %s: RetroArch runs without a game. Launch one with batocera_launch_game.", what)
	}
	return st, nil
}

// retroarchTool defines a hotkey tool; resumes says a paused game is
// resumed around the hotkey.
func retroarchTool(name, title, description string, e effect, resumes bool, props ...prop) mcp.Tool {
	opts := []mcp.ToolOption{withOutput(actionProps()...)}
	if len(props) > 0 {
		opts = append(opts, withInput(props...))
	}
	if resumes {
		description += " RetroArch ignores this while paused, so a paused game is resumed for a moment and paused again."
	}
	return define(name, title, description+" Needs a RetroArch game with network commands on.", e, false, opts...)
}

func saveStateTool(ra raLink, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := retroarchTool("batocera_save_state", "Save state",
		"Save the running game's state into RetroArch's current save slot, replacing what that slot held "+
			"(batocera_change_save_slot picks another slot). Rate-limited.", writes, true)
	return t, typed(func(ctx context.Context, _ none) (ActionResult, error) {
		return press(ctx, ra, g, cabinet, hotkey{cmd: retroarch.CmdSaveState, budget: budgetSaveState,
			what: "save a state", done: "Saved the state of %s in the current slot.", running: true})
	})
}

func loadStateTool(ra raLink, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := retroarchTool("batocera_load_state", "Load state",
		"Load the state saved in RetroArch's current save slot into the running game. Progress since that save is "+
			"lost: ask the user first. Rate-limited.", destroys, true)
	return t, typed(func(ctx context.Context, _ none) (ActionResult, error) {
		return press(ctx, ra, g, cabinet, hotkey{cmd: retroarch.CmdLoadState, budget: budgetLoadState,
			what: "load the saved state", done: "Loaded the current slot's state into %s.", running: true,
			warnings: []string{"RetroArch does not report whether the slot held a state; if it was empty, nothing changed."}})
	})
}

func resetGameTool(ra raLink, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := retroarchTool("batocera_reset_game", "Reset game",
		"Reset the running game, like the console's reset button. Unsaved progress is lost: ask the user first. "+
			"Rate-limited.", destroys, true)
	return t, typed(func(ctx context.Context, _ none) (ActionResult, error) {
		return press(ctx, ra, g, cabinet, hotkey{cmd: retroarch.CmdReset, budget: budgetReset, what: "reset the game",
			done: "Reset %s.", running: true})
	})
}

type slotArgs struct {
	Direction string `json:"direction"`
}

func changeSaveSlotTool(ra raLink, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := retroarchTool("batocera_change_save_slot", "Change save slot",
		"Move RetroArch's current save slot to the next or previous one; save and load states then use it. "+
			"RetroArch shows the slot number on screen but does not report it here.", writes, true,
		req("direction", str("Which way to move.", enum("next", "previous"))))
	return t, typed(func(ctx context.Context, a slotArgs) (ActionResult, error) {
		k := hotkey{cmd: retroarch.CmdStateSlotPlus, budget: budgetControl, what: "move to the next save slot",
			done: "Moved %s to the next save slot.", running: true}
		if a.Direction == "previous" {
			k.cmd, k.what, k.done = retroarch.CmdStateSlotMinus, "move to the previous save slot",
				"Moved %s to the previous save slot (slot 0 stays at 0)."
		}
		return press(ctx, ra, g, cabinet, k)
	})
}

type volumeArgs struct {
	Action string `json:"action"`
}

func adjustVolumeTool(ra raLink, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := retroarchTool("batocera_adjust_volume", "Adjust volume",
		"Turn RetroArch's volume up or down one step, or toggle mute.", writes, false,
		req("action", str("up, down, or mute (a toggle: mute again to unmute).", enum("up", "down", "mute"))))
	return t, typed(func(ctx context.Context, a volumeArgs) (ActionResult, error) {
		k := hotkey{cmd: retroarch.CmdVolumeUp, budget: budgetControl, what: "turn the volume up",
			done: "Turned the volume of %s up one step."}
		switch a.Action {
		case "down":
			k.cmd, k.what, k.done = retroarch.CmdVolumeDown, "turn the volume down", "Turned the volume of %s down one step."
		case "mute":
			k.cmd, k.what, k.done = retroarch.CmdMute, "toggle mute", "Toggled mute in %s."
		}
		return press(ctx, ra, g, cabinet, k)
	})
}
