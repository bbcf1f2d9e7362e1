package es

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// LaunchGame starts a game by ES id and confirms it started.
//
// The path sent is the one in ES's own list for that id (an allow-list: a
// caller never supplies a path). It refuses with ErrGameRunning while a game
// runs, because ES would queue the launch until that game ends, and with
// ErrLaunchInProgress while another LaunchGame of this client is under way.
// After POST /launch it polls /runningGame until that game runs, for at most
// LaunchTimeout; ErrLaunchNotConfirmed means the launch was sent but not
// seen. It returns the running game as ES reports it.
func (c *Client) LaunchGame(ctx context.Context, system, id string) (Game, error) {
	op := "launch " + url.PathEscape(system) + "/" + url.PathEscape(id) // caller input, escaped for messages
	if !c.launching.CompareAndSwap(false, true) {
		return Game{}, fmt.Errorf("%s: %w; wait for it to finish", op, ErrLaunchInProgress)
	}
	defer c.launching.Store(false)

	g, err := c.LookupGame(ctx, system, id)
	if err != nil {
		return Game{}, fmt.Errorf("%s: %w", op, err)
	}
	if g.Path == "" {
		return Game{}, fmt.Errorf("%s: %w: ES lists the game without a path", op, ErrMalformed)
	}
	running, err := c.RunningGame(ctx)
	if err != nil {
		return Game{}, fmt.Errorf("%s: %w", op, err)
	}
	if running != nil {
		return Game{}, fmt.Errorf("%s: %w (game %s on %s); quit it first", op, ErrGameRunning, ident(running.ID), ident(running.System))
	}
	if err := c.Launch(ctx, g.Path); err != nil {
		return Game{}, fmt.Errorf("%s: %w", op, err)
	}
	started, err := c.awaitRunning(ctx, g)
	if err != nil {
		return Game{}, fmt.Errorf("%s: %w", op, err)
	}
	return started, nil
}

// awaitRunning polls /runningGame until g runs or LaunchTimeout passes.
func (c *Client) awaitRunning(parent context.Context, g Game) (Game, error) {
	ctx, cancel := context.WithTimeout(parent, c.cfg.LaunchTimeout)
	defer cancel()
	tick := time.NewTicker(c.cfg.PollInterval)
	defer tick.Stop()
	var last error
	for {
		running, err := c.RunningGame(ctx)
		switch {
		case err != nil:
			last = err // ES may be busy starting the emulator; keep trying
		case running != nil && running.ID == g.ID:
			return *running, nil
		case running != nil:
			last = fmt.Errorf("another game is running: %s on %s", ident(running.ID), ident(running.System))
		default:
			last = errors.New("/runningGame still says no game is running")
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return Game{}, fmt.Errorf("%w: stopped waiting for game %s: %w", ErrLaunchNotConfirmed, ident(g.ID), parent.Err())
			}
			return Game{}, fmt.Errorf("%w: game %s did not start within %v (ES may show a launch dialog, or the emulator failed to start); last: %w",
				ErrLaunchNotConfirmed, ident(g.ID), c.cfg.LaunchTimeout, last)
		case <-tick.C:
		}
	}
}

// ident renders an id or system name from ES for an error message. Names
// and other free text from ES are untrusted and never go into errors; ids
// and system names do only when they are plain identifiers.
func ident(s string) string {
	if s == "" || len(s) > 64 {
		return "?"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "?"
		}
	}
	return s
}
