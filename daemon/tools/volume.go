package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Volume is what batocera_set_volume uses of batocera-audio
// (*sysaudio.Audio implements it): the system volume for every emulator.
type Volume interface {
	Get(ctx context.Context) (sysaudio.State, error)
	SetLevel(ctx context.Context, level int) error
	SetMute(ctx context.Context, muted bool) error
}

type setVolumeArgs struct {
	Level *int  `json:"level"`
	Mute  *bool `json:"mute"`
}

// VolumeResult is batocera_set_volume's answer: the action result and the
// volume the cabinet reports afterwards.
type VolumeResult struct {
	ActionResult
	Level int  `json:"level"`
	Mute  bool `json:"mute"`
}

// setVolumeTool is batocera_set_volume, registered when the cabinet has
// batocera-audio (Deps.Volume).
func setVolumeTool(v Volume, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_set_volume", "Set the system volume",
		"Set the cabinet's system volume (every emulator and EmulationStation, through Batocera's batocera-audio) "+
			"to a level from 0 to 100, and/or mute or unmute it. Give level, mute or both. The answer has the "+
			"volume the cabinet reports afterwards. For RetroArch's own volume step use batocera_adjust_volume.",
		writes, true,
		withInput(
			opt("level", integer("Volume in percent, 0 to 100.", minimum(0), maximum(sysaudio.MaxLevel))),
			opt("mute", boolean("true mutes, false unmutes; omitted leaves mute as it is."))),
		withOutput(actionProps(
			req("level", integer("The volume the cabinet reports now, in percent.")),
			req("mute", boolean("Whether the cabinet is muted now.")))...))
	return t, typed(func(ctx context.Context, a setVolumeArgs) (VolumeResult, error) {
		return setVolume(ctx, v, g, cabinet, a)
	})
}

func setVolume(ctx context.Context, v Volume, g *guard, cabinet string, a setVolumeArgs) (VolumeResult, error) {
	if a.Level == nil && a.Mute == nil {
		return VolumeResult{}, refuse("Give level (0 to 100), mute (true or false), or both.")
	}
	if a.Level != nil && (*a.Level < 0 || *a.Level > sysaudio.MaxLevel) {
		return VolumeResult{}, refuse("level must be from 0 to %d, got %d.", sysaudio.MaxLevel, *a.Level)
	}
	before, err := v.Get(ctx)
	if err != nil {
		return VolumeResult{}, audioFailure("read the volume", err)
	}
	var sent []string
	if a.Level != nil && *a.Level != before.Level {
		sent = append(sent, fmt.Sprintf("batocera-audio setSystemVolume %d", *a.Level))
	}
	if a.Mute != nil && *a.Mute != before.Muted {
		sent = append(sent, "batocera-audio setSystemVolume "+map[bool]string{true: "mute", false: "unmute"}[*a.Mute])
	}
	if len(sent) == 0 {
		r := actionResult(cabinet, outcomeUnchanged, volumeText("The volume already is", before), nil, nil)
		return VolumeResult{ActionResult: r, Level: before.Level, Mute: before.Muted}, nil
	}
	dry, err := g.run(ctx, action{what: "change the volume", budget: budgetControl, sent: sent,
		send: func(ctx context.Context) error {
			if a.Level != nil && *a.Level != before.Level {
				if err := v.SetLevel(ctx, *a.Level); err != nil {
					return audioFailure("set the volume", err)
				}
			}
			if a.Mute != nil && *a.Mute != before.Muted {
				if err := v.SetMute(ctx, *a.Mute); err != nil {
					return audioFailure("set mute", err)
				}
			}
			return nil
		}})
	if err != nil {
		return VolumeResult{}, err
	}
	if dry {
		want := before
		if a.Level != nil {
			want.Level = *a.Level
		}
		if a.Mute != nil {
			want.Muted = *a.Mute
		}
		r := actionResult(cabinet, outcomeDryRun, volumeText("Would set the volume to", want), sent, nil)
		return VolumeResult{ActionResult: r, Level: before.Level, Mute: before.Muted}, nil
	}
	after, err := v.Get(ctx)
	if err != nil {
		return VolumeResult{}, audioFailure("read the volume back", err)
	}
	var warnings []string
	if a.Level != nil && after.Level != *a.Level {
		warnings = append(warnings, fmt.Sprintf("The cabinet reports %d %%, not %d %%.", after.Level, *a.Level))
	}
	r := actionResult(cabinet, outcomeDone, volumeText("Set the volume to", after), sent, warnings)
	return VolumeResult{ActionResult: r, Level: after.Level, Mute: after.Muted}, nil
}

func volumeText(prefix string, s sysaudio.State) string {
	if s.Muted {
		return fmt.Sprintf("%s %d %%, muted.", prefix, s.Level)
	}
	return fmt.Sprintf("%s %d %%.", prefix, s.Level)
}

// audioFailure says what to do when batocera-audio fails.
func audioFailure(what string, err error) error {
	switch {
	case errors.Is(err, sysaudio.ErrNoAudio):
		return refuse("Could not %s: the cabinet's sound server is not running (batocera-audio answered nothing); "+
			"check the audio output in Batocera's menu.", what)
	case errors.Is(err, sysaudio.ErrUnsupported):
		return refuse("Could not %s: this Batocera's batocera-audio does not offer it.", what)
	}
	return refuse("Could not %s: %s", what, untrusted.Clean(err.Error(), maxErrorRunes))
}
