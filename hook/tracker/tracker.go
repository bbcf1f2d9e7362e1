// Package tracker is the play-tracking state machine: events from the ES hook, the configgen script,
// the daemon's /runningGame watcher, MCP and HA become entity states (a haentities.Snapshot), logged
// sessions and time-sensitive events. It is pure: no I/O, no clock of its own, and its whole memory
// is a State value that the hook persists between runs.
//
// ES runs hooks concurrently and in no order, so events are applied in event-time order: recent
// events stay in a short reorder window and are replayed on a checkpoint at every Apply; events
// older than the window become final and move into the checkpoint. Logged sessions are emitted only
// when final, so any arrival order of events that happened within 2 s of each other gives the same
// states and the same logged sessions. Time-sensitive events (session_start, cabinet events) are
// emitted as soon as they are known, at most once.
package tracker

import (
	"fmt"
	"sort"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// TimedEvent is a time-sensitive event to publish now (dropped by the outbox when late).
type TimedEvent struct {
	Type        string                 // haentities.EventSessionStart, EventAchievementUnlocked or a haentities.Cabinet* type
	At          time.Time              // when it happened (wall clock)
	Age         time.Duration          // how long ago it happened at Apply's now (boot clock when possible)
	Session     haentities.Session     // for session_start
	Achievement haentities.Achievement // for an unlock
}

// Output is what one Apply produced.
type Output struct {
	Snapshot haentities.Snapshot // the retained states to publish (the latest value wins)
	Changed  bool                // Snapshot differs from the one before this Apply
	// Logged are sessions that just became final, oldest first: each must reach the session history
	// and be published as session_end exactly once.
	Logged []haentities.Session
	// Events are time-sensitive events to publish now, oldest first.
	Events []TimedEvent
	// Unlocked are achievements that just became final, oldest first: each must reach the
	// achievements log exactly once (their unlocked event is in Events as soon as known).
	Unlocked []haentities.Achievement
	// FlushIn, when not zero, is how long after now an Apply without events (a flush) would make a
	// pending outcome final: a session that ended, or a session_start held back because the
	// screensaver was involved.
	FlushIn time.Duration
	// Skipped lists events that were refused (invalid) or could not be applied (too late).
	Skipped []error

	publish bool // false for Record: time-sensitive events are not emitted
}

// Apply applies events (none: a flush) to st at now, the moment of the call on both clocks, and
// returns the new state. Pass spooled events and the hook's own event in one call, spool first: they
// are put in event order together. st is not modified. The caller publishes Output.Events: they are
// remembered as sent and never emitted again.
func Apply(st State, cfg Config, now Stamp, evs ...Event) (State, Output) {
	return apply(st, cfg, now, true, evs)
}

// Record is Apply for a caller that cannot publish (the configgen hook runs inside Batocera's
// launcher and never touches the network): time-sensitive events are not emitted but left in the
// state, so the next Apply (the ES hook of the same launch, milliseconds later) emits them, with
// their age. Logged sessions are returned as by Apply and must be stored.
func Record(st State, cfg Config, now Stamp, evs ...Event) (State, Output) {
	return apply(st, cfg, now, false, evs)
}

func apply(st State, cfg Config, now Stamp, publish bool, evs []Event) (State, Output) {
	cfg = cfg.withDefaults()
	st = st.clone()
	st.V = StateVersion
	out := Output{publish: publish}
	before := snapshot(st.replay(cfg, nil), st.Core)
	if publish {
		st.flushPending(cfg, now, &out)
	}

	for _, ev := range evs {
		ev = ev.Normalize()
		if err := ev.Validate(); err != nil {
			out.Skipped = append(out.Skipped, err)
			continue
		}
		st.noteBoot(ev.BootID)
		if st.late(ev) {
			st.applyLate(ev, cfg, now, &out)
			continue
		}
		st.insert(ev)
	}
	st.noteBoot(now.BootID)

	// Make final what the window no longer needs, emitting logged sessions and anything not sent yet.
	n := 0
	for n < len(st.Window) && (len(st.Window)-n > maxWindow || st.foldable(st.Window[n].Stamp(), now, cfg.ReorderWindow)) {
		n++
	}
	if n > 0 {
		var fx []effect
		for _, ev := range st.Window[:n] {
			st.Core.step(ev, cfg, &fx)
		}
		st.Horizon = st.Window[n-1].Stamp()
		st.Window = append(st.Window[:0], st.Window[n:]...)
		st.emit(fx, true, cfg, now, &out)
	}

	// Replay the rest for the live states and the time-sensitive events they imply.
	var fx []effect
	live := st.replay(cfg, &fx)
	st.emit(fx, false, cfg, now, &out)
	out.Snapshot = snapshot(live, st.Core)
	out.Changed = !sameSnapshot(before, out.Snapshot)
	out.FlushIn = st.flushIn(fx, now, cfg)
	st.pruneMarks(cfg)
	return st, out
}

// replay runs the window on a copy of the checkpoint. fx may be nil.
func (st *State) replay(cfg Config, fx *[]effect) Core {
	live := st.Core
	var sink []effect
	if fx == nil {
		fx = &sink
	}
	for _, ev := range st.Window {
		live.step(ev, cfg, fx)
	}
	return live
}

// applyLate handles an event older than the newest final one. Only what cannot mislead is applied:
// a game-start merges into the running session of the same launch, a game-end ends a session that
// started before it. Nothing time-sensitive is emitted for a late event.
func (st *State) applyLate(ev Event, cfg Config, now Stamp, out *Output) {
	c := &st.Core
	switch {
	case ev.Kind == KindGameStart && c.Open.ID != "" && c.sameLaunch(ev, gameKey(ev.Path), cfg):
		c.merge(ev, gameKey(ev.Path))
	case ev.Kind == KindGameEnd && c.Open.ID != "" && since(c.Open.Start, ev.Stamp()) >= 0:
		var fx []effect
		c.end(ev.Stamp(), cfg, &fx)
		st.emit(fx, true, cfg, now, out)
	case ev.Kind == KindAchievement:
		// Kept (the log, the running session when it started before), but announced no more: too
		// late to flash the lights.
		var fx []effect
		c.achievement(ev, &fx)
		for _, f := range fx {
			out.Unlocked = append(out.Unlocked, f.ach)
		}
	default:
		out.Skipped = append(out.Skipped, fmt.Errorf("%s event at %s: older than the reorder window, ignored", ev.Kind, ev.At.Format(time.RFC3339)))
	}
}

// flushIn is the wait until the oldest window event is final, when the window holds a pending
// outcome (a logged session or a held-back session_start); zero otherwise.
func (st *State) flushIn(fx []effect, now Stamp, cfg Config) time.Duration {
	pending := false
	for _, f := range fx {
		if f.typ == haentities.EventSessionEnd || f.typ == haentities.EventAchievementUnlocked ||
			f.typ == haentities.EventSessionStart && f.deferred && !f.ignored {
			pending = true
		}
	}
	if !pending || len(st.Window) == 0 {
		return 0
	}
	wait := cfg.ReorderWindow - since(st.Window[0].Stamp(), now)
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	return wait
}

// snapshot is what HA shows: live states from the replayed machine, logged figures from the final one.
func snapshot(live, final Core) haentities.Snapshot {
	s := haentities.Snapshot{
		Online:          live.Online,
		Playing:         live.Open.ID != "",
		Screensaver:     live.SS.On,
		ScreensaverType: live.SS.Type,
		Sleeping:        live.Sleeping,
		Last:            final.Last,
		PlayTime:        final.PlayTime,
		LastAchievement: live.LastAch,
	}
	if s.Playing {
		s.Current = live.Open.Session
		s.CurrentBoot, s.CurrentBootID, s.CurrentIgnored = live.Open.Start.Boot, live.Open.Start.BootID, live.Open.Ignored
	}
	switch {
	case !live.Online:
		s.Activity = haentities.ActivityOff
	case s.Playing:
		s.Activity = haentities.ActivityPlaying
	case s.Screensaver:
		s.Activity = haentities.ActivityScreensaver
	default:
		s.Activity = haentities.ActivityMenu
	}
	return s
}

func sameSnapshot(a, b haentities.Snapshot) bool {
	return a.Online == b.Online && a.Activity == b.Activity && a.Playing == b.Playing &&
		a.Screensaver == b.Screensaver && a.ScreensaverType == b.ScreensaverType && a.Sleeping == b.Sleeping &&
		a.PlayTime == b.PlayTime && sameSession(a.Current, b.Current) && sameSession(a.Last, b.Last) &&
		a.LastAchievement == b.LastAchievement
}

func sameSession(a, b haentities.Session) bool {
	return a.ID == b.ID && a.Game == b.Game && a.System == b.System && a.SystemName == b.SystemName &&
		a.Rom == b.Rom && a.Emulator == b.Emulator && a.Core == b.Core && a.Source == b.Source &&
		a.Started.Equal(b.Started) && a.Ended.Equal(b.Ended) && a.Duration == b.Duration && a.Unlocks() == b.Unlocks()
}

// Messages builds what to publish for this output, in order: the retained states (availability
// last), the logged sessions' session_end, then the time-sensitive events. at is the build time (the
// now of Apply); a time-sensitive message's Created is at minus the event's Age, so the outbox can
// drop it when it is late, whatever the wall clock did meanwhile.
func (o Output) Messages(s haentities.Settings, at time.Time) []haentities.Message {
	msgs := haentities.States(s, o.Snapshot, at)
	// Events and logged sessions go out in the order they happened: a
	// session that started and ended while nobody published (a flush after
	// both became final) gives its session_start before its session_end.
	type timed struct {
		when time.Time
		msg  haentities.Message
	}
	var evs []timed
	for _, sess := range o.Logged {
		evs = append(evs, timed{sess.Ended, haentities.SessionEnd(s, sess, at)})
	}
	for _, ev := range o.Events {
		if ev.Type == haentities.EventSessionStart {
			evs = append(evs, timed{ev.At, haentities.SessionStart(s, ev.Session, at.Add(-ev.Age))})
			continue
		}
		if ev.Type == haentities.EventAchievementUnlocked {
			if s.Achievements { // announced only then
				evs = append(evs, timed{ev.At, haentities.AchievementEvent(s, ev.Achievement, at.Add(-ev.Age))})
			}
			continue
		}
		evs = append(evs, timed{ev.At, haentities.CabinetEvent(s, ev.Type, ev.At, at.Add(-ev.Age))})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].when.Before(evs[j].when) })
	for _, e := range evs {
		msgs = append(msgs, e.msg)
	}
	return msgs
}

// Running is the session that runs after st's events (its window replayed on its checkpoint): ID ""
// when no game runs. Callers that enrich events before Apply (hook/journal: an unlock's hardcore
// setting depends on the game) read the game here.
func Running(st State, cfg Config) haentities.Session {
	return st.replay(cfg.withDefaults(), nil).Open.Session
}

// GameSystem is the system a game-start event names: its own, else its ROM's roms folder.
func GameSystem(ev Event) string {
	if ev.System != "" {
		return ev.System
	}
	return systemFromPath(ev.Path)
}
