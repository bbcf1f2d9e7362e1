package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Caps on text from ES and RetroArch, in runes.
const (
	maxName        = 200
	maxShort       = 100 // genre, developer, publisher, system full name
	maxPlayers     = 20
	maxPath        = 1024
	maxDescription = 1500
	maxIdent       = 64 // system names, ids, RetroArch system ids
)

// gameName is a game's display name, cleaned.
func gameName(g es.Game) string {
	if n := untrusted.Clean(g.Name, maxName); n != "" {
		return n
	}
	return "the game"
}

// systemName is a system name from ES, cleaned.
func systemName(s string) string {
	if n := untrusted.Clean(s, maxIdent); n != "" {
		return n
	}
	return "an unknown system"
}

// esFailure turns an ES error into a refusal that says what to do. ES being
// away is not a bug in Cabinet: the model must be able to tell the user.
func esFailure(what string, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, es.ErrUnavailable):
		return refuse("Could not %s: EmulationStation is not answering (it may be starting, restarting or stopped). "+
			"Wait a few seconds and retry; if it persists, run `cabinet doctor` on the cabinet.", what)
	case errors.Is(err, es.ErrForbidden):
		return refuse("Could not %s: %v", what, es.ErrForbidden)
	case errors.Is(err, es.ErrTimeout):
		return refuse("Could not %s: EmulationStation did not answer in time. It may be busy (loading, scraping); "+
			"retry in a moment.", what)
	}
	return refuse("Could not %s: %s", what, untrusted.Clean(err.Error(), maxErrorRunes))
}

// raLink is how the tools reach RetroArch: every call bounded by timeout,
// and failures explained with what es says runs.
type raLink struct {
	ra      RetroArch
	es      ES
	timeout time.Duration
}

// failure turns a RetroArch error into a refusal. A silent RetroArch and
// no game look the same on the wire, so ES is asked what runs.
func (l raLink) failure(ctx context.Context, what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if !errors.Is(err, retroarch.ErrNotRunning) {
		return refuse("Could not %s: %s", what, untrusted.Clean(err.Error(), maxErrorRunes))
	}
	addr := untrusted.Clean(l.ra.Addr(), maxIdent)
	running, esErr := l.es.RunningGame(ctx)
	switch {
	case esErr == nil && running == nil:
		return refuse("Could not %s: no game is running. Start one with batocera_launch_game.", what)
	case esErr == nil:
		return refuse("Could not %s: RetroArch is not answering on %s while %s (%s) runs. Either it is not a RetroArch "+
			"game (standalone emulators have no network commands), or network commands are off: add "+
			"global.retroarch.network_cmd_enable=true to /userdata/system/batocera.conf and relaunch the game.",
			what, addr, gameName(*running), systemName(running.System))
	}
	return refuse("Could not %s: RetroArch is not answering on %s. No game may be running, or network commands are "+
		"off: add global.retroarch.network_cmd_enable=true to /userdata/system/batocera.conf and relaunch the game.",
		what, addr)
}

// bounded limits one RetroArch call to the timeout: a silent RetroArch
// would otherwise hold it for the whole request deadline.
func (l raLink) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.timeout)
}

// status asks GET_STATUS within the RetroArch timeout.
func (l raLink) status(ctx context.Context) (retroarch.Status, error) {
	rctx, cancel := l.bounded(ctx)
	defer cancel()
	return l.ra.Status(rctx)
}

// send presses one hotkey within the RetroArch timeout.
func (l raLink) send(ctx context.Context, cmd retroarch.Command) error {
	rctx, cancel := l.bounded(ctx)
	defer cancel()
	if err := l.ra.Send(rctx, cmd); err != nil {
		return l.failure(ctx, "send "+cmd.String(), err)
	}
	return nil
}

// udp is the sent line of a RetroArch command.
func udp(cmd retroarch.Command) string { return "UDP " + cmd.String() }

// describeRA renders what RetroArch runs, for details: "stub (nes)".
func describeRA(st retroarch.Status) string {
	game := untrusted.Clean(st.Game, maxName)
	if game == "" {
		game = "the game"
	}
	if sys := untrusted.Clean(st.System, maxIdent); sys != "" {
		return fmt.Sprintf("%s (%s)", game, sys)
	}
	return game
}
