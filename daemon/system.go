package daemon

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/osupdate"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// The cabinet's own state beside play tracking: the system volume, the
// game pads and Batocera's update, each read from the cabinet's own tools
// and kernel files, gently, and published only when it changes.
const (
	// volumePoll notices the volume changed on the cabinet itself (ES's
	// slider, a hotkey): batocera-audio is a small script, run every 10 s.
	volumePoll = 10 * time.Second
	// launchQuiet keeps batocera-audio from running while a game starts:
	// the launch owns the audio device then, and should not wait for us.
	launchQuiet = 20 * time.Second
	// padsPoll reads /proc/bus/input/devices (a few KiB from the kernel).
	padsPoll = 5 * time.Second
	// updateFirst and updateEvery pace Batocera's update check: never at
	// boot (games start then), at most every 12 h, never during a game.
	updateFirst = 10 * time.Minute
	updateEvery = 12 * time.Hour
	updateRetry = time.Hour
)

// volumeControl is batocera-audio as the daemon uses it.
type volumeControl interface {
	Get(ctx context.Context) (sysaudio.State, error)
	SetLevel(ctx context.Context, level int) error
	SetMute(ctx context.Context, muted bool) error
}

// padScanner lists the game pads (controllers.Scanner).
type padScanner interface {
	Scan() ([]controllers.Pad, error)
}

// updateChecker asks Batocera which version it publishes for this cabinet.
type updateChecker interface {
	Check(ctx context.Context) (osupdate.Result, error)
}

// systemParts are the readers of the cabinet's own state; nil: the cabinet
// lacks the source (its entities are not announced either).
type systemParts struct {
	audio  volumeControl
	pads   padScanner
	update updateChecker

	mu     sync.Mutex
	volume *audioState // last published; nil before the first reading
	padSet []controllers.Pad
	known  bool // padSet has been read once
}

type audioState struct {
	level int
	muted bool
}

// newSystemParts builds the readers of the sources the cabinet has.
func newSystemParts(sys System, has haentities.Sources) *systemParts {
	p := &systemParts{}
	if has.Audio {
		p.audio = &sysaudio.Audio{Bin: sys.Audio}
	}
	if has.Update {
		p.update = &osupdate.Checker{Upgrade: sys.Upgrade, Config: sys.BatoceraConfig}
	}
	if has.Controllers {
		p.pads = controllers.Scanner{InputDevices: sys.InputDevices, Sys: sys.Sys}
	}
	return p
}

// launching reports whether a game started less than launchQuiet ago.
func (d *Daemon) launching() bool {
	snap := d.eng.snapshot()
	return snap.Playing && d.clock.Now().Sub(snap.Current.Started) < launchQuiet
}

// runVolume publishes the volume and mute states at start and whenever
// they change on the cabinet.
func (d *Daemon) runVolume(ctx context.Context) error {
	if d.sys.audio == nil {
		<-ctx.Done()
		return nil
	}
	tick, tc := d.clock.NewTicker(volumePoll)
	defer tick.Stop()
	for {
		if !d.launching() {
			d.readVolume(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		}
	}
}

// readVolume reads batocera-audio and publishes what changed.
func (d *Daemon) readVolume(ctx context.Context) {
	if !d.eng.currentRules().Settings.Has.Audio { // gone since the start
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := d.sys.audio.Get(ctx)
	level, muted := st.Level, st.Muted
	if err != nil {
		d.log.Debug().Err(err).Msg("volume not read")
		return
	}
	d.sys.mu.Lock()
	now := audioState{level, muted}
	changed := d.sys.volume == nil || *d.sys.volume != now
	d.sys.volume = &now
	d.sys.mu.Unlock()
	if changed {
		d.refresh(haentities.AudioStates(d.eng.currentRules().Settings, level, muted, d.clock.Now())...)
	}
}

// runPads publishes the game pads and a connected/disconnected event for
// each change.
func (d *Daemon) runPads(ctx context.Context) error {
	if d.sys.pads == nil {
		<-ctx.Done()
		return nil
	}
	tick, tc := d.clock.NewTicker(padsPoll)
	defer tick.Stop()
	for {
		d.readPads()
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		}
	}
}

func (d *Daemon) readPads() {
	if !d.eng.currentRules().Settings.Has.Controllers { // gone since the start
		return
	}
	pads, err := d.sys.pads.Scan()
	if err != nil {
		d.log.Debug().Err(err).Msg("game pads not read")
		return
	}
	d.sys.mu.Lock()
	before, known := d.sys.padSet, d.sys.known
	d.sys.padSet, d.sys.known = pads, true
	d.sys.mu.Unlock()
	if known && reflect.DeepEqual(before, pads) {
		return
	}
	settings, now := d.eng.currentRules().Settings, d.clock.Now()
	shown := make([]haentities.Pad, len(pads))
	for i, p := range pads {
		shown[i] = haentities.Pad{Name: p.Name, Battery: p.Battery}
	}
	msgs := haentities.ControllerStates(settings, shown, now)
	if known { // the pads present at start are no news
		on, off := controllers.Changes(before, pads)
		for _, p := range off {
			msgs = append(msgs, haentities.ControllerEvent(settings, haentities.ControllerDisconnected, p.Name, now))
			d.log.Info().Str("pad", p.Name).Msg("game pad disconnected")
		}
		for _, p := range on {
			msgs = append(msgs, haentities.ControllerEvent(settings, haentities.ControllerConnected, p.Name, now))
			d.log.Info().Str("pad", p.Name).Msg("game pad connected")
		}
	}
	d.publish(msgs...)
}

// runUpdate publishes the installed Batocera version at once and the
// latest one from Batocera's own update check: first updateFirst after
// start, then every updateEvery, never while a game runs.
func (d *Daemon) runUpdate(ctx context.Context) error {
	if d.sys.update == nil || !d.eng.currentRules().Settings.Has.Update {
		<-ctx.Done()
		return nil
	}
	latest := ""
	d.refresh(haentities.UpdateState(d.eng.currentRules().Settings, latest, d.clock.Now()))
	wait := updateFirst
	for {
		t, tc := d.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-tc:
		}
		if d.eng.snapshot().Playing {
			wait = launchQuiet
			continue
		}
		if !d.eng.currentRules().Settings.Has.Update {
			wait = updateEvery
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		res, err := d.sys.update.Check(cctx)
		cancel()
		v := res.Latest
		if err != nil {
			d.log.Info().Err(err).Msg("Batocera's update check failed; trying again in an hour")
			wait = updateRetry
			continue
		}
		if v != latest {
			latest = v
			d.refresh(haentities.UpdateState(d.eng.currentRules().Settings, latest, d.clock.Now()))
		}
		wait = updateEvery
	}
}
