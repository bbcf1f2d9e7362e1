package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// This file wires launching by name (issue 30) into the daemon: Home Assistant's
// text.batocera_play and select.batocera_favorite go to the tools' launcher (tools.Server.Play,
// PlayFavorite: the launch path of batocera_launch_game); what became of each request is
// published as the text's state and attributes and as event.batocera_play_request; the
// favourites are read from ES's lists and announced as the select's options. Every launch, from
// MCP or Home Assistant, is told to the tracker the moment ES confirms it (launched).

// favoritesEvery is how often the favourites are read again besides after each game and each
// reload of ES's lists (ES says nothing when a favourite is starred in its menu).
const favoritesEvery = 10 * time.Minute

// favorites are the select's options as last announced, and the games they launch.
type favorites struct {
	mu   sync.Mutex
	list []tools.Favorite
	wake chan struct{} // a game ended or ES reloaded: read them again
}

// launched tells the tracker of a launch ES just confirmed, by who asked: its start is stamped now,
// not when ES's hook or the watcher's next poll reports it (a game whose hook never runs, a stem
// with "(" and no space, would otherwise lose up to a poll of its time).
func (d *Daemon) launched(via string, g es.Game) {
	source := tracker.SourceMCP
	if via == tools.ViaHA {
		source = tracker.SourceHA
	}
	ev := d.opts.Now().Event(tracker.KindGameStart, source)
	ev.Path, ev.Name, ev.System = g.Path, g.Name, g.System
	if err := d.record(journal.NewKeyed(ev.Normalize())); err != nil {
		d.log.Error().Err(err).Msg("record the launch")
	}
	if d.watch != nil {
		d.watch.nudge()
	}
}

// haPlay is sensors.PlayControl over the daemon.
type haPlay struct{ d *Daemon }

func (p haPlay) Play(ctx context.Context, log zerolog.Logger, request string) {
	srv := p.d.mcpServer(false)
	if srv == nil {
		log.Warn().Msg("HA request to play ignored: the tools are not ready")
		return
	}
	p.publish(log, request, srv.Play(ctx, request, tools.ViaHA))
}

func (p haPlay) Favorite(ctx context.Context, log zerolog.Logger, option string) {
	d := p.d
	defer d.publish(haentities.FavoriteState(d.eng.currentRules().Settings, d.clock.Now())...) // back to "—"
	if option == haentities.FavoriteNone {
		return
	}
	d.favorites.mu.Lock()
	var f tools.Favorite
	for _, x := range d.favorites.list {
		if x.Option == option {
			f = x
		}
	}
	d.favorites.mu.Unlock()
	srv := d.mcpServer(false)
	switch {
	case srv == nil:
		log.Warn().Msg("HA favourite ignored: the tools are not ready")
	case f.ID == "":
		p.publish(log, option, haentities.PlayOutcome{Outcome: haentities.PlayNotFound,
			Reason: "That favourite is no longer in EmulationStation's lists."})
	default:
		p.publish(log, option, srv.PlayFavorite(ctx, f, tools.ViaHA))
	}
}

// publish reports what became of a request: the text's state and attributes, the event, a log line.
func (p haPlay) publish(log zerolog.Logger, request string, o haentities.PlayOutcome) {
	d := p.d
	now := d.clock.Now()
	o.Query, o.At, o.Seq = request, now, d.playSeq.Add(1)
	s := d.eng.currentRules().Settings
	d.publish(append(haentities.PlayStates(s, o, now), haentities.PlayRequestEvent(s, o, now)...)...)
	log.Info().Str("outcome", o.Outcome).Str("game", untrusted.Clean(o.Game, 120)).Int("candidates", len(o.Candidates)).
		Str("reason", untrusted.Clean(o.Reason, 300)).Msg("HA request to play")
}

// runFavorites reads ES's favourites for the select: at start, after every game and reload of
// ES's lists, and every favoritesEvery; a change is announced (the select's options are its
// discovery config).
func (d *Daemon) runFavorites(ctx context.Context) error {
	d.restorePlay()
	t, tc := d.clock.NewTimer(favoritesEvery)
	defer t.Stop()
	for {
		wait := favoritesEvery
		if err := d.refreshFavorites(ctx); err != nil {
			wait = 30 * time.Second
			d.log.Debug().Err(err).Msg("favourites not read; trying again")
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		case <-d.favorites.wake:
		}
	}
}

// restorePlay gives the play entities a state at start: the select "—", and the text "" (with
// attributes saying nothing was asked) unless a previous daemon published a request.
func (d *Daemon) restorePlay() {
	s := d.eng.currentRules().Settings
	if !s.Controls || !d.eng.currentRules().Publishing {
		return
	}
	msgs := haentities.FavoriteState(s, d.clock.Now())
	retained, err := d.eng.store().Retained()
	asked := false
	for _, m := range retained {
		asked = asked || m.Topic == s.StateTopic(haentities.Play)
	}
	if err == nil && !asked {
		msgs = append(msgs, haentities.PlayStates(s, haentities.PlayOutcome{}, d.clock.Now())...)
	}
	d.publish(msgs...)
}

func (d *Daemon) refreshFavorites(ctx context.Context) error {
	if !d.eng.currentRules().Settings.Controls {
		return nil
	}
	srv := d.mcpServer(false)
	if srv == nil {
		return nil
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	favs, err := srv.Favorites(fctx)
	cancel()
	if err != nil {
		return err
	}
	opts := make([]string, len(favs))
	for i, f := range favs {
		opts[i] = f.Option
	}
	d.favorites.mu.Lock()
	d.favorites.list = favs
	d.favorites.mu.Unlock()
	if d.eng.setFavorites(haentities.FavoriteOptions(opts)) {
		d.log.Debug().Int("favorites", len(favs)).Msg("favourites changed: announced again")
		if _, err := d.eng.apply(); err != nil {
			return err
		}
	}
	return nil
}

// favoritesChanged asks for the favourites to be read again (a game ended, ES reloaded).
func (d *Daemon) favoritesChanged() {
	select {
	case d.favorites.wake <- struct{}{}:
	default:
	}
}
