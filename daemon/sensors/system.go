package sensors

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/osupdate"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// The cabinet's own state beside play tracking: the system volume, the game pads and
// Batocera's update, each read from the cabinet's own tools and kernel files, gently, and
// published only when it changes.
const (
	// VolumePoll notices the volume changed on the cabinet itself (ES's slider, a hotkey):
	// batocera-audio is a small script, run every 10 s.
	VolumePoll = 10 * time.Second
	// LaunchQuiet keeps batocera-audio from running while a game starts: the launch owns the
	// audio device then, and should not wait for us.
	LaunchQuiet = 20 * time.Second
	// PadsPoll reads /proc/bus/input/devices (a few KiB from the kernel).
	PadsPoll = 5 * time.Second
	// UpdateFirst and UpdateEvery pace Batocera's update check: never at boot (games start
	// then), at most every 12 h, never during a game.
	UpdateFirst = 10 * time.Minute
	UpdateEvery = 12 * time.Hour
	UpdateRetry = time.Hour
)

// VolumeControl is batocera-audio as the sensors use it (*sysaudio.Audio).
type VolumeControl interface {
	Get(ctx context.Context) (sysaudio.State, error)
	SetLevel(ctx context.Context, level int) error
	SetMute(ctx context.Context, muted bool) error
}

// PadScanner lists the game pads (controllers.Scanner).
type PadScanner interface {
	Scan() ([]controllers.Pad, error)
}

// UpdateChecker asks Batocera which version it publishes for this cabinet (*osupdate.Checker).
type UpdateChecker interface {
	Check(ctx context.Context) (osupdate.Result, error)
}

// System publishes the volume and mute, the game pads and the OS update. A nil source is one
// the cabinet lacks (its entities are not announced either); its loop only waits.
type System struct {
	Host   Host
	Clock  clock.Clock
	Log    zerolog.Logger
	Audio  VolumeControl
	Pads   PadScanner
	Update UpdateChecker
	// PadsChanged, when set, is told the pads present at the first reading and after every change
	// (the household chooses the player by the pad picked up).
	PadsChanged func([]controllers.Pad)

	mu     sync.Mutex
	volume *audioState // last published; nil before the first reading
	padSet []controllers.Pad
	known  bool // padSet has been read once
}

type audioState struct {
	level int
	muted bool
}

// launching reports whether a game started less than LaunchQuiet ago.
func (s *System) launching() bool {
	snap := s.Host.Snapshot()
	return snap.Playing && s.Clock.Now().Sub(snap.Current.Started) < LaunchQuiet
}

