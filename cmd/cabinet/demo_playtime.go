//go:build !release

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/logfile"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// The demo's play-time evening. Its rules count in minutes, and the demo
// cabinet's daemon runs on the real clock, which the hook scripts it calls
// share: that evening cannot be sped up. So play time gets a cabinet of
// its own, the playroom's — a second simulated cabinet on the same broker,
// with its own daemon — whose clock the demo drives (daemon.Options' Clock
// and Now, as the daemon's tests do): it keeps pace with real time while
// something is said, and runs a few hundred times faster while the demo
// waits for the next thing to happen. The daemon sees games start and end
// through its ES watcher (hook scripts would stamp the real clock); ES's
// start is handed to it as its start script would, stamped by the demo.

// playroomRules are the playroom's cabinet.household.* keys, with Home
// Assistant's play-time controls on.
var playroomRules = []string{"cabinet.household.enabled=1", "cabinet.household.minutes.daily=20",
	"cabinet.household.bedtime=20:30-07:00", "cabinet.household.warn_at=5,1", "cabinet.household.profiles=alice,bob",
	"cabinet.ha.household=1"}

// playTimeDemo is what the playroom's evening needs of the demo.
type playTimeDemo struct {
	env    *env
	dir    string // the demo's folder
	exe    string
	broker *mqttbroker.Broker
	out    io.Writer
	speed  float64
	// hush quiets the demo cabinet's Home Assistant lines meanwhile: they
	// carry the real time, the playroom's lines its own clock's.
	hush *atomic.Bool
}

// step is the demo's last step: the playroom's evening, from the start of
// the playroom cabinet to its stop.
func (d playTimeDemo) step() simulator.Step {
	return simulator.Step{Say: "another evening, on a second simulated cabinet: the playroom's, with play-time rules on " +
		"(the times below are its clock's, which runs fast while nothing happens)",
		Do: func(ctx context.Context, _ *simulator.Cabinet) error {
			d.hush.Store(true)
			defer d.hush.Store(false)
			if err := d.evening(ctx); err != nil {
				return fmt.Errorf("the playroom: %w", err)
			}
			return nil
		}}
}

