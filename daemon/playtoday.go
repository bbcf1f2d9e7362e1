package daemon

import (
	"bytes"
	"context"
	"path/filepath"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/bootclock"
	"github.com/batocera-cabinet/cabinet/hook/playday"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// playTodayEvery is how often the figure moves on while a game runs (HA
// shows minutes; a state every half minute is plenty).
const playTodayEvery = 30 * time.Second

// playTodayCheck bounds the wait while idle: the clock being set by NTP
// (which moves the day) is noticed within it.
const playTodayCheck = 5 * time.Minute

// runPlayToday publishes sensor.batocera_play_time_today: the logged play
// since local midnight (hook/playday keeps it, in the store, as sessions
// are logged) plus the running game once it has lasted long enough to be
// logged, so the figure never goes back when it ends. It is observed at
// every apply, every half minute while a game runs, at midnight and every
// few minutes (the clock may be set meanwhile).
func (d *Daemon) runPlayToday(ctx context.Context) error {
	var shown []byte
	var last haentities.PlayDay // the figure last published
	for {
		applied := d.eng.appliedCh()
		now := d.opts.Now()
		m := playday.Moment{Wall: now.At, Boot: now.Boot, BootID: now.BootID, Synced: d.clockSynced(now.At)}
		var st playday.State
		// Read without a commit (this runs at every apply); write, in a
		// transaction that reads again, only when the observation changed
		// something (a new day, the clock set, a new boot).
		kept, err := d.eng.store().KeptPlayDay()
		if err == nil {
			s, derr := playday.Decode(kept)
			if derr != nil {
				d.log.Warn().Err(derr).Msg("play time today")
			}
			st = playday.Observe(s, m, time.Local)
			if !bytes.Equal(playday.Encode(st), kept) {
				err = d.eng.store().Update(func(tx *store.Tx) error {
					s, _ := playday.Decode(tx.PlayDay())
					st = playday.Observe(s, m, time.Local)
					return tx.SetPlayDay(playday.Encode(st))
				})
			}
		}
		if err != nil {
			d.log.Warn().Err(err).Msg("play time today not kept; trying again")
		}
		snap := d.eng.snapshot()
		rules := d.eng.currentRules()
		var running *playday.Span
		if snap.Playing && !snap.CurrentIgnored && snap.CurrentBootID == now.BootID && now.Boot-snap.CurrentBoot >= rules.Tracker.MinSession {
			running = &playday.Span{From: snap.CurrentBoot, To: now.Boot}
		}
		fig := playday.Today(st, m, running, time.Local, 5)
		// Between a game's end and its logging (the reorder window, about
		// 3 s) neither the running game nor the logged session counts it:
		// within a day the figure never goes back (HA would read a drop as
		// a new day).
		if fig.Day == last.Day && fig.Seconds < last.Seconds {
			fig.Seconds = last.Seconds
		}
		msgs := haentities.PlayTimeTodayStates(rules.Settings, fig, d.clock.Now())
		if key := bytes.Join([][]byte{msgs[0].Payload, msgs[1].Payload}, []byte{0}); err == nil && !bytes.Equal(key, shown) {
			d.publish(msgs...)
			shown, last = key, fig
		}
		wait := min(playTodayCheck, playday.NextMidnight(m, time.Local).Sub(m.Wall)+time.Second)
		if snap.Playing {
			wait = playTodayEvery
		}
		t, tc := d.clock.NewTimer(max(wait, time.Second))
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

// clockSynced says whether the wall clock can place play on the calendar
// (Options.ClockSynced in tests; else the kernel's NTP status or a clock
// chip under cabinet.paths.root's /sys).
func (d *Daemon) clockSynced(now time.Time) bool {
	if d.opts.ClockSynced != nil {
		return d.opts.ClockSynced(now)
	}
	rtc := ""
	if sys := d.config().System.Sys; sys != "" {
		rtc = filepath.Join(sys, "class/rtc/rtc0")
	}
	return bootclock.Synced(now, rtc)
}
