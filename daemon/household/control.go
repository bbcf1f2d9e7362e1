package household

import (
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/playday"
)

// MaxGrant bounds one grant of extra time.
const MaxGrant = 240

// Status is the rules' status now (the running game counted).
func (e *Enforcer) Status() Status {
	rules := e.Rules()
	loc := e.loc()
	e.mu.Lock()
	defer e.mu.Unlock()
	m, l := e.current(loc)
	prof := l.profileNow()
	st := statusOf(rules.For(prof), l.as(prof), m, loc)
	st.Profile, st.Player = prof, l.Player
	return st
}

// Player is the profile chosen now ("" none).
func (e *Enforcer) Player() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.load()
	return e.ledger.Player
}

// current is the ledger brought to now: a copy, observed at m (e.mu held).
func (e *Enforcer) current(loc *time.Location) (playday.Moment, Ledger) {
	e.load()
	m := e.moment()
	l := e.ledger.clone()
	l.observe(m, loc)
	return m, l
}

// profileNow is whose time it is: the counted game's player, else the player now.
func (l Ledger) profileNow() string {
	if l.Game != nil {
		return l.Game.Profile
	}
	return l.Player
}

// statusOf evaluates l (observed at m) with its game counted up to m,
// leaving l and its game as they are.
func statusOf(rules Rules, l Ledger, m playday.Moment, loc *time.Location) Status {
	var span *playday.Span
	if l.Game != nil && l.Game.BootID == m.BootID {
		g := *l.Game
		l.Game = &g
		span = g.count(&l, m, loc)
	}
	return Evaluate(rules, l, m, span, loc)
}

// change applies fn to the ledger brought to now and writes it, then runs
// a step (a game may have to end, or warnings come again).
//
// fn sees the ledger as the player whose time it is now (the running game's, else the one
// chosen): extra time and today's limit are theirs.
func (e *Enforcer) change(fn func(l *Ledger) error) (Status, error) {
	rules := e.Rules()
	loc := e.loc()
	e.mu.Lock()
	m, full := e.current(loc)
	prof := full.profileNow()
	l := full.as(prof)
	if err := fn(&l); err != nil {
		e.mu.Unlock()
		return Status{}, err
	}
	full.put(prof, l)
	if err := e.save(full); err != nil {
		e.mu.Unlock()
		return Status{}, fmt.Errorf("the change could not be written to the cabinet's store (is /userdata full?): %w", err)
	}
	prof = full.profileNow()
	st := statusOf(rules.For(prof), full.as(prof), m, loc)
	st.Profile, st.Player = prof, full.Player
	e.mu.Unlock()
	e.kick()
	return st, nil
}

// SetPlayer chooses the profile playing from now on ("" none: the cabinet's rules). A game
// running goes on under its own player's rules and time: the choice applies from the next launch.
func (e *Enforcer) SetPlayer(name, by string) (Status, error) {
	if name != "" {
		if _, ok := e.Rules().Profile(name); !ok {
			return Status{}, fmt.Errorf("no profile %q: the household's are %s (cabinet.household.profiles)", name,
				listed(e.Rules().ProfileNames()))
		}
	}
	st, err := e.change(func(l *Ledger) error {
		l.Player = name
		return nil
	})
	if err == nil {
		e.Log.Info().Str("player", name).Str("by", by).Msg("household: player chosen")
	}
	return st, err
}

// Grant adds minutes of extra time to today (until the next midnight the
// cabinet's clock is sure of).
func (e *Enforcer) Grant(minutes int, by string) (Status, error) {
	if minutes < 1 || minutes > MaxGrant {
		return Status{}, fmt.Errorf("extra time must be 1 to %d minutes, not %d", MaxGrant, minutes)
	}
	st, err := e.change(func(l *Ledger) error {
		if l.BonusDay != l.Play.Day {
			l.BonusDay, l.Bonus = l.Play.Day, 0
		}
		l.Bonus = min(l.Bonus+minutes, MaxMinutes)
		return nil
	})
	if err == nil {
		e.Log.Info().Int("minutes", minutes).Str("by", by).Msg("household: extra time granted")
		e.event(Event{Kind: EventExtended, Profile: st.Profile, Minutes: minutes, By: by, Detail: fmt.Sprintf("+%d minutes today", minutes),
			When: e.Now().At})
		e.answered(minutes)
	}
	return st, err
}

// SetTodayLimit sets today's own limit in minutes (-1: the rules' limit
// applies again).
func (e *Enforcer) SetTodayLimit(minutes int, by string) (Status, error) {
	if minutes < -1 || minutes > MaxMinutes {
		return Status{}, fmt.Errorf("today's limit must be 0 to %d minutes (or -1 to use the rules' limit), not %d", MaxMinutes, minutes)
	}
	st, err := e.change(func(l *Ledger) error {
		if minutes < 0 {
			l.TodayDay, l.TodayLimit = "", 0
			return nil
		}
		l.TodayDay, l.TodayLimit = l.Play.Day, minutes
		return nil
	})
	if err == nil {
		e.Log.Info().Int("minutes", minutes).Str("by", by).Msg("household: today's limit set")
	}
	return st, err
}

// Pause turns "pause play now" on (the running game is saved and quit;
// launches are ended until it is off) or off.
func (e *Enforcer) Pause(on bool, by string) (Status, error) {
	st, err := e.change(func(l *Ledger) error {
		l.Paused = on
		return nil
	})
	if err == nil {
		e.Log.Info().Bool("paused", on).Str("by", by).Msg("household: pause play")
	}
	return st, err
}
