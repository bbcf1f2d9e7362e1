package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/daemon/selection"
	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// This file wires the selection feed (package selection) into the daemon: ES's game-selected
// and system-selected (from the inbox, or from a hook over the socket), the screensaver's runs
// and the running game (from every applied event) go in; each selection that settles comes out
// as sensor.batocera_selected_game, sensor.batocera_selected_system, the JSON of
// batocera/<id>/selected and image.batocera_selected_marquee, and to the subscribers of
// SubscribeSelected (the marquee page's server-sent events).

// Bounds of the selection's look-ups.
const (
	// selectedLookup bounds ES's answer about a settled game (its media paths).
	selectedLookup = 2 * time.Second
	// selectedPictures is how many games' pictures are kept, for selectedPictureAge: scrolling
	// back and forth asks ES and encodes once per game.
	selectedPictures   = 8
	selectedPictureAge = 10 * time.Minute
	// selectedLogRunes caps names and paths in log lines.
	selectedLogRunes = 300
)

// selectedFeed is the daemon's selection feed.
type selectedFeed struct {
	d    *Daemon
	feed *selection.Feed
	hub  selection.Hub

	mu       sync.Mutex
	pictures []selectedPicture // newest last
	restored bool
}

// selectedPicture is what ES said of a game and the picture read for it.
type selectedPicture struct {
	system, rom string
	at          time.Time
	game        es.Game // as ES lists it, with local media paths
	known       bool    // ES knows the game (a folder or a path sh mangled: 404)
	file        string  // the picture shown; "" none
	jpeg        []byte
}

func newSelectedFeed(d *Daemon) *selectedFeed {
	s := &selectedFeed{d: d}
	s.feed = &selection.Feed{Clock: d.clock, Config: func() selection.Config { return d.config().Selection }, Show: s.show}
	return s
}

// SubscribeSelected returns a channel that gets every selection the feed shows from now on
// (at once the one shown last, if any), the newest only when the reader falls behind, and
// cancel, which ends the subscription and closes the channel. The publisher never waits for a
// subscriber. The channel is closed when the daemon stops, and at once beyond
// selection.MaxSubscribers subscribers: read until it is closed.
func (d *Daemon) SubscribeSelected() (<-chan selection.Selection, func()) {
	return d.selected.hub.Subscribe()
}

// Selected is the selection the feed showed last; ok is false before the first (or the one a
// previous daemon published, restored at start).
func (d *Daemon) Selected() (selection.Selection, bool) { return d.selected.hub.Latest() }

// take is told of an ES event as soon as the daemon has it (from the inbox, or a hook over
// the socket), before it is applied: the selections, and the screensaver's start and stop, which
// must be known before the screensaver's own picks settle — the engine's apply of the start may
// come later than that on a busy disk.
func (s *selectedFeed) take(ev tracker.Event) {
	switch {
	case ev.Kind == tracker.KindGameSelected && ev.Path != "":
	case ev.Kind == tracker.KindSystemSelected && ev.System != "":
		s.feed.ScreensaverStop(ev.Boot) // the carousel: the player is back (the screensaver never moves it)
	default:
		s.screensaver(ev)
		return
	}
	s.feed.Select(selection.Pick{System: ev.System, ROM: ev.Path, Name: ev.Name, Boot: ev.Boot, At: ev.At})
}

// screensaver tells the feed of the screensaver's runs (those that show games) and of whatever
// says the player is back. An event told twice (taken, then applied) changes nothing.
func (s *selectedFeed) screensaver(ev tracker.Event) {
	switch ev.Kind {
	case tracker.KindScreensaverStart:
		switch ev.Arg {
		case "dim", "black", "suspend": // they show no game, so fire no game-selected
		default:
			s.feed.ScreensaverStart(ev.Boot)
		}
	case tracker.KindScreensaverStop, tracker.KindWake, tracker.KindStart, tracker.KindGameStart, tracker.KindGameEnd:
		s.feed.ScreensaverStop(ev.Boot)
	}
}

// follow is told of every applied event (the watcher's and the spool's too): the screensaver's
// runs, and the running game, which the feed holds while it runs.
func (s *selectedFeed) follow(ev tracker.Event) {
	s.screensaver(ev)
	snap := s.d.eng.snapshot()
	if !snap.Playing || snap.Current.Rom == "" {
		s.feed.Running(nil)
		return
	}
	c := snap.Current
	s.feed.Running(&selection.Pick{System: c.System, ROM: c.Rom, Name: c.Game, At: c.Started})
}

// run restores what a previous daemon published (or publishes "nothing selected" and the
// placeholder the first time), then runs the feed.
func (s *selectedFeed) run(ctx context.Context) error {
	s.restore()
	return s.feed.Run(ctx)
}

