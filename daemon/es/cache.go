package es

import (
	"context"
	"fmt"
	"sync"
)

// cache keeps ES's game list per system until invalidated. Lists are large
// (every game of a system) and change only when ES reloads its gamelists or
// a game ends (play statistics), both of which the caller knows about.
type cache struct {
	mu    sync.Mutex
	gen   uint64 // bumped by every invalidation; a fetch started earlier is not kept
	lists map[string]*gameList
}

type gameList struct {
	games []Game
	byID  map[string]int
}

func (c *cache) get(system string) (*gameList, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists[system], c.gen
}

func (c *cache) put(system string, l *gameList, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return // invalidated while fetching: the list may already be stale
	}
	if c.lists == nil {
		c.lists = map[string]*gameList{}
	}
	c.lists[system] = l
}

func (c *cache) invalidate(systems ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if len(systems) == 0 {
		c.lists = nil
		return
	}
	for _, s := range systems {
		delete(c.lists, s)
	}
}

// Invalidate drops every cached game list; the next call fetches afresh.
// Call it when ES's data changed: after a reload, or a game's end (ES
// updates playcount, gametime and lastplayed then).
func (c *Client) Invalidate() { c.cache.invalidate() }

// InvalidateSystem drops one system's cached game list.
func (c *Client) InvalidateSystem(system string) { c.cache.invalidate(system) }

// list returns the cached list of system, fetching it when absent; fresh
// reports whether it was fetched by this call.
func (c *Client) list(ctx context.Context, system string) (l *gameList, fresh bool, err error) {
	op := "GET " + systemPath(system, "games")
	if err := checkSystem(op, system); err != nil {
		return nil, false, err
	}
	l, gen := c.cache.get(system)
	if l != nil {
		return l, false, nil
	}
	_, data, err := c.getList(ctx, systemPath(system, "games"))
	if err != nil {
		return nil, false, err
	}
	games, err := decodeGames(data, c.cfg.Location)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", op, err)
	}
	l = &gameList{games: games, byID: make(map[string]int, len(games))}
	for i, g := range games {
		if _, dup := l.byID[g.ID]; !dup {
			l.byID[g.ID] = i
		}
	}
	c.cache.put(system, l, gen)
	return l, true, nil
}

// ListGames fetches every game ES lists for a system now, without the cache:
// for a pass over every list (the search index, the names cache), which
// needs each list once and would otherwise keep every game's metadata in
// the cache, decoded twice over. The slice is the caller's.
func (c *Client) ListGames(ctx context.Context, system string) ([]Game, error) {
	op := "GET " + systemPath(system, "games")
	if err := checkSystem(op, system); err != nil {
		return nil, err
	}
	_, data, err := c.getList(ctx, systemPath(system, "games"))
	if err != nil {
		return nil, err
	}
	games, err := decodeGames(data, c.cfg.Location)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return games, nil
}

// Games returns every game ES lists for a system or collection, from the
// cache when present. The slice is the caller's.
func (c *Client) Games(ctx context.Context, system string) ([]Game, error) {
	l, _, err := c.list(ctx, system)
	if err != nil {
		return nil, err
	}
	return append([]Game(nil), l.games...), nil
}

// LookupGame finds a game by id in ES's own list of the system (cached; a
// miss in a cached list refetches it once, in case ES reloaded).
func (c *Client) LookupGame(ctx context.Context, system, id string) (Game, error) {
	op := "lookup game"
	if err := checkID(op, id); err != nil {
		return Game{}, err
	}
	l, fresh, err := c.list(ctx, system)
	if err != nil {
		return Game{}, err
	}
	if i, ok := l.byID[id]; ok {
		return l.games[i], nil
	}
	if !fresh {
		c.cache.invalidate(system)
		if l, _, err = c.list(ctx, system); err != nil {
			return Game{}, err
		}
		if i, ok := l.byID[id]; ok {
			return l.games[i], nil
		}
	}
	return Game{}, fmt.Errorf("%s: %w: no game %q in system %q (list the system's games for valid ids)", op, ErrNotFound, id, system)
}
