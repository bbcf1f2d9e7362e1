package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
)

// installsInterval is how often the daemon looks for installs whose ES
// side is unfinished (besides right after a game ends).
const installsInterval = time.Minute

// keepInstalls looks after the library installs between tool calls: at
// start it removes what unfinished installs left in the ROM folders (never
// listed by ES); when a game ends it has ES list the games installed while
// it ran, with their metadata and cover.
func (d *Daemon) keepInstalls(ctx context.Context) error {
	if in := d.links().Installer; in != nil {
		switch n, err := in.CleanLeftovers(); {
		case errors.Is(err, install.ErrBusy):
		case err != nil:
			d.log.Warn().Err(err).Msg("unfinished installs not cleaned up")
		case n > 0:
			d.log.Info().Int("removed", n).Msg("removed what unfinished installs left")
		}
	}
	tick, tc := d.clock.NewTicker(installsInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		case <-d.eng.ended:
		}
		if d.eng.snapshot().Playing {
			continue
		}
		in := d.links().Installer
		if in == nil {
			continue
		}
		n, err := in.FinishPending(ctx)
		switch {
		case errors.Is(err, install.ErrBusy), ctx.Err() != nil:
		case err != nil:
			d.log.Warn().Err(err).Msg("installed games not yet listed by EmulationStation")
		case n > 0:
			d.log.Info().Int("games", n).Msg("EmulationStation lists the games installed during the game")
			d.invalidateGames()
		}
	}
}
