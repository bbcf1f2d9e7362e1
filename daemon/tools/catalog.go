package tools

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/oncabinet"
	"github.com/batocera-cabinet/cabinet/daemon/tools/search"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// fetchWorkers is how many game lists are fetched at once: ES's HTTP
// server has two base workers, and more lists at once hold more memory.
const fetchWorkers = 2

// catalog owns the search index: built from ES's game lists of every real
// game system on first use, kept until invalidated or too old.
type catalog struct {
	es     ES
	clock  Clock
	maxAge time.Duration
	// cabOpts builds the on-cabinet index (library_search's on_cabinet)
	// from the same game lists: one fetch of ES's lists serves both.
	cabOpts oncabinet.Options

	mu       sync.Mutex
	ix       *search.Index
	cab      *oncabinet.Index
	systems  []string // real game systems, in ES's order
	full     []string // their full names, in the same order
	built    time.Time
	gen      uint64        // bumped by invalidate: a build started earlier is not kept
	building chan struct{} // closed when the running build ends; nil when none runs
}

func newCatalog(e ES, clock Clock, maxAge time.Duration, cabOpts oncabinet.Options) *catalog {
	return &catalog{es: e, clock: clock, maxAge: maxAge, cabOpts: cabOpts}
}

func (c *catalog) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.ix, c.cab, c.systems, c.full = nil, nil, nil, nil
}

// fullNames are the full names of the systems index listed (by folder), from the same build.
func (c *catalog) fullNames(systems []string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]string, len(systems))
	if len(c.full) == len(c.systems) {
		for i, s := range c.systems {
			m[s] = c.full[i]
		}
	}
	return m
}

// onCabinet returns the on-cabinet index of the current game lists,
// building both indexes when needed.
func (c *catalog) onCabinet(ctx context.Context) (*oncabinet.Index, error) {
	for {
		if _, _, err := c.index(ctx); err != nil {
			return nil, err
		}
		c.mu.Lock()
		cab := c.cab
		c.mu.Unlock()
		if cab != nil {
			return cab, nil
		}
		// Invalidated between the two looks: build again.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// index returns the current index, building it (once, however many callers
// wait) when there is none or it is too old.
func (c *catalog) index(ctx context.Context) (*search.Index, []string, error) {
	for {
		c.mu.Lock()
		if c.ix != nil && c.clock.Now().Sub(c.built) < c.maxAge {
			ix, sys := c.ix, c.systems
			c.mu.Unlock()
			return ix, sys, nil
		}
		if wait := c.building; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue // built, or failed: look again
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.building, c.ix = done, nil
		gen := c.gen
		c.mu.Unlock()

		ix, cab, sys, full, err := c.build(ctx)
		c.mu.Lock()
		c.building = nil
		if err == nil && gen == c.gen {
			c.ix, c.cab, c.systems, c.full, c.built = ix, cab, sys, full, c.clock.Now()
		}
		c.mu.Unlock()
		close(done)
		if err != nil {
			return nil, nil, err
		}
		return ix, sys, nil // an index invalidated meanwhile still answers this call
	}
}

func (c *catalog) build(ctx context.Context) (ix *search.Index, cab *oncabinet.Index, names, full []string, err error) {
	all, err := c.es.Systems(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	systems := es.GameSystems(all)
	names, full = make([]string, 0, len(systems)), make([]string, 0, len(systems))
	total := 0
	for _, s := range systems {
		names = append(names, untrusted.Clean(s.Name, maxIdent))
		full = append(full, untrusted.Clean(s.FullName, maxIdent))
		total += s.TotalGames
	}
	b := search.NewBuilder(total)
	games := &gameList{games: make([]oncabinet.Game, 0, total)}
	jobs := make(chan string)
	errs := make(chan error, fetchWorkers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range fetchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sys := range jobs {
				if err := c.add(ctx, b, games, sys); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for _, s := range systems {
		select {
		case jobs <- s.Name:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, nil, nil, nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, nil, err
	}
	ix = b.Index()
	cab = oncabinet.Build(games.games, c.cabOpts)
	games.games = nil
	// Decoding ES's lists took several times the index's size, briefly;
	// give that back to the cabinet now rather than keep it mapped.
	debug.FreeOSMemory()
	return ix, cab, names, full, nil
}

// gameList collects the games of every system for the on-cabinet index;
// the fetch workers add to it at once.
type gameList struct {
	mu    sync.Mutex
	games []oncabinet.Game
}

// add indexes one system's games, fetched without the ES client's cache:
// the index keeps what search needs in a fraction of the space.
func (c *catalog) add(ctx context.Context, b *search.Builder, gl *gameList, system string) error {
	games, err := c.es.ListGames(ctx, system)
	if errors.Is(err, es.ErrNotFound) {
		return nil // the system went away since /systems
	}
	if err != nil {
		return err
	}
	sys := untrusted.Clean(system, maxIdent)
	gl.mu.Lock()
	for _, g := range games {
		// Hidden games are still on the cabinet: only search skips them,
		// as ES's own lists do.
		gl.games = append(gl.games, oncabinet.Game{System: sys, ID: g.ID, Path: g.Path})
	}
	gl.mu.Unlock()
	for _, g := range games {
		if g.Hidden {
			continue // ES hides them in its own lists too
		}
		b.Add(docOf(g, sys))
	}
	return nil
}

func docOf(g es.Game, system string) search.Doc {
	d := search.Doc{System: system, ID: untrusted.Clean(g.ID, maxIdent), Name: untrusted.Clean(g.Name, maxName),
		Genre: untrusted.Clean(g.Genre, maxShort), Players: untrusted.Clean(g.Players, maxPlayers),
		Favorite: g.Favorite, PlayCount: g.PlayCount, PlayTime: g.GameTime, LastPlayed: g.LastPlayed}
	if !g.ReleaseDate.IsZero() {
		d.Year = g.ReleaseDate.Year()
	}
	return d
}