// evening starts the playroom cabinet and its daemon, plays the evening
// and stops them.
func (d playTimeDemo) evening(ctx context.Context) error {
	dir := filepath.Join(d.dir, "playroom")
	cab, err := simulator.Start(simulator.Options{Dir: dir, LaunchDelay: 300 * time.Millisecond})
	if err != nil {
		return err
	}
	defer cab.Close()
	conf, err := cab.WriteConfig(dir, append([]string{"cabinet.name=Playroom Cabinet", "cabinet.mqtt.broker=" + d.broker.URL(),
		"cabinet.log.level=debug"}, playroomRules...)...)
	if err != nil {
		return err
	}
	penv := *d.env
	penv.Environ = append(append([]string{}, d.env.Environ...), "CABINET_CONFIG="+conf)
	cfg := loadConfig(&penv, nil).Config
	logf, err := logfile.Open(cfg.Layout().Log(), 0, -1)
	if err != nil {
		return err
	}
	defer logf.Close()

	now := time.Now()
	start := time.Date(now.Year(), now.Month(), now.Day(), 19, 30, 0, 0, time.Local)
	nc := &nightClock{fake: clock.NewFake(start), start: start}
	cctx, stopClock := context.WithCancel(context.Background())
	clockDone := make(chan struct{})
	go func() { nc.run(cctx); close(clockDone) }()
	defer func() { stopClock(); <-clockDone }() // after the daemon's stop, which may wait on the clock

	dctx, stopDaemon := context.WithCancel(ctx)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(dctx, daemon.Options{Load: daemonLoader(&penv, nil), ConfigFile: conf, Version: buildVersion(), LogOut: logf,
			Clock: nc.fake, Now: nc.stamp, ClockSynced: func(time.Time) bool { return true }, Ready: func(*daemon.Daemon) { close(ready) }})
	}()
	stop := sync.OnceValue(func() error { stopDaemon(); return <-done })
	defer stop()
	select {
	case <-ready:
	case err := <-done:
		done <- err // for stop
		return fmt.Errorf("its daemon did not start: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	id, _ := cfg.CabinetID()
	p := &playroom{out: d.out, cab: cab, clock: nc, broker: d.broker, ha: haentities.Settings{ID: id, BaseTopic: cfg.MQTT.BaseTopic},
		socket: cfg.Layout().Socket(), speed: d.speed, exe: d.exe, environ: penv.Environ}
	sctx, stopShow := context.WithCancel(ctx)
	shown := make(chan struct{})
	go func() { p.show(sctx); close(shown) }()
	err = cab.Play(ctx, p.steps(), func(s string) { fmt.Fprintf(d.out, "%s ▶ %s\n", nc.at(), s) })
	if err == nil {
		err = p.doctor(ctx, d.exe, penv.Environ)
	}
	stopShow()
	<-shown
	if derr := stop(); derr != nil && err == nil {
		err = fmt.Errorf("its daemon: %w", derr)
	}
	return err
}

// playroom is the evening's cabinet as the demo plays it.
type playroom struct {
	out    io.Writer
	cab    *simulator.Cabinet
	clock  *nightClock
	broker *mqttbroker.Broker
	ha     haentities.Settings
	socket string // the daemon's
	speed  float64
	// exe and environ run `cabinet entry` as ES does for Cabinet's entries.
	exe     string
	environ []string
}

// steps are the evening of two children: Alice's turn (the time left
// over the game, the warnings, the game saved and closed at her limit),
// her request for more time from ES's menus answered from a parent's
// phone, Bob's turn with his own time, and a launch ended at bedtime.
func (p *playroom) steps() []simulator.Step {
	d := func(s float64) time.Duration { return time.Duration(s / p.speed * float64(time.Second)) }
	var before int // RetroArch messages before a step
	return []simulator.Step{
		{Say: "EmulationStation starts; two children share the cabinet (cabinet.household.profiles=alice,bob), each with " +
			"20 minutes of play a day; bedtime 20:30-07:00, warnings 5 and 1 minute before the end, the game saved and closed at the limit",
			Do: func(ctx context.Context, c *simulator.Cabinet) error {
				c.ES.Start()
				// ES's start script, on the playroom's clock.
				ev := p.clock.stamp().Event(tracker.KindStart, tracker.SourceES)
				return socket.Deliver(ctx, p.socket, journal.NewKey(ev), ev)
			}, Wait: d(1)},
		{Say: "Alice's turn: a parent picks her in Home Assistant (select.batocera_player; her own game pad would too)",
			Do: func(ctx context.Context, _ *simulator.Cabinet) error { return p.choose(ctx, "alice") }, Wait: d(1)},
		{Say: "Alice starts Super Mario World: her time left shows over the game", Do: func(ctx context.Context, c *simulator.Cabinet) error {
			if err := p.launch(ctx, "snes", "Super Mario World"); err != nil {
				return err
			}
			return p.clock.until(ctx, "the time left over the game", p.fast(settleStep), time.Minute, p.onTV(0, "of play left today."))
		}, Wait: d(2)},
		{Say: "Alice plays on until her time is up", Do: func(ctx context.Context, _ *simulator.Cabinet) error {
			return p.timeUp(ctx, 0)
		}, Wait: d(3)},
		{Say: "in EmulationStation's menus Alice chooses Cabinet ▸ Ask for 15 more minutes (ES runs `cabinet entry`)",
			Do: func(ctx context.Context, _ *simulator.Cabinet) error {
				if err := p.entry(ctx, packaging.EntryAskTime); err != nil {
					return err
				}
				return p.clock.until(ctx, "the request in Home Assistant", p.fast(settleStep), time.Minute, func() bool {
					return len(p.limitEvents(haentities.LimitTimeRequested)) > 0
				})
			}, Wait: d(2)},
		{Say: "a parent's phone asks (the time_requested blueprint: Approve 15, Approve 30, Deny): the parent taps Approve 15, " +
			"and Home Assistant presses button.batocera_extra_time",
			Do: func(ctx context.Context, _ *simulator.Cabinet) error {
				if err := p.broker.Publish(p.ha.CommandTopic(haentities.ExtraTime), []byte(haentities.PayloadPress), false); err != nil {
					return err
				}
				return p.clock.until(ctx, "the answer on screen", p.fast(settleStep), time.Minute, func() bool {
					return p.notified("A parent gave you 15 more minutes.")
				})
			}, Wait: d(2)},
		{Say: "Bob's turn: a parent picks him; he starts Tetris with his own 20 minutes", Do: func(ctx context.Context, _ *simulator.Cabinet) error {
			if err := p.choose(ctx, "bob"); err != nil {
				return err
			}
			before = len(p.cab.RetroArch.Snapshot().Messages)
			if err := p.launch(ctx, "nes", "Tetris"); err != nil {
				return err
			}
			return p.clock.until(ctx, "Bob's time over the game", p.fast(settleStep), time.Minute, p.onTV(before, "20 minutes of play left today."))
		}, Wait: d(2)},
		{Say: "Bob plays on until his time is up", Do: func(ctx context.Context, _ *simulator.Cabinet) error {
			return p.timeUp(ctx, before)
		}, Wait: d(3)},
		{Say: "the evening goes on; bedtime is at 20:30", Do: func(ctx context.Context, _ *simulator.Cabinet) error {
			// Fast, then slower around bedtime so that it shows on time.
			before := p.clock.start.Add(59*time.Minute + 50*time.Second)
			if err := p.clock.until(ctx, "the time before bedtime", p.fast(idleStep), 2*time.Hour, func() bool {
				return !p.clock.fake.Now().Before(before)
			}); err != nil {
				return err
			}
			return p.clock.until(ctx, "bedtime", p.fast(settleStep), 5*time.Minute, func() bool {
				v, _ := p.broker.Retained(p.ha.StateTopic(haentities.LimitState))
				return string(v) == haentities.LimitBedtime
			})
		}, Wait: d(1)},
		{Say: "Bob tries Tetris again", Do: func(ctx context.Context, _ *simulator.Cabinet) error {
			if err := p.launch(ctx, "nes", "Tetris"); err != nil {
				return err
			}
			return p.clock.until(ctx, "the launch ended", p.fast(settleStep), time.Minute, func() bool { return p.notified("can't start now") && p.idle() })
		}, Wait: d(3)},
	}
}

// choose picks the player as Home Assistant's select does, and waits for it.
func (p *playroom) choose(ctx context.Context, name string) error {
	if err := p.broker.Publish(p.ha.CommandTopic(haentities.Player), []byte(name), false); err != nil {
		return err
	}
	return p.clock.until(ctx, name+" chosen", 0, time.Minute, func() bool {
		v, _ := p.broker.Retained(p.ha.StateTopic(haentities.Player))
		return string(v) == name
	})
}

// timeUp plays on until the running game's time is up, it is saved and
// closed, and the daemon saw it end (after: RetroArch's messages before).
func (p *playroom) timeUp(ctx context.Context, after int) error {
	if err := p.clock.until(ctx, "the end of the time", p.fast(playStep), 40*time.Minute, p.onTV(after, "Time is up for today.")); err != nil {
		return err
	}
	// Saving and closing take real time: the clock slows down.
	if err := p.clock.until(ctx, "the game saved and closed", p.fast(settleStep), time.Minute, func() bool {
		_, running := p.cab.ES.Running()
		return !running && p.notified("was saved and closed")
	}); err != nil {
		return err
	}
	return p.clock.until(ctx, "the daemon seeing the game end", p.fast(settleStep), time.Minute, p.idle)
}

// fast is how far the clock moves per step of real time: step, sped up.
func (p *playroom) fast(step time.Duration) time.Duration {
	return time.Duration(float64(step) * p.speed)
}

// entry runs `cabinet entry` for one of Cabinet's entries, as ES's
// <command> for the Cabinet system does.
func (p *playroom) entry(ctx context.Context, name string) error {
	ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ectx, p.exe, "entry", "/userdata/system/cabinet/entries/"+name+packaging.EntryExtension)
	cmd.Env = p.environ
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cabinet entry: %v: %s", err, out)
	}
	return nil
}

