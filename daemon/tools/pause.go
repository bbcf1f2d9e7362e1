package tools

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
)

type pauseArgs struct {
	Paused *bool `json:"paused"`
}

type pauseResult struct {
	ActionResult
	State string `json:"state"`
}

func (r pauseResult) text() string { return r.ActionResult.text() + "\nRetroArch is " + r.State + "." }

func pauseGameTool(ra raLink, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_pause_game", "Pause or resume game",
		"Pause or resume the running RetroArch game: paused=true pauses, false resumes, omitted toggles. Reports "+
			"the resulting state as RetroArch tells it; unchanged when the game already is as asked. Needs a "+
			"RetroArch game with network commands on.",
		writes, false,
		withInput(opt("paused", boolean("true to pause, false to resume; omit to toggle."))),
		withOutput(actionProps(req("state", str("RetroArch's state afterwards (in a dry run: now).",
			enum("playing", "paused"))))...))
	return t, typed(func(ctx context.Context, a pauseArgs) (pauseResult, error) {
		return pauseGame(ctx, ra, g, cabinet, a)
	})
}

func pauseGame(ctx context.Context, ra raLink, g *guard, cabinet string, a pauseArgs) (pauseResult, error) {
	st, err := ra.playing(ctx, "pause or resume the game")
	if err != nil {
		return pauseResult{}, err
	}
	want := retroarch.StatePaused
	if (a.Paused == nil && st.State == retroarch.StatePaused) || (a.Paused != nil && !*a.Paused) {
		want = retroarch.StatePlaying
	}
	verb := "pause"
	if want == retroarch.StatePlaying {
		verb = "resume"
	}
	game := describeRA(st)
	if st.State == want {
		return pauseResult{actionResult(cabinet, outcomeUnchanged, game+" already is "+string(want)+".", nil, nil),
			string(st.State)}, nil
	}
	sent := []string{udp(retroarch.CmdPauseToggle)}
	var warnings []string
	dry, err := g.run(ctx, action{what: verb + " the game", budget: budgetControl, sent: sent,
		send: func(ctx context.Context) error { return ra.send(ctx, retroarch.CmdPauseToggle) }})
	switch {
	case err != nil:
		return pauseResult{}, err
	case dry:
		return pauseResult{actionResult(cabinet, outcomeDryRun, "Would "+verb+" "+game+".", sent, warnings),
			string(st.State)}, nil
	}
	now, ok := ra.awaitState(ctx, want)
	if !ok {
		warnings = append(warnings, "RetroArch still reports "+string(now)+"; check batocera_get_status.")
	}
	detail := "Paused " + game + "."
	if want == retroarch.StatePlaying {
		detail = "Resumed " + game + "."
	}
	return pauseResult{actionResult(cabinet, outcomeDone, detail, sent, warnings), string(now)}, nil
}

// awaitState reads GET_STATUS until it reports want, for at most
// pauseConfirm; it returns the last state read (want's opposite when
// RetroArch stopped answering).
func (l raLink) awaitState(ctx context.Context, want retroarch.State) (retroarch.State, bool) {
	deadline := time.Now().Add(pauseConfirm)
	last := retroarch.StatePlaying
	if want == retroarch.StatePlaying {
		last = retroarch.StatePaused
	}
	for {
		if st, err := l.status(ctx); err == nil && (st.State == retroarch.StatePlaying || st.State == retroarch.StatePaused) {
			last = st.State
			if last == want {
				return last, true
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return last, false
		}
		t := time.NewTimer(pollEvery / 2)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}
