package sensors

import (
	"bytes"
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/playday"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// PlayTodayEvery is how often the figure moves on while a game runs (HA shows minutes; a state
// every half minute is plenty).
const PlayTodayEvery = 30 * time.Second

// PlayTodayCheck bounds the wait while idle: the clock being set by NTP (which moves the day)
// is noticed within it.
const PlayTodayCheck = 5 * time.Minute

// PlayDayStore is where hook/playday keeps this boot's play (*store.Store).
type PlayDayStore interface {
	KeptPlayDay() ([]byte, error)
	Update(fn func(*store.Tx) error) error
}

// PlayToday publishes sensor.batocera_play_time_today.
type PlayToday struct {
	Host  Host
	Clock clock.Clock
	Log   zerolog.Logger
	Store PlayDayStore
	// Now stamps the moment (the wall clock and the boot clock) an observation is made.
	Now func() tracker.Stamp
	// Synced says whether the wall clock can place play on the calendar (the kernel's NTP
	// status, or a clock chip).
	Synced func(time.Time) bool
	// Location is the local time zone midnight is counted in (nil: time.Local).
	Location *time.Location
}

// Run publishes the logged play since local midnight (hook/playday keeps it, in the store, as
// sessions are logged) plus the running game once it has lasted long enough to be logged, so the
// figure never goes back when it ends. It is observed at every apply, every half minute while a
// game runs, at midnight and every few minutes (the clock may be set meanwhile).
func (p *PlayToday) Run(ctx context.Context) error {
	loc := p.Location
	if loc == nil {
		loc = time.Local
	}
	var shown []byte
	var last haentities.PlayDay // the figure last published
	for {
		applied := p.Host.Applied()
		now := p.Now()
		m := playday.Moment{Wall: now.At, Boot: now.Boot, BootID: now.BootID, Synced: p.Synced(now.At)}
		st, err := p.observe(m, loc)
		if err != nil {
			p.Log.Warn().Err(err).Msg("play time today not kept; trying again")
		}
		snap := p.Host.Snapshot()
		rules := p.Host.Rules()
		var running *playday.Span
		if snap.Playing && !snap.CurrentIgnored && snap.CurrentBootID == now.BootID && now.Boot-snap.CurrentBoot >= rules.Tracker.MinSession {
			running = &playday.Span{From: snap.CurrentBoot, To: now.Boot}
		}
		fig := playday.Today(st, m, running, loc, 5)
		// Between a game's end and its logging (the reorder window, about 3 s) neither the
		// running game nor the logged session counts it: within a day the figure never goes
		// back (HA would read a drop as a new day).
		if fig.Day == last.Day && fig.Seconds < last.Seconds {
			fig.Seconds = last.Seconds
		}
		msgs := haentities.PlayTimeTodayStates(rules.Settings, fig, p.Clock.Now())
		if key := bytes.Join([][]byte{msgs[0].Payload, msgs[1].Payload}, []byte{0}); err == nil && !bytes.Equal(key, shown) {
			p.Host.Publish(msgs...)
			shown, last = key, fig
		}
		wait := min(PlayTodayCheck, playday.NextMidnight(m, loc).Sub(m.Wall)+time.Second)
		if snap.Playing {
			wait = PlayTodayEvery
		}
		t, tc := p.Clock.NewTimer(max(wait, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-applied:
		case <-tc:
		}
		t.Stop()
	}
}

// observe reads the kept state without a commit (this runs at every apply) and writes, in a
// transaction that reads again, only when the observation changed something (a new day, the
// clock set, a new boot).
func (p *PlayToday) observe(m playday.Moment, loc *time.Location) (playday.State, error) {
	kept, err := p.Store.KeptPlayDay()
	if err != nil {
		return playday.State{}, err
	}
	s, derr := playday.Decode(kept)
	if derr != nil {
		p.Log.Warn().Err(derr).Msg("play time today")
	}
	st := playday.Observe(s, m, loc)
	if bytes.Equal(playday.Encode(st), kept) {
		return st, nil
	}
	err = p.Store.Update(func(tx *store.Tx) error {
		s, _ := playday.Decode(tx.PlayDay())
		st = playday.Observe(s, m, loc)
		return tx.SetPlayDay(playday.Encode(st))
	})
	return st, err
}
