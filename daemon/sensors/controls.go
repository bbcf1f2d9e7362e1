package sensors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// controlTimeout bounds one control: the slowest tools wait for the game to quit (5 s) or for a
// screenshot file (3 s).
const controlTimeout = 30 * time.Second

// ToolCaller calls one MCP tool (*tools.Server).
type ToolCaller interface {
	Call(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error)
}

// Controls carry out Home Assistant's commands: the buttons and the notify entity through the
// MCP tools, the volume and mute through System, the power buttons through the power runner.
type Controls struct {
	Host  Host
	Clock clock.Clock
	Log   zerolog.Logger
	// Ctx ends when the daemon is asked to stop: a control still running then is cut short.
	Ctx context.Context
	// Tools is the tools server in force (nil: not ready).
	Tools func() ToolCaller
	// System carries out the volume and mute.
	System *System
	// Power is the power runner in force; DryRun says whether cabinet.mcp.dry_run is on.
	Power  func() *power.Runner
	DryRun func() bool
	// Presses is the power buttons' two-press rule.
	Presses *power.Presses
	// Household carries out a parent's commands (cabinet.ha.household); nil: not ready.
	Household HouseholdControl
	// Play carries out text.batocera_play and select.batocera_favorite (cabinet.ha.controls); nil:
	// not ready.
	Play PlayControl
}

// PlayControl launches games by name for Home Assistant (the daemon's, over the tools' one
// launcher). Each reports what became of the request itself (the text's state, the event).
type PlayControl interface {
	// Play carries out a request typed or said: a game's name, maybe "on <system>", maybe "switch to".
	Play(ctx context.Context, log zerolog.Logger, request string)
	// Favorite launches the favourite the select's option names (haentities.FavoriteNone: nothing).
	Favorite(ctx context.Context, log zerolog.Logger, option string)
}

// maxPlayPayload bounds a request from Home Assistant: the text entity sends at most 255
// characters.
const maxPlayPayload = 4 << 10

// onCommand carries out a Home Assistant control (cabinet.ha.controls):
// the command becomes a call of the matching MCP tool on the daemon's tools
// server, so the tool's safety rules (rate limits shared with MCP clients,
// refusals while no game runs, dry-run, read-only) apply unchanged.
// Anything that is not a well-formed control is ignored. Every command
// leaves one log line; the message text itself is never logged. The link
// runs commands one at a time, in order, and drops retained ones; dup is
// MQTT's DUP flag (a QoS 1 command the broker may be delivering again),
// heeded by the household buttons only.
func (c *Controls) OnCommand(topic string, payload []byte, dup bool) {
	log := c.Log.With().Str("topic", untrusted.Clean(topic, maxLoggedRunes)).Logger()
	settings := c.Host.Rules().Settings
	entity, _ := settings.CommandEntity(topic) // "" for another topic
	switch entity {
	case haentities.Volume, haentities.Mute:
		c.System.SetVolume(c.Ctx, log, entity, payload)
		return
	case haentities.RestartES, haentities.Reboot, haentities.Shutdown:
		c.onPower(log, entity, payload)
		return
	case haentities.Limits, haentities.DailyLimit, haentities.PausePlay, haentities.Player, haentities.UIMode, haentities.DenyTime,
		haentities.ExtraTime, haentities.ExtraTime30, haentities.ExtraTime60:
		c.onHousehold(log, settings, entity, payload, dup)
		return
	}
	if !settings.Controls {
		log.Warn().Msg("HA command ignored: cabinet.ha.controls is off")
		return
	}
	if entity == haentities.Play || entity == haentities.Favorite {
		c.onPlay(log, entity, payload)
		return
	}
	tool, args, err := controlCall(entity, payload)
	if err != nil {
		log.Warn().Str("reason", err.Error()).Int("bytes", len(payload)).Msg("HA command ignored")
		return
	}
	srv := c.Tools()
	if srv == nil {
		log.Warn().Msg("HA command ignored: the tools are not ready")
		return
	}
	ctx, cancel := context.WithTimeout(c.Ctx, controlTimeout)
	defer cancel()
	res, err := srv.Call(ctx, tool, args)
	if err != nil {
		log.Error().Err(err).Str("tool", tool).Msg("HA control failed")
		return
	}
	outcome, detail := summarize(res)
	if res.IsError {
		log.Warn().Str("tool", tool).Str("reason", detail).Msg("HA control refused")
		return
	}
	log.Info().Str("tool", tool).Str("outcome", outcome).Str("detail", detail).Msg("HA control")
}

// onPlay carries out a request to play: bounded, never logged whole (it is the household's text).
func (c *Controls) onPlay(log zerolog.Logger, entity string, payload []byte) {
	if c.Play == nil {
		log.Warn().Msg("HA command ignored: the tools are not ready")
		return
	}
	if len(payload) > maxPlayPayload {
		log.Warn().Int("bytes", len(payload)).Msg("HA request to play ignored: over 4 KiB")
		return
	}
	ctx, cancel := context.WithTimeout(c.Ctx, controlTimeout)
	defer cancel()
	if entity == haentities.Favorite {
		c.Play.Favorite(ctx, log, string(payload))
		return
	}
	c.Play.Play(ctx, log, string(payload))
}

