package household

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The player's side of the rules, from Cabinet's own entries in
// EmulationStation: asking a parent for more time and asking how much is
// left. A request is raised as a time_requested event (a parent's phone
// hears of it through Home Assistant) and waits for an answer: extra time
// granted (Grant) or a no (Deny), which the player then sees on screen.

// EventTimeRequested: the player asked for more time (Minutes: how much).
const EventTimeRequested = "time_requested"

// Bounds of a request.
const (
	// MaxAsk bounds the minutes one request asks for.
	MaxAsk = 60
	// askAgain is how long a request waits before the same player may
	// send another one: a child pressing the entry ten times does not ring
	// a parent's phone ten times.
	askAgain = 10 * time.Minute
)

// ErrNoRequest: Deny with no request waiting.
var ErrNoRequest = errors.New("no request for more time is waiting")

// timeRequest is the request waiting for an answer (e.mu).
type timeRequest struct {
	at      time.Time // Clock time
	minutes int
	profile string
}

// RequestTime is the player asking for minutes more today. It says what
// the player sees: the request was sent, one is already waiting, or
// there is nothing to ask for (the limits are off, play is not limited
// today).
func (e *Enforcer) RequestTime(minutes int) (string, error) {
	if minutes < 1 || minutes > MaxAsk {
		return "", fmt.Errorf("a request is for 1 to %d minutes, not %d", MaxAsk, minutes)
	}
	st := e.Status()
	who := st.Profile
	if !st.Enabled {
		return "There is no play time limit on this cabinet: nothing to ask for.", nil
	}
	now := e.Clock.Now()
	e.mu.Lock()
	if p := e.request; p != nil && p.profile == who && now.Sub(p.at) < askAgain {
		e.mu.Unlock()
		return fit(fmt.Sprintf("Already asked for %d more minutes: the answer will show here.", p.minutes)), nil
	}
	e.request = &timeRequest{at: now, minutes: minutes, profile: who}
	e.mu.Unlock()
	e.Log.Info().Int("minutes", minutes).Str("profile", who).Msg("household: more time requested")
	e.event(Event{Kind: EventTimeRequested, Profile: who, Minutes: minutes,
		Detail: fmt.Sprintf("Asks for %d more minutes", minutes), By: "player", When: e.Now().At})
	return fit(fmt.Sprintf("Asked a parent for %d more minutes. The answer will show here.", minutes)), nil
}

// TimeLeftText is what the player sees when asking how much play is left.
func (e *Enforcer) TimeLeftText() string {
	st := e.Status()
	whose := ""
	if st.Profile != "" {
		whose = st.Profile + ": "
	}
	switch {
	case !st.Enabled:
		return "There is no play time limit on this cabinet."
	case st.Refusal != "":
		return fit(whose + st.Refusal)
	case st.Remaining < 0:
		return fit(whose + "No limit on play today.")
	}
	return fit(whose + leftText(st) + ".")
}

// Deny answers the waiting request with no, which the player sees.
func (e *Enforcer) Deny(by string) (Status, error) {
	p := e.takeRequest()
	if p == nil {
		return e.Status(), ErrNoRequest
	}
	e.Log.Info().Str("by", by).Str("profile", p.profile).Msg("household: more time denied")
	e.answer(fit("A parent said no to more time today."))
	return e.Status(), nil
}

// answered is Grant's part: a waiting request is answered by the time
// granted, which the player sees.
func (e *Enforcer) answered(minutes int) {
	if e.takeRequest() != nil {
		e.answer(fit(fmt.Sprintf("A parent gave you %d more minutes.", minutes)))
	}
}

// takeRequest is the request waiting, which is answered now (nil: none).
func (e *Enforcer) takeRequest() *timeRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.request
	e.request = nil
	return p
}

// answer shows text over the game when one runs, else in ES's menus.
func (e *Enforcer) answer(text string) {
	if e.Screen == nil {
		return
	}
	if e.Running != nil && e.Running().Playing {
		e.show(context.Background(), text, 2)
		return
	}
	e.shows.Add(1)
	go func() {
		defer e.shows.Done()
		e.notify(context.Background(), text)
	}()
}
