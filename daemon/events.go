package daemon

import (
	"context"

	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// hookEvent persists an event a hook handed over the socket.
func (d *Daemon) hookEvent(key string, ev tracker.Event) error {
	if err := journal.CheckKey(key); err != nil {
		return err
	}
	ev = ev.Normalize()
	if err := ev.Validate(); err != nil {
		return err
	}
	d.selected.take(ev) // a selection, or the screensaver, handed over by the binary (not through the inbox)
	return d.record(journal.Keyed{Key: key, Event: ev})
}

// record persists an event: through the intake log (acked at once, kept
// through a full disk, applied in arrival order), or without one straight
// into the store.
func (d *Daemon) record(k journal.Keyed) error {
	if d.intake != nil {
		return d.intake.accept(k)
	}
	_, err := d.eng.apply(k)
	return err
}

// runIntake applies the hooks' events as they arrive.
func (d *Daemon) runIntake(ctx context.Context) error {
	if d.intake == nil {
		<-ctx.Done()
		return nil
	}
	return d.intake.run(ctx)
}

// afterEvent runs once an event is in the store: after a hook's, ES is
// asked right away what runs (the watcher's own events need no second
// look), and after a game's end the game lists' counts are stale.
func (d *Daemon) afterEvent(k journal.Keyed) {
	ev := k.Event
	d.power.Follow(ev, d.opts.Now().BootID)
	hooked := ev.Source != tracker.SourceWatcher
	if hooked && (ev.Kind == tracker.KindGameStart || ev.Kind == tracker.KindGameEnd || ev.Kind == tracker.KindStart) {
		d.watch.nudge()
	}
	if ev.Kind == tracker.KindGameEnd {
		d.invalidateGames() // play counts and last played moved
	}
	d.saves.followed(ev)
	d.selected.follow(ev)
}

// emitWatcher records an event the /runningGame watcher saw, like a
// hook's: persisted at once, kept through a full disk, and applied in the
// order it was seen among the hooks' events.
func (d *Daemon) emitWatcher(ev tracker.Event) {
	if err := d.record(journal.NewKeyed(ev)); err != nil {
		d.log.Error().Err(err).Msg("record watcher event")
	}
}
