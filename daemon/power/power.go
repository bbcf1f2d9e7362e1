// Package power carries out what EmulationStation's own Quit menu does —
// restart ES, reboot the cabinet, shut it down — for the batocera_power
// tool and the Home Assistant power buttons. It owns the order of things
// (no action while a library install writes; a running game is quit first,
// because ES takes its quit only after the game ends) and the "press again
// within 10 s" rule of the buttons (Presses). It goes only through ES's
// routes (es.PowerClient): it never runs poweroff or reboot itself, so a
// cabinet ES does not answer is the user's to switch off at the cabinet.
package power

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Action is one entry of ES's Quit menu.
type Action string

// The actions, by their wire names (batocera_power's action argument).
const (
	RestartES Action = "restart_es" // QUIT EMULATIONSTATION: Batocera starts ES again (GET /quit)
	Reboot    Action = "reboot"     // RESTART SYSTEM (GET /restart)
	Shutdown  Action = "shutdown"   // SHUTDOWN SYSTEM (GET /shutdown)
)

// Actions are every action, in the order of ES's menu.
var Actions = []Action{RestartES, Reboot, Shutdown}

// ParseAction returns the action named s (restart_es, reboot, shutdown).
func ParseAction(s string) (Action, error) {
	for _, a := range Actions {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("power action %q: want restart_es, reboot or shutdown", untrusted.Clean(s, 32))
}

// Route is the ES request of a: "GET /shutdown".
func (a Action) Route() string {
	switch a {
	case RestartES:
		return "GET /quit"
	case Reboot:
		return "GET /restart"
	case Shutdown:
		return "GET /shutdown"
	}
	return ""
}

// Phrase is what a does, to follow "to": "shut down the cabinet".
func (a Action) Phrase() string {
	switch a {
	case RestartES:
		return "restart EmulationStation"
	case Reboot:
		return "restart the cabinet"
	case Shutdown:
		return "shut down the cabinet"
	}
	return "do " + untrusted.Clean(string(a), 32)
}

// Errors Run and Plan answer that callers tell apart. Each says what to do.
var (
	// ErrESDown: ES did not take the connection, so nothing was sent.
	ErrESDown = errors.New("EmulationStation is not answering, so nothing was sent: use the Quit menu on the " +
		"cabinet itself (or its power button)")
	// ErrGameStillRunning: the game did not quit in time, so the power
	// request was not sent.
	ErrGameStillRunning = errors.New("the running game did not quit, so nothing else was sent: quit it on the " +
		"cabinet, then try again")
	// ErrNotOffered: this ES has no such route (GET /shutdown is Batocera's
	// own patch), so nothing happened.
	ErrNotOffered = errors.New("this EmulationStation does not offer that action over its API, so nothing happened: " +
		"use the Quit menu on the cabinet itself")
	// ErrUnconfirmed: the request went out but ES did not answer; it was
	// most likely quitting.
	ErrUnconfirmed = errors.New("EmulationStation did not confirm it: it is probably quitting; look at the cabinet " +
		"before trying again, and use its Quit menu if EmulationStation is still there")
)

// DefaultQuitWait bounds the wait for a quit game to leave /runningGame.
const DefaultQuitWait = 5 * time.Second

// pollEvery is how often the quit of a game is checked.
const pollEvery = 100 * time.Millisecond

// Runner carries out power actions through ES. Only it holds the power
// routes; a zero QuitWait is DefaultQuitWait and a nil Clock real time.
type Runner struct {
	// ES is what the runner reads and quits the running game with
	// (*es.Client).
	ES interface {
		RunningGame(ctx context.Context) (*es.Game, error)
		EmuKill(ctx context.Context) error
	}
	// Routes are ES's quit routes (*es.PowerClient).
	Routes interface {
		RestartES(ctx context.Context) error
		Reboot(ctx context.Context) error
		Shutdown(ctx context.Context) error
	}
	// Busy, when it returns an error, refuses every action with it (a
	// library install is writing, see install.Writing); nil: never busy.
	Busy func() error
	// QuitWait bounds the wait for a quit game to leave /runningGame.
	QuitWait time.Duration
	// Clock times that wait; nil: real time.
	Clock clock.Clock
}

// Intent is what Run would do now.
type Intent struct {
	Action Action
	Game   *es.Game // the running game it would quit first; nil: none
	Sent   []string // the requests, in order: "GET /emukill", "GET /shutdown"
	Text   string   // the one sentence Plan answers
}

// Result is what Run did.
type Result struct {
	Action Action
	Quit   *es.Game // the game it quit first; nil: none ran
	Sent   []string // the requests sent, in order (also when Run failed)
	Text   string   // one sentence
}

// Plan says in one sentence what Run(ctx, a) would do now, naming the
// running game it would quit first. It sends nothing.
func (r *Runner) Plan(ctx context.Context, a Action) (string, error) {
	in, err := r.Intend(ctx, a)
	return in.Text, err
}

// Intend is Plan with the running game and the requests.
func (r *Runner) Intend(ctx context.Context, a Action) (Intent, error) {
	game, err := r.check(ctx, a)
	if err != nil {
		return Intent{Action: a}, err
	}
	in := Intent{Action: a, Game: game, Sent: []string{a.Route()}}
	in.Text = "Would " + a.Phrase() + ", as the Quit menu of EmulationStation does."
	if game != nil {
		in.Sent = []string{"GET /emukill", a.Route()}
		in.Text = fmt.Sprintf("Would quit %s first (unsaved progress is lost), then %s, as the Quit menu of "+
			"EmulationStation does.", gameName(game), a.Phrase())
	}
	return in, nil
}

// Run carries out a: refused while Busy; a running game is quit first
// (GET /emukill, then up to QuitWait for /runningGame to clear; else
// ErrGameStillRunning and nothing more is sent), then ES's route. It
// answers one sentence of what it did.
func (r *Runner) Run(ctx context.Context, a Action) (string, error) {
	res, err := r.Do(ctx, a)
	return res.Text, err
}

// Do is Run with what it quit and sent.
func (r *Runner) Do(ctx context.Context, a Action) (Result, error) {
	res := Result{Action: a}
	game, err := r.check(ctx, a)
	if err != nil {
		return res, err
	}
	if game != nil {
		res.Sent = append(res.Sent, "GET /emukill")
		if err := r.ES.EmuKill(ctx); err != nil {
			return res, esError("cannot quit "+gameName(game)+" to "+a.Phrase(), err)
		}
		if err := r.awaitQuit(ctx); err != nil {
			return res, fmt.Errorf("cannot %s: %s %w", a.Phrase(), gameName(game), err)
		}
		res.Quit = game
		if err := r.busy(a); err != nil { // an install may have started meanwhile
			return res, err
		}
	}
	res.Sent = append(res.Sent, a.Route())
	if err := r.route(ctx, a); errors.Is(err, es.ErrUnconfirmed) {
		return res, fmt.Errorf("sent %s to %s, but %w", a.Route(), a.Phrase(), ErrUnconfirmed)
	} else if err != nil {
		return res, esError("cannot "+a.Phrase(), err)
	}
	res.Text = "Asked EmulationStation to " + a.Phrase() + ", as its Quit menu does" + after(a) + "."
	if game != nil {
		res.Text = fmt.Sprintf("Quit %s, then asked EmulationStation to %s, as its Quit menu does%s.",
			gameName(game), a.Phrase(), after(a))
	}
	return res, nil
}

// after is what ES does once asked, for Run's sentence.
func after(a Action) string {
	switch a {
	case RestartES:
		return ": it saves its game lists, quits and starts again"
	case Reboot:
		return ": it saves its game lists, then the cabinet reboots"
	}
	return ": it saves its game lists, then the cabinet powers off"
}

// check refuses a while Busy, and reads the running game.
func (r *Runner) check(ctx context.Context, a Action) (*es.Game, error) {
	if a.Route() == "" {
		_, err := ParseAction(string(a))
		return nil, err
	}
	if err := r.busy(a); err != nil {
		return nil, err
	}
	game, err := r.ES.RunningGame(ctx)
	if err != nil {
		return nil, esError("cannot "+a.Phrase(), err)
	}
	return game, nil
}

// busy is Busy's refusal of a, nil when not busy.
func (r *Runner) busy(a Action) error {
	if r.Busy == nil {
		return nil
	}
	if err := r.Busy(); err != nil {
		return fmt.Errorf("refusing to %s: %w", a.Phrase(), err)
	}
	return nil
}

func (r *Runner) route(ctx context.Context, a Action) error {
	switch a {
	case RestartES:
		return r.Routes.RestartES(ctx)
	case Reboot:
		return r.Routes.Reboot(ctx)
	}
	return r.Routes.Shutdown(ctx)
}

// awaitQuit polls /runningGame until no game runs, for at most QuitWait.
func (r *Runner) awaitQuit(ctx context.Context) error {
	wait := r.QuitWait
	if wait <= 0 {
		wait = DefaultQuitWait
	}
	clk := clock.Or(r.Clock)
	timer, expired := clk.NewTimer(wait)
	defer timer.Stop()
	tick, ticks := clk.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		g, err := r.ES.RunningGame(ctx)
		if err == nil && g == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-expired:
			return fmt.Errorf("is still running %v after GET /emukill: %w", wait, ErrGameStillRunning)
		case <-ticks:
		}
	}
}

// esError explains an ES failure after what ("cannot shut down the
// cabinet"): ES down is ErrESDown (nothing was sent), a missing route
// ErrNotOffered.
func esError(what string, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, es.ErrTimeout):
		return err
	case errors.Is(err, es.ErrUnavailable):
		return fmt.Errorf("%s: %w", what, ErrESDown)
	case errors.Is(err, es.ErrNotFound):
		return fmt.Errorf("%s: %w", what, ErrNotOffered)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// gameName is "Galaga (mame)", cleaned: names come from game lists.
func gameName(g *es.Game) string {
	name := untrusted.Clean(g.Name, 200)
	if name == "" {
		name = "the game"
	}
	if sys := untrusted.Clean(g.System, 64); sys != "" {
		return name + " (" + sys + ")"
	}
	return name
}