// launch starts a game through ES, as the child would (ES may still be
// returning from the last game: tried again for 10 s), and waits until it
// runs.
func (p *playroom) launch(ctx context.Context, system, name string) error {
	for _, g := range p.cab.Library.Games(system) {
		if g.Name != name {
			continue
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := p.cab.ES.Launch(g.System, g.ID)
			if err == nil {
				return p.cab.WaitRunning(ctx)
			}
			if time.Now().After(deadline) {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("no %s game named %q", system, name)
}

// onTV reports whether RetroArch showed text over the game, after its
// first `after` messages.
func (p *playroom) onTV(after int, text string) func() bool {
	return func() bool {
		msgs := p.cab.RetroArch.Snapshot().Messages
		for _, m := range msgs[min(after, len(msgs)):] {
			if strings.Contains(m, text) {
				return true
			}
		}
		return false
	}
}

// idle reports whether Home Assistant shows no game playing.
func (p *playroom) idle() bool {
	v, ok := p.broker.Retained(p.ha.StateTopic(haentities.NowPlaying))
	return ok && string(v) == "Idle"
}

// notified reports whether ES showed a notification holding text.
func (p *playroom) notified(text string) bool {
	for _, c := range p.cab.ES.Calls() {
		if c.Route == fakees.RouteNotify && strings.Contains(c.Body, text) {
			return true
		}
	}
	return false
}

// limitEvent is event.batocera_limit's payload.
type limitEvent struct {
	EventType string  `json:"event_type"`
	Game      *string `json:"game"`
	Detail    *string `json:"detail"`
	Profile   *string `json:"profile"`
}

// limitEvents are the events of a kind Home Assistant received.
func (p *playroom) limitEvents(kind string) []limitEvent {
	var evs []limitEvent
	for _, m := range p.broker.Messages() {
		var ev limitEvent
		if m.Topic == p.ha.StateTopic(haentities.LimitEvent) && json.Unmarshal(m.Payload, &ev) == nil && ev.EventType == kind {
			evs = append(evs, ev)
		}
	}
	return evs
}
