package es

import (
	"context"
	"fmt"
	"net/http"
)

// Caps is GET /caps: ES's version line and capabilities.
func (c *Client) Caps(ctx context.Context) (Caps, error) {
	_, data, err := c.get(ctx, "/caps", c.cfg.MaxObjectBytes, 200)
	if err != nil {
		return Caps{}, err
	}
	caps, err := decodeCaps(data)
	if err != nil {
		return Caps{}, fmt.Errorf("GET /caps: %w", err)
	}
	return caps, nil
}

// Systems is GET /systems: every system, collections and groups included,
// in ES's order. GameSystems filters the real game systems.
func (c *Client) Systems(ctx context.Context) ([]System, error) {
	_, data, err := c.getList(ctx, "/systems")
	if err != nil {
		return nil, err
	}
	systems, err := decodeSystems(data)
	if err != nil {
		return nil, fmt.Errorf("GET /systems: %w", err)
	}
	return systems, nil
}

// System is GET /systems/{name}; ErrNotFound for an unknown name.
func (c *Client) System(ctx context.Context, name string) (System, error) {
	p := systemPath(name)
	if err := checkSystem("GET "+p, name); err != nil {
		return System{}, err
	}
	_, data, err := c.get(ctx, p, c.cfg.MaxObjectBytes, 200)
	if err != nil {
		return System{}, err
	}
	s, err := decodeSystem(data)
	if err != nil {
		return System{}, fmt.Errorf("GET %s: %w", p, err)
	}
	return s, nil
}

// Game is GET /systems/{system}/games/{id}, uncached: the game as ES has it
// now. ErrNotFound for an unknown system or id.
func (c *Client) Game(ctx context.Context, system, id string) (Game, error) {
	return c.game(ctx, system, id, "")
}

// GameLocal is Game with ?localpaths=true: the media fields are the files'
// paths on the cabinet, not API URLs.
func (c *Client) GameLocal(ctx context.Context, system, id string) (Game, error) {
	return c.game(ctx, system, id, "?localpaths=true")
}

func (c *Client) game(ctx context.Context, system, id, query string) (Game, error) {
	p := systemPath(system, "games", id)
	if err := checkSystem("GET "+p, system); err != nil {
		return Game{}, err
	}
	if err := checkID("GET "+p, id); err != nil {
		return Game{}, err
	}
	_, data, err := c.get(ctx, p+query, c.cfg.MaxObjectBytes, 200)
	if err != nil {
		return Game{}, err
	}
	g, err := decodeGame(data, c.cfg.Location)
	if err != nil {
		return Game{}, fmt.Errorf("GET %s: %w", p, err)
	}
	return g, nil
}

// RunningGame is GET /runningGame: the running game, or nil when ES
// answers its 201 "NO GAME RUNNING". ES sets the running game just after
// game-start fires and clears it just before game-end.
func (c *Client) RunningGame(ctx context.Context) (*Game, error) {
	status, data, err := c.get(ctx, "/runningGame", c.cfg.MaxObjectBytes, 200, 201)
	if err != nil {
		return nil, err
	}
	g, err := decodeRunningGame(status, data, c.cfg.Location)
	if err != nil {
		return nil, fmt.Errorf("GET /runningGame: %w", err)
	}
	return g, nil
}

// IsIdle is GET /isIdle: true (200) when no game, scraper, installer,
// hasher or updater runs; false (201) otherwise.
func (c *Client) IsIdle(ctx context.Context) (bool, error) {
	status, _, err := c.get(ctx, "/isIdle", c.cfg.MaxObjectBytes, 200, 201)
	if err != nil {
		return false, err
	}
	return status == 200, nil
}

// Launch is POST /launch with the path as raw text. ES answers 200 whether
// or not the path matches a game, and queues the launch behind a running
// game: use LaunchGame, which sends only paths from ES's own list and
// confirms the start.
func (c *Client) Launch(ctx context.Context, path string) error {
	return c.postText(ctx, "/launch", path)
}

// EmuKill is GET /emukill: ES kills the running emulator and answers once
// it is gone (a few seconds), or at once when nothing runs.
func (c *Client) EmuKill(ctx context.Context) error {
	_, _, err := c.expect(ctx, call{method: http.MethodGet, path: "/emukill", timeout: c.cfg.EmuKillTimeout,
		limit: c.cfg.MaxObjectBytes}, 200)
	return err
}

// Notify is POST /notify: a non-modal toast in ES. The text must not be
// empty (ES answers 400).
func (c *Client) Notify(ctx context.Context, text string) error {
	return c.postText(ctx, "/notify", text)
}

// MessageBox is POST /messagebox: a modal box with OK, shown by ES's UI
// thread (so only after a running game ends).
func (c *Client) MessageBox(ctx context.Context, text string) error {
	return c.postText(ctx, "/messagebox", text)
}

// ReloadGames is GET /reloadgames: ES rescans its gamelists (later, on its UI
// thread; after the running game if one runs). The game-list cache is
// dropped.
func (c *Client) ReloadGames(ctx context.Context) error {
	_, _, err := c.get(ctx, "/reloadgames", c.cfg.MaxObjectBytes, 200)
	c.Invalidate() // even on error: the request may have reached ES
	return err
}

func (c *Client) postText(ctx context.Context, path, text string) error {
	op := "POST " + path
	if text == "" {
		return fmt.Errorf("%s: %w: empty text (ES rejects an empty body)", op, ErrInvalidArgument)
	}
	if int64(len(text)) > c.cfg.MaxObjectBytes {
		return fmt.Errorf("%s: %w: text of %d bytes, limit %d", op, ErrInvalidArgument, len(text), c.cfg.MaxObjectBytes)
	}
	_, _, err := c.expect(ctx, call{method: http.MethodPost, path: path, body: text, limit: c.cfg.MaxObjectBytes}, 200)
	return err
}
