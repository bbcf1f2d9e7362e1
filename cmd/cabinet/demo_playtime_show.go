//go:build !release

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/doctor"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
)

// tvRepeat is how long the same text on the TV counts as one message: the
// daemon shows a message over the game three times, 3 s apart, for it to
// be read.
const tvRepeat = 2 * time.Minute

// show prints what the household sees of the playroom as it happens, on
// the playroom's clock: the messages on the TV (over the game, RetroArch's;
// in the menus, ES's), the games RetroArch saves, and what Home Assistant
// shows of play time (the time left when it goes up, not each minute).
func (p *playroom) show(ctx context.Context) {
	var tvSeen, esSeen, brokerSeen, saved int
	lastTV, lastTVAt := "", time.Time{}
	entities := map[string]string{}
	for _, e := range []string{haentities.Player, haentities.NowPlaying, haentities.TimeLeftToday, haentities.LimitState, haentities.LimitEvent} {
		entities[p.ha.StateTopic(e)] = e
	}
	last := map[string]string{} // each entity's last state
	line := func(format string, a ...any) {
		fmt.Fprintf(p.out, "%s   "+format+"\n", append([]any{p.clock.at()}, a...)...)
	}
	for {
		snap := p.cab.RetroArch.Snapshot()
		for _, m := range snap.Messages[min(tvSeen, len(snap.Messages)):] {
			now := p.clock.fake.Now()
			if m != lastTV || now.Sub(lastTVAt) > tvRepeat {
				line("on the TV, over the game: %s", m)
			}
			lastTV, lastTVAt = m, now
		}
		tvSeen = len(snap.Messages)
		if snap.StatesSaved > saved {
			line("RetroArch saves the game in a new save-state slot")
			saved = snap.StatesSaved
		}
		calls := p.cab.ES.Calls()
		for _, c := range calls[min(esSeen, len(calls)):] {
			if c.Route == fakees.RouteNotify {
				line("on the TV, in the menus:  %s", c.Body)
			}
		}
		esSeen = len(calls)
		msgs := p.broker.Messages()
		for _, m := range msgs[min(brokerSeen, len(msgs)):] {
			e, ok := entities[m.Topic]
			if !ok {
				continue
			}
			v := string(m.Payload)
			if e == haentities.LimitEvent {
				line("HA %-22s %s", e, eventText(m.Payload))
				continue
			}
			was := last[e]
			last[e] = v
			if v == was || e == haentities.TimeLeftToday && !timeLeftNews(was, v) {
				continue
			}
			line("HA %-22s %s", e, v)
		}
		brokerSeen = len(msgs)
		select {
		case <-ctx.Done():
			return
		case <-time.After(nightTick):
		}
	}
}

// timeLeftNews reports whether time_left_today going from was to now is
// worth saying: the first value, or time granted (not each minute played).
func timeLeftNews(was, now string) bool {
	w, err1 := strconv.Atoi(was)
	n, err2 := strconv.Atoi(now)
	return err1 != nil || err2 != nil || n > w
}

// eventText is an event (batocera_limit, batocera_save_problem) as a line: "warned — Super Mario
// World: 5 minutes of play left today".
func eventText(payload []byte) string {
	var ev limitEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return string(payload)
	}
	s := ev.EventType + " —"
	if ev.Profile != nil {
		s = ev.EventType + " (" + *ev.Profile + ") —"
	}
	if ev.Game != nil {
		s += " " + *ev.Game + ":"
	}
	if ev.Detail != nil {
		s += " " + *ev.Detail
	}
	return s
}

// doctor prints what `cabinet doctor` says of play time on the playroom
// cabinet at the end of the evening.
func (p *playroom) doctor(ctx context.Context, exe string, environ []string) error {
	fmt.Fprintf(p.out, "%s ▶ what `cabinet doctor` says of play time on the playroom cabinet:\n", p.clock.at())
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(dctx, exe, "doctor")
	cmd.Env = environ
	b, err := cmd.Output() // exits 1 when a check fails: the lines still say
	section := false
	for _, l := range strings.Split(string(b), "\n") {
		name := ""
		if len(l) > 5 && l[4] == ' ' && l[5] != ' ' {
			name, _, _ = strings.Cut(l[5:], " ")
		}
		switch {
		case name == doctor.CheckPlayTime:
			section = true
		case name != "" || l == "" || !strings.HasPrefix(l, "     "):
			section = false
		}
		if section {
			fmt.Fprintf(p.out, "           %s\n", l)
		}
	}
	if !strings.Contains(string(b), " "+doctor.CheckPlayTime+" ") {
		return fmt.Errorf("cabinet doctor: %v\n%s", err, b)
	}
	return nil
}
