package requests

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Interval is how often the loop looks for requests due a check (each has its own backoff, from
// a minute to half an hour); library_request makes a new one due at once (Wake).
const Interval = time.Minute

// Loop follows the library requests on a clock: at start, every Interval and whenever Wake
// delivers, each due request is checked once; what moved is logged, and a failing server is said
// once until its failure changes.
type Loop struct {
	Clock clock.Clock
	Log   zerolog.Logger
	// Follower is the follower of this pass: the daemon's follows its configuration (a new
	// one when the clients are rebuilt).
	Follower func() *Follower
	// Wake, when set, starts a pass at once (a request recorded or changed).
	Wake <-chan struct{}
}

// Run follows until ctx ends.
func (l Loop) Run(ctx context.Context) error {
	tick, tc := l.Clock.NewTicker(Interval)
	defer tick.Stop()
	said := map[string]string{} // what was last said of each failure
	say := func(what string, err error, msg string) {
		if err == nil {
			delete(said, what)
			return
		}
		if text := err.Error(); said[what] != text {
			said[what] = text
			l.Log.Warn().Err(err).Msg(msg)
		}
	}
	for {
		pass, err := l.Follower().Follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		say("store", err, "library requests not followed: the store failed")
		for _, c := range pass.Changes {
			l.Log.Info().Str("request", c.ID).Str("game", untrusted.Clean(c.Game, 100)).Str("from", c.From).Str("to", c.To).
				Str("detail", c.Detail).Msg("library request moved")
		}
		if pass.Checked > 0 {
			say("romarr", pass.ROMarrErr, "ROMarr did not answer the follower of library requests; they are checked again later")
			say("romm", pass.RomMErr, "RomM did not answer the follower of library requests; they are checked again later")
			say("install", pass.InstallErr, "a requested game could not be installed; it is tried again")
			l.Log.Debug().Int("checked", pass.Checked).Int("moved", len(pass.Changes)).Msg("library requests followed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		case <-l.Wake:
		}
	}
}