// controlCall maps a control and Home Assistant's payload to its tool and
// arguments: buttons take exactly "PRESS", the notify entity one line of
// text that RetroArch and ES can show (shown over the game when one runs,
// else as an ES notification).
func controlCall(entity string, payload []byte) (tool string, args map[string]any, err error) {
	if entity == haentities.ShowMessage {
		if len(payload) > 4*retroarch.MaxMessageRunes {
			return "", nil, fmt.Errorf("the message is over %d bytes", 4*retroarch.MaxMessageRunes)
		}
		if err := retroarch.ValidateMessage(string(payload)); err != nil {
			return "", nil, err
		}
		return "batocera_show_message", map[string]any{"text": string(payload), "target": "auto"}, nil
	}
	if tool = buttonTool(entity); tool == "" {
		return "", nil, errors.New("not a control of this cabinet")
	}
	if string(payload) != haentities.PayloadPress {
		return "", nil, fmt.Errorf("a button payload must be %q", haentities.PayloadPress)
	}
	return tool, map[string]any{}, nil
}

// buttonTool is the tool behind each button; "" for anything else.
func buttonTool(entity string) string {
	switch entity {
	case haentities.QuitGame:
		return "batocera_quit_game"
	case haentities.PauseGame:
		return "batocera_pause_game" // no argument: toggles
	case haentities.SaveState:
		return "batocera_save_state"
	case haentities.LoadState:
		return "batocera_load_state"
	case haentities.Screenshot:
		return "batocera_take_screenshot"
	case haentities.ResetGame:
		return "batocera_reset_game"
	}
	return ""
}

// summarize reads a tool result's outcome and detail (or its error text),
// cleaned and capped for one log line.
func summarize(res *mcp.CallToolResult) (outcome, detail string) {
	if res.StructuredContent != nil && !res.IsError {
		var a struct {
			Outcome string `json:"outcome"`
			Detail  string `json:"detail"`
		}
		if b, err := json.Marshal(res.StructuredContent); err == nil && json.Unmarshal(b, &a) == nil && a.Outcome != "" {
			return untrusted.Clean(a.Outcome, 32), untrusted.Clean(a.Detail, maxLoggedRunes)
		}
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return "", untrusted.Clean(strings.Join(parts, " "), maxLoggedRunes)
}

// onPower carries out a power button (cabinet.ha.power). A first press
// only puts "Press again within 10 s to …" on screen (over the game when
// one runs); a second press of the same button within 10 s does what ES's
// Quit menu does, through power.Runner (refused while an install writes).
func (c *Controls) onPower(log zerolog.Logger, entity string, payload []byte) {
	if !c.Host.Rules().Settings.Power {
		log.Warn().Str("reason", "cabinet.ha.power is off").Msg("HA command ignored")
		return
	}
	if string(payload) != haentities.PayloadPress {
		log.Warn().Str("reason", fmt.Sprintf("a button payload must be %q", haentities.PayloadPress)).Int("bytes", len(payload)).Msg("HA command ignored")
		return
	}
	a, err := power.ParseAction(entity)
	if err != nil {
		log.Warn().Str("reason", err.Error()).Msg("HA command ignored")
		return
	}
	ctx, cancel := context.WithTimeout(c.Ctx, controlTimeout)
	defer cancel()
	if !c.Presses.Press(a, c.Clock.Now()) {
		c.showPrompt(ctx, log, c.Presses.Prompt(a))
		log.Info().Str("action", string(a)).Msg("HA power button: first press, waiting for a second one")
		return
	}
	runner := c.Power()
	if c.DryRun() {
		plan, err := runner.Plan(ctx, a)
		if err != nil {
			log.Warn().Str("action", string(a)).Str("reason", err.Error()).Msg("HA power refused")
			return
		}
		log.Info().Str("action", string(a)).Str("outcome", "dry_run").Str("detail", plan).Msg("HA power")
		return
	}
	res, err := runner.Do(ctx, a)
	if err != nil {
		log.Warn().Str("action", string(a)).Strs("sent", res.Sent).Str("reason", err.Error()).Msg("HA power refused")
		c.showPrompt(ctx, log, "Cabinet: "+untrusted.Clean(err.Error(), 120))
		return
	}
	log.Info().Str("action", string(a)).Strs("sent", res.Sent).Str("detail", res.Text).Msg("HA power")
}

// showPrompt puts a line on the cabinet's screen through the show message
// tool (RetroArch's message over a game, else an ES notification).
func (c *Controls) showPrompt(ctx context.Context, log zerolog.Logger, text string) {
	srv := c.Tools()
	if srv == nil {
		return
	}
	res, err := srv.Call(ctx, "batocera_show_message", map[string]any{"text": text, "target": "auto"})
	switch {
	case err != nil:
		log.Warn().Err(err).Msg("power prompt not shown")
	case res.IsError:
		_, detail := summarize(res)
		log.Warn().Str("reason", detail).Msg("power prompt not shown")
	}
}