// RunVolume publishes the volume and mute states at start and whenever they change on the
// cabinet.
func (s *System) RunVolume(ctx context.Context) error {
	if s.Audio == nil {
		<-ctx.Done()
		return nil
	}
	tick, tc := s.Clock.NewTicker(VolumePoll)
	defer tick.Stop()
	for {
		if !s.launching() {
			s.readVolume(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		}
	}
}

// readVolume reads batocera-audio and publishes what changed.
func (s *System) readVolume(ctx context.Context) {
	if !s.Host.Rules().Settings.Has.Audio { // gone since the start
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := s.Audio.Get(ctx)
	if err != nil {
		s.Log.Debug().Err(err).Msg("volume not read")
		return
	}
	s.mu.Lock()
	now := audioState{st.Level, st.Muted}
	changed := s.volume == nil || *s.volume != now
	s.volume = &now
	s.mu.Unlock()
	if changed {
		s.Host.Refresh(haentities.AudioStates(s.Host.Rules().Settings, st.Level, st.Muted, s.Clock.Now())...)
	}
}

// SetVolume carries out Home Assistant's volume slider and mute switch (entity Volume or Mute)
// through batocera-audio, then publishes what the cabinet now says (so a refused or clamped
// value shows as it really is). log carries the command's context.
func (s *System) SetVolume(ctx context.Context, log zerolog.Logger, entity string, payload []byte) {
	if s.Audio == nil {
		log.Warn().Msg("HA command ignored: this cabinet has no batocera-audio")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	var err error
	switch entity {
	case haentities.Volume:
		var level int
		if level, err = ParseVolume(payload); err == nil {
			err = s.Audio.SetLevel(ctx, level)
		}
	case haentities.Mute:
		var muted bool
		if muted, err = ParseSwitch(payload); err == nil {
			err = s.Audio.SetMute(ctx, muted)
		}
	}
	if err != nil {
		log.Warn().Str("reason", err.Error()).Int("bytes", len(payload)).Msg("HA command refused")
	} else {
		log.Info().Str("entity", entity).Str("value", quoteShort(payload)).Msg("HA control")
	}
	s.readVolume(ctx)
}

// ParseVolume reads the number HA sends ("65", or "65.0" from a float slider): 0–100, rounded
// to a whole percent.
func ParseVolume(payload []byte) (int, error) {
	v := strings.TrimSpace(string(payload))
	if len(v) == 0 || len(v) > 16 {
		return 0, fmt.Errorf("a volume must be a number from 0 to 100")
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("a volume must be a number from 0 to 100")
	}
	return int(math.Round(f)), nil
}

// ParseSwitch reads a switch command: exactly ON or OFF.
func ParseSwitch(payload []byte) (bool, error) { return haentities.ParseSwitch(payload) }

// quoteShort is a command's payload for a log line: quoted, at most 16 bytes.
func quoteShort(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return strconv.Quote(string(b))
}

// RunPads publishes the game pads and a connected/disconnected event for each change.
func (s *System) RunPads(ctx context.Context) error {
	if s.Pads == nil {
		<-ctx.Done()
		return nil
	}
	tick, tc := s.Clock.NewTicker(PadsPoll)
	defer tick.Stop()
	for {
		s.readPads()
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		}
	}
}

func (s *System) readPads() {
	if !s.Host.Rules().Settings.Has.Controllers { // gone since the start
		return
	}
	pads, err := s.Pads.Scan()
	if err != nil {
		s.Log.Debug().Err(err).Msg("game pads not read")
		return
	}
	s.mu.Lock()
	before, known := s.padSet, s.known
	s.padSet, s.known = pads, true
	s.mu.Unlock()
	if known && reflect.DeepEqual(before, pads) {
		return
	}
	if s.PadsChanged != nil {
		s.PadsChanged(pads)
	}
	settings, now := s.Host.Rules().Settings, s.Clock.Now()
	shown := make([]haentities.Pad, len(pads))
	for i, p := range pads {
		shown[i] = haentities.Pad{Name: p.Name, Battery: p.Battery}
	}
	msgs := haentities.ControllerStates(settings, shown, now)
	if known { // the pads present at start are no news
		on, off := controllers.Changes(before, pads)
		for _, p := range off {
			msgs = append(msgs, haentities.ControllerEvent(settings, haentities.ControllerDisconnected, p.Name, now))
			s.Log.Info().Str("pad", p.Name).Msg("game pad disconnected")
		}
		for _, p := range on {
			msgs = append(msgs, haentities.ControllerEvent(settings, haentities.ControllerConnected, p.Name, now))
			s.Log.Info().Str("pad", p.Name).Msg("game pad connected")
		}
	}
	s.Host.Publish(msgs...)
}

// RunUpdate publishes the installed Batocera version at once and the latest one from Batocera's
// own update check: first UpdateFirst after start, then every UpdateEvery, never while a game
// runs.
func (s *System) RunUpdate(ctx context.Context) error {
	if s.Update == nil || !s.Host.Rules().Settings.Has.Update {
		<-ctx.Done()
		return nil
	}
	latest := ""
	s.Host.Refresh(haentities.UpdateState(s.Host.Rules().Settings, latest, s.Clock.Now()))
	wait := UpdateFirst
	for {
		t, tc := s.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-tc:
		}
		if s.Host.Snapshot().Playing {
			wait = LaunchQuiet
			continue
		}
		if !s.Host.Rules().Settings.Has.Update {
			wait = UpdateEvery
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		res, err := s.Update.Check(cctx)
		cancel()
		if err != nil {
			s.Log.Info().Err(err).Msg("Batocera's update check failed; trying again in an hour")
			wait = UpdateRetry
			continue
		}
		if res.Latest != latest {
			latest = res.Latest
			s.Host.Refresh(haentities.UpdateState(s.Host.Rules().Settings, latest, s.Clock.Now()))
		}
		wait = UpdateEvery
	}
}
