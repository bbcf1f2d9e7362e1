// Package sysaudio reads and sets the cabinet's system volume and mute
// through Batocera's batocera-audio, the script Batocera's own boot and
// shutdown scripts use for it (S27audioconfig applies audio.volume with
// "setSystemVolume N" at boot and saves "getSystemVolume" back into
// audio.volume at a clean shutdown, so a level set here survives a
// reboot; the mute state is not saved). EmulationStation's slider does
// not run it: built with ENABLE_PULSE, as Batocera builds it, ES sets
// the same default sink through libpulse, so both see the same level.
//
// batocera-audio wraps pactl (PipeWire's pulse server): getSystemVolume
// prints the default sink's volume in percent, getSystemMute prints "yes"
// or "no", and setSystemVolume takes mute, unmute, mute-toggle, N or ±N.
// When PipeWire is down the getters still exit 0 but print nothing (the
// pactl failure is lost in a pipe), so an empty answer is an error here,
// never a level of 0.
package sysaudio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

const (
	// DefaultBin is where Batocera installs batocera-audio.
	DefaultBin = "/usr/bin/batocera-audio"
	// DefaultTimeout bounds one call. Every call starts
	// batocera-settings-get and two pactl queries before it acts, a few
	// process starts; a hung PipeWire is what the deadline is for.
	DefaultTimeout = 3 * time.Second
	// MaxOutput bounds what one call may print; more is an error.
	MaxOutput = 4 << 10
	// MaxLevel is the highest level SetLevel accepts, Batocera's default
	// audio.volume.boost (batocera-audio refuses more unless it is raised).
	MaxLevel = 100
	// maxReported is the highest level Get believes: with
	// audio.volume.boost, PipeWire's volume may pass 100 %.
	maxReported = 1000
)

// Errors callers can test with errors.Is.
var (
	// ErrNoAudio: batocera-audio answered with nothing, which is what it
	// does when PipeWire is not running or has no default output.
	ErrNoAudio = errors.New("no audio output answered: PipeWire is not running or has no default output; " +
		"check the audio output in Batocera's sound settings, or restart the cabinet")
	// ErrUnsupported: this Batocera's batocera-audio does not know the
	// command (it printed its usage instead); getSystemMute is the newest.
	ErrUnsupported = errors.New("this Batocera's batocera-audio does not know the command; update Batocera")
	// ErrMalformed: the answer is not what batocera-audio prints.
	ErrMalformed = errors.New("unexpected output")
	// ErrMissing: there is no batocera-audio at the configured path.
	ErrMissing = errors.New("batocera-audio is missing: this cabinet has no volume control Cabinet can use")
	// ErrTimeout: batocera-audio did not end within the deadline.
	ErrTimeout = errors.New("no answer in time: PipeWire may be hung; restart the cabinet")
)

// State is the system volume as batocera-audio reports it.
type State struct {
	Level int  // percent of the default output; above 100 only with audio.volume.boost
	Muted bool // the default output is muted
}

// Audio is a client for one batocera-audio. Its zero value uses
// DefaultBin, DefaultTimeout and Exec. It holds no state, so one value
// may serve concurrent calls.
type Audio struct {
	Bin     string        // path of batocera-audio; "" is DefaultBin
	Timeout time.Duration // bound of each call; 0 is DefaultTimeout
	// Run runs a command and returns its stdout; a non-zero exit is an
	// error with an ExitCode() int method (see ExitError). nil is Exec.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Available reports whether batocera-audio exists and is executable: a
// cabinet without it gets no volume entities.
func (a *Audio) Available() bool {
	fi, err := os.Stat(a.bin())
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// Get is the volume level and the mute state, from two calls.
func (a *Audio) Get(ctx context.Context) (State, error) {
	level, err := a.Level(ctx)
	if err != nil {
		return State{}, err
	}
	muted, err := a.Muted(ctx)
	if err != nil {
		return State{}, err
	}
	return State{Level: level, Muted: muted}, nil
}

// Level is the default output's volume in percent (getSystemVolume).
func (a *Audio) Level(ctx context.Context) (int, error) {
	out, err := a.run(ctx, "getSystemVolume")
	if err != nil {
		return 0, err
	}
	level, err := parseLevel(out)
	if err != nil {
		return 0, fmt.Errorf("%s getSystemVolume: %w", a.bin(), err)
	}
	return level, nil
}

// Muted reports whether the default output is muted (getSystemMute, which
// older Batocera lacks: ErrUnsupported, while Level still works).
func (a *Audio) Muted(ctx context.Context) (bool, error) {
	out, err := a.run(ctx, "getSystemMute")
	if err != nil {
		return false, err
	}
	muted, err := parseMute(out)
	if err != nil {
		return false, fmt.Errorf("%s getSystemMute: %w", a.bin(), err)
	}
	return muted, nil
}

// SetLevel sets the default output's volume to level percent, 0 to
// MaxLevel. It leaves the mute state alone, as batocera-audio does.
func (a *Audio) SetLevel(ctx context.Context, level int) error {
	if level < 0 || level > MaxLevel {
		return fmt.Errorf("set volume to %d: the level must be 0 to %d", level, MaxLevel)
	}
	_, err := a.run(ctx, "setSystemVolume", strconv.Itoa(level))
	return err
}

// SetMute mutes or unmutes the default output (setSystemVolume mute or
// unmute; batocera-audio also has mute-toggle, which a client that knows
// the state it wants does not need).
func (a *Audio) SetMute(ctx context.Context, muted bool) error {
	arg := "unmute"
	if muted {
		arg = "mute"
	}
	_, err := a.run(ctx, "setSystemVolume", arg)
	return err
}

func (a *Audio) bin() string {
	if a.Bin == "" {
		return DefaultBin
	}
	return a.Bin
}

// run runs batocera-audio with args within the timeout and returns its
// bounded stdout; every error names the command.
func (a *Audio) run(ctx context.Context, args ...string) ([]byte, error) {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	run := a.Run
	if run == nil {
		run = Exec
	}
	op := commandLine(a.bin(), args)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := run(ctx, a.bin(), args...)
	if err != nil {
		return nil, commandError(ctx, op, timeout, err)
	}
	if len(out) > MaxOutput {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", op, ErrMalformed, MaxOutput)
	}
	return out, nil
}
