package tools

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/batocera-cabinet/cabinet/daemon/es"
)

// guard is the one place every action goes through: the game allow-list,
// the refusals while a game runs or a launch is in flight, the rate limits
// and dry-run. Read-only mode is structural instead (write tools are never
// registered, and a tool filter refuses them at call time; see registry.go).
type guard struct {
	dryRun bool
	clock  Clock

	mu      sync.Mutex
	buckets [budgetCount]*tokens

	launching atomic.Bool
}

func newGuard(dryRun bool, limits Limits, clock Clock) *guard {
	g := &guard{dryRun: dryRun, clock: clock}
	now := clock.Now()
	for b := budgetNone + 1; b < budgetCount; b++ {
		g.buckets[b] = newTokens(limits.bucket(b), now)
	}
	return g
}

// action is one change a tool is about to make, fully decided: checks done,
// and sent says exactly what will go on the wire.
type action struct {
	what   string // for the rate-limit refusal: "refusing to <what>"
	budget budget
	sent   []string
	send   func(ctx context.Context) error
}

// run carries out a: in a dry run it sends nothing and spends no token
// (dryRun reports true); otherwise it takes a token, refusing with the wait
// when there is none, and sends. Callers return "unchanged" before calling
// run when there is nothing to do, so those calls spend nothing either.
func (g *guard) run(ctx context.Context, a action) (dryRun bool, err error) {
	if g.dryRun {
		return true, nil
	}
	if a.budget != budgetNone {
		g.mu.Lock()
		w := g.buckets[a.budget].take(g.clock.Now())
		g.mu.Unlock()
		if w > 0 {
			return false, refuse("Rate limit: refusing to %s (try again in %ds). This guards against runaway loops; "+
				"if it's deliberate, wait and retry.", a.what, seconds(w))
		}
	}
	return false, a.send(ctx)
}

// enforce carries out a for the household's play-time rules (the daemon's
// enforcement, never an MCP client): no rate-limit token is taken or
// refused and dry run does not apply, since both guard against what
// clients do and the rules must be able to end a game regardless.
func (g *guard) enforce(ctx context.Context, a action) error { return a.send(ctx) }

// beginLaunch marks a launch in flight, refusing a second one: ES shows a
// launched game in /runningGame only a second or so after POST /launch, so
// the running-game check alone would let two launches through.
func (g *guard) beginLaunch() (end func(), err error) {
	if !g.launching.CompareAndSwap(false, true) {
		return nil, refuse("Another launch is still in progress; wait a few seconds and check batocera_get_status.")
	}
	return func() { g.launching.Store(false) }, nil
}

// launchable applies the allow-list and the one-game rule: the game must be
// in ES's own list of that system (its path is what will be sent; callers
// never supply one), and no game may be running.
func launchable(ctx context.Context, e ES, system, id string) (es.Game, error) {
	g, err := e.LookupGame(ctx, system, id)
	switch {
	case errors.Is(err, es.ErrNotFound), errors.Is(err, es.ErrInvalidArgument):
		return es.Game{}, refuse("No game with id %q in system %q. Find games and their ids with batocera_find_games "+
			"(system names come from batocera_list_systems).", id, system)
	case err != nil:
		return es.Game{}, esFailure("look up the game", err)
	case g.Path == "":
		return es.Game{}, refuse("EmulationStation lists game %q without a path, so it cannot be launched; "+
			"reload the game lists with batocera_reload_games.", id)
	}
	running, err := e.RunningGame(ctx)
	if err != nil {
		return es.Game{}, esFailure("check the running game", err)
	}
	if running != nil {
		return es.Game{}, refuse("%s is already running on %s; quit it first with batocera_quit_game "+
			"(EmulationStation would start the new game only after that one ends).",
			gameName(*running), systemName(running.System))
	}
	return g, nil
}