// restore reads the feed's retained topics back: the selection shown is the one a previous
// daemon published (coming back to it publishes nothing); topics never published get
// "nothing selected" and the placeholder, so every entity announced has a state.
func (s *selectedFeed) restore() {
	s.mu.Lock()
	done := s.restored
	s.restored = true
	s.mu.Unlock()
	if done {
		return
	}
	rules := s.d.eng.currentRules()
	if !rules.Publishing {
		return
	}
	set := rules.Settings
	retained, err := s.d.eng.store().Retained()
	if err != nil {
		s.d.log.Warn().Err(err).Msg("selected game: the published selection not read; the next one is published")
	}
	kept := map[string][]byte{}
	for _, m := range retained {
		kept[m.Topic] = m.Payload
	}
	now := s.d.clock.Now()
	var msgs []haentities.Message
	sel, ok := haentities.ParseSelected(kept[set.StateTopic(haentities.SelectedTopic)])
	if ok && sel.Source == string(selection.SourcePlaying) && !s.d.eng.snapshot().Playing {
		// The game held then is over: nothing is selected until ES says what is.
		msgs, ok = haentities.SelectedStates(set, haentities.Selected{}, now), false
	}
	if ok {
		s.feed.Restore(selection.Settled{Pick: selection.Pick{System: sel.System, ROM: sel.ROM, Name: sel.Game},
			Source: selection.Source(sel.Source)})
		var pic []byte
		if b, err := base64.StdEncoding.DecodeString(string(kept[set.StateTopic(haentities.SelectedMarquee)])); err == nil &&
			len(b) > 0 && !bytes.Equal(b, artwork.Placeholder()) {
			pic = b
		}
		s.hub.Publish(selection.Selection{Selected: sel, Marquee: pic})
		s.screen(sel, pic)
	} else if kept[set.StateTopic(haentities.SelectedGame)] == nil && msgs == nil {
		msgs = haentities.SelectedStates(set, haentities.Selected{}, now)
	}
	if kept[set.StateTopic(haentities.SelectedMarquee)] == nil {
		msgs = append(msgs, haentities.SelectedMarqueeState(set, artwork.Placeholder(), now)...)
	}
	s.d.publish(msgs...) // one transaction: every entity announced has its state
}

// show publishes a settled selection: ES's names and the game's details (the names cache, else
// ES), the picture (ES's marquee, which its scraper fills with the wheel, else the wheel, the
// box art, the box, the image), then hands it to the subscribers.
func (s *selectedFeed) show(ctx context.Context, st selection.Settled) {
	now := s.d.clock.Now()
	sel := haentities.Selected{System: st.System, ROM: st.ROM, Game: st.Name, Source: string(st.Source), At: now}
	var pic selectedPicture
	if st.ROM != "" {
		sel.GameID = es.GameID(st.ROM)
		cached := false
		if n, ok, err := s.d.eng.store().CachedName(st.ROM); err == nil && ok {
			cached = true
			if n.Name != "" {
				sel.Game = n.Name
			}
			sel.SystemName, sel.Details = n.SystemName, n.Details
		}
		pic = s.picture(ctx, st.System, st.ROM)
		if pic.known && !cached {
			n := cachedName(pic.game, "")
			if n.Name != "" {
				sel.Game = n.Name
			}
			sel.Details = n.Details
		}
		sel.Image = pic.file
	}
	if sel.SystemName == "" {
		if full, ok, err := s.d.eng.store().CachedSystem(st.System); err == nil && ok {
			sel.SystemName = full
		}
	}
	shown := pic.jpeg
	if shown == nil {
		shown = artwork.Placeholder()
	}
	set := s.d.eng.currentRules().Settings
	msgs := haentities.SelectedStates(set, sel, now)
	s.d.publish(append(msgs, haentities.SelectedMarqueeState(set, shown, now)...)...)
	out := s.hub.Publish(selection.Selection{Selected: sel, Marquee: pic.jpeg})
	s.screen(sel, pic.jpeg)
	s.d.log.Debug().Uint64("seq", out.Seq).Str("system", untrusted.Clean(sel.System, selectedLogRunes)).
		Str("game", untrusted.Clean(sel.Game, selectedLogRunes)).Str("source", sel.Source).Msg("selection shown")
}

// screen hands a selection shown (or restored) to the second screens (GET /events and the
// marquee page), with the picture published as image.batocera_selected_marquee.
func (s *selectedFeed) screen(sel haentities.Selected, jpeg []byte) {
	at := sel.At
	if at.IsZero() {
		at = s.d.clock.Now()
	}
	s.d.screenSelection(sel.System, sel.GameID, events.Selection{Game: screenText(sel.Game), System: screenText(sel.System),
		SystemName: screenText(sel.SystemName), Rom: screenText(sel.ROM), At: at.Format(time.RFC3339)}, jpeg)
}

// picture is what ES says of a game and its picture: kept a while, asked and read otherwise.
func (s *selectedFeed) picture(ctx context.Context, system, rom string) selectedPicture {
	now := s.d.clock.Now()
	s.mu.Lock()
	for i, p := range s.pictures {
		if p.system == system && p.rom == rom && now.Sub(p.at) < selectedPictureAge {
			s.pictures = append(append(s.pictures[:i:i], s.pictures[i+1:]...), p) // the newest last
			s.mu.Unlock()
			return p
		}
	}
	s.mu.Unlock()
	p := selectedPicture{system: system, rom: rom, at: now}
	lctx, cancel := context.WithTimeout(ctx, selectedLookup)
	g, err := s.d.es().GameLocal(lctx, system, es.GameID(rom))
	cancel()
	switch {
	case err == nil:
		p.game, p.known = g, true
		root := s.d.config().Tools.Root
		b, file, err := sensors.FirstPicture(root, g.Marquee, g.Wheel, g.BoxArt, g.Thumbnail, g.Image)
		if err != nil {
			s.d.log.Debug().Str("rom", untrusted.Clean(rom, selectedLogRunes)).Str("reason", untrusted.Clean(err.Error(), selectedLogRunes)).
				Msg("selected game: no marquee; the placeholder is shown")
		}
		p.jpeg, p.file = b, file
	case errors.Is(err, es.ErrNotFound):
		// A folder, or a path sh mangled on the way: ES does not know it, the argv names it.
	default:
		s.d.log.Debug().Err(err).Msg("selected game: ES not asked; the placeholder is shown")
		return p // not kept: asked again next time
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pictures) == selectedPictures {
		s.pictures = append(s.pictures[:0], s.pictures[1:]...)
	}
	s.pictures = append(s.pictures, p)
	return p
}
