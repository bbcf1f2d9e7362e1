package tools

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/power"
)

type powerArgs struct {
	Action  string `json:"action"`
	Confirm bool   `json:"confirm"`
}

// powerTool is batocera_power, registered only with cabinet.mcp.power
// (Deps.Power) and never in read-only mode. Without confirm it only says
// what it would do; confirmed, it goes through the guard (dry-run, the
// power budget) to the runner, which refuses while an install writes,
// quits a running game first and then asks ES.
func powerTool(p Power, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	actions := make([]string, len(power.Actions))
	for i, a := range power.Actions {
		actions[i] = string(a)
	}
	t := define("batocera_power", "Restart or shut down the cabinet",
		"Do what EmulationStation's own Quit menu does: restart_es quits EmulationStation, which Batocera starts "+
			"again; reboot restarts the whole cabinet; shutdown powers it off. Without confirm: true it only says "+
			"what it would do and sends nothing: tell the user, and call again with confirm: true only once they "+
			"agree. A client that can ask the person (elicitation) is asked by Cabinet instead, whatever confirm says. A running game is quit first (unsaved progress is lost). Refused while a library install is "+
			"writing. Rate-limited.",
		destroys, false,
		withInput(
			req("action", str("restart_es: restart EmulationStation; reboot: restart the cabinet; shutdown: power "+
				"it off.", enum(actions...))),
			opt("confirm", boolean("true to do it; omitted or false only says what it would do.", defaultValue(false)))),
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, a powerArgs) (ActionResult, error) {
		return runPower(ctx, p, g, cabinet, a)
	})
}

func runPower(ctx context.Context, p Power, g *guard, cabinet string, a powerArgs) (ActionResult, error) {
	act, err := power.ParseAction(a.Action)
	if err != nil {
		return ActionResult{}, refuse("%s.", upperFirst(err.Error()))
	}
	in, err := p.Intend(ctx, act)
	if err != nil {
		return ActionResult{}, powerFailure(err, nil)
	}
	if !a.Confirm {
		return actionResult(cabinet, outcomeDryRun, in.Text+" Nothing was sent: ask the user, then call again with "+
			"confirm: true.", in.Sent, nil), nil
	}
	var res power.Result
	dry, err := g.run(ctx, action{what: act.Phrase(), budget: budgetPower, sent: in.Sent,
		send: func(ctx context.Context) error {
			var err error
			res, err = p.Do(ctx, act)
			return powerFailure(err, res.Sent)
		}})
	switch {
	case err != nil:
		return ActionResult{}, err
	case dry:
		return actionResult(cabinet, outcomeDryRun, in.Text, in.Sent, nil), nil
	}
	return actionResult(cabinet, outcomeDone, res.Text, res.Sent, nil), nil
}

// powerFailure turns a runner error into a refusal: each of them says
// what to do; sent is what went out before it failed.
func powerFailure(err error, sent []string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return err
	}
	msg := upperFirst(err.Error()) + "."
	if len(sent) > 0 && !errors.Is(err, power.ErrUnconfirmed) {
		msg += " Sent: " + strings.Join(sent, ", ") + "."
	}
	return refuse("%s", msg)
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
