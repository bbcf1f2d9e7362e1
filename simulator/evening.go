package simulator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// Step is one moment of a scripted evening at the cabinet.
type Step struct {
	Say  string
	Do   func(ctx context.Context, c *Cabinet) error
	Wait time.Duration // after Do
}

// Evening is a short scripted evening: ES starts, two real sessions, a
// screensaver that shows games, a session too short to be logged, sleep and
// wake — every kind of state Home Assistant shows changes at least once.
// scale stretches the waits (1 = about 40 s).
func Evening(scale float64) []Step {
	d := func(s float64) time.Duration { return time.Duration(s * scale * float64(time.Second)) }
	return []Step{
		{Say: "EmulationStation starts", Do: func(_ context.Context, c *Cabinet) error { c.ES.Start(); return nil }, Wait: d(2)},
		{Say: "launching The Legend of Zelda on nes", Do: launch("nes", "The Legend of Zelda"), Wait: d(9)},
		{Say: "quitting the game (RetroArch QUIT)", Do: endGame, Wait: d(4)},
		{Say: "the screensaver starts (random video) and shows a game", Do: func(_ context.Context, c *Cabinet) error {
			if err := c.ES.StartScreensaver(fakees.ScreensaverVideo); err != nil {
				return err
			}
			g, ok := find(c.Library, "snes", "")
			if !ok {
				return fmt.Errorf("no snes game")
			}
			return c.ES.ScreensaverShow(g.System, g.ID)
		}, Wait: d(3)},
		{Say: "back to the menu (screensaver stops)", Do: func(_ context.Context, c *Cabinet) error { c.ES.StopScreensaver(); return nil }, Wait: d(2)},
		{Say: "a two-second game of Sonic (too short to be logged)", Do: launch("megadrive", "Sonic"), Wait: d(2)},
		{Say: "quitting it", Do: endGame, Wait: d(3)},
		{Say: "idle: the dim screensaver starts and ES sleeps", Do: func(_ context.Context, c *Cabinet) error {
			return c.ES.StartScreensaver(fakees.ScreensaverDim)
		}, Wait: d(4)},
		{Say: "someone picks up a controller (wake)", Do: func(_ context.Context, c *Cabinet) error { c.ES.Wake(); return nil }, Wait: d(2)},
		{Say: "launching Street Fighter II on mame", Do: launch("mame", "Street Fighter"), Wait: d(8)},
		// The last session is logged about 3 s after its end, whatever
		// the speed: the evening lasts until then.
		{Say: "quitting it", Do: endGame, Wait: max(d(5), 4*time.Second)},
	}
}

// RomMGame is a game of the household's RomM played at the cabinet: the
// fake RomM's ROM that is also on the cabinet, launched, played 8 s
// (scaled) and quit. It is empty when the simulator serves no RomM.
func (c *Cabinet) RomMGame(scale float64) []Step {
	if c.rommGame == "" {
		return nil
	}
	d := func(s float64) time.Duration { return time.Duration(s * scale * float64(time.Second)) }
	return []Step{
		{Say: fmt.Sprintf("launching %s on %s (a game RomM has too)", c.rommName, c.rommSys), Do: launch(c.rommSys, c.rommName), Wait: d(8)},
		{Say: "quitting it", Do: endGame, Wait: d(3)},
	}
}

// Browse is a player looking for a game and playing it: a quick scroll through the nes list
// (each pick handed over before the next, as a thumb on a stick does) that settles on Super
// Mario Bros., a few scrolls in the snes list that come back to it, the game, an achievement
// RetroAchievements unlocks during it (the hooks RetroArch runs), and the quit. scale stretches
// the waits (1 = about 14 s).
func Browse(scale float64) []Step {
	d := func(s float64) time.Duration { return time.Duration(s * scale * float64(time.Second)) }
	return []Step{
		{Say: "scrolling through the nes list; the cursor stops on Super Mario Bros.", Do: scroll("nes", "Super Mario Bros"), Wait: d(2)},
		{Say: "launching it", Do: launch("nes", "Super Mario Bros"), Wait: d(4)},
		{Say: "an achievement unlocks (RetroArch runs the achievements hooks)", Do: func(ctx context.Context, c *Cabinet) error {
			return c.Achievements.Unlock(ctx, 101, "Mushroom Kingdom", "Finish World 1-1")
		}, Wait: d(4)},
		{Say: "quitting it", Do: endGame, Wait: d(4)},
	}
}

// scroll selects every game of system in list order up to the first named like part, a few
// milliseconds apart, the way ES fires game-selected for each step of a scroll.
func scroll(system, part string) func(context.Context, *Cabinet) error {
	return func(ctx context.Context, c *Cabinet) error {
		stop, ok := find(c.Library, system, part)
		if !ok {
			return fmt.Errorf("no %s game named like %q", system, part)
		}
		for _, g := range c.Library.Games(system) {
			if err := c.ES.SelectGame(g.System, g.ID); err != nil {
				return err
			}
			if err := c.Events.Wait(ctx); err != nil {
				return err
			}
			if g.ID == stop.ID {
				return nil
			}
		}
		return nil
	}
}

// Play runs steps in order, saying each one, until done or ctx ends.
func (c *Cabinet) Play(ctx context.Context, steps []Step, say func(string)) error {
	for _, s := range steps {
		if say != nil {
			say(s.Say)
		}
		if err := s.Do(ctx, c); err != nil {
			return fmt.Errorf("%s: %w", s.Say, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.Wait):
		}
	}
	return nil
}

// launch starts the first game of system whose name contains part, the way
// a user would (through ES, which fires the hooks).
func launch(system, part string) func(context.Context, *Cabinet) error {
	return func(ctx context.Context, c *Cabinet) error {
		g, ok := find(c.Library, system, part)
		if !ok {
			return fmt.Errorf("no %s game named like %q", system, part)
		}
		if err := c.ES.Launch(g.System, g.ID); err != nil {
			return err
		}
		// The step's wait is the time played: it starts once the game runs,
		// whatever the launch takes (a fast evening would otherwise quit
		// a game that has not started yet).
		return waitUntil(ctx, "the game to start", func() bool { _, ok := c.ES.Running(); return ok })
	}
}

// WaitRunning waits (10 s at most) until ES runs a game: a launch started
// some other way than a Step (a tool call, an install's launch).
func (c *Cabinet) WaitRunning(ctx context.Context) error {
	return waitUntil(ctx, "the game to start", func() bool { _, ok := c.ES.Running(); return ok })
}

// EndGame ends the running game as its emulator exiting does, and waits
// until ES has seen it end.
func EndGame(ctx context.Context, c *Cabinet) error { return endGame(ctx, c) }

func endGame(ctx context.Context, c *Cabinet) error {
	c.ES.EndGame(0)
	return waitUntil(ctx, "the game to end", func() bool { _, ok := c.ES.Running(); return !ok && !c.ES.Launching() })
}

// waitUntil polls cond for at most 10 s.
func waitUntil(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited 10 s for %s", what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func find(lib *library.Library, system, part string) (library.Game, bool) {
	for _, g := range lib.Games(system) {
		if part == "" || containsFold(g.Name, part) {
			return g, true
		}
	}
	return library.Game{}, false
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
