package daemon

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// onVolume carries out Home Assistant's volume slider and mute switch
// through batocera-audio, then publishes what the cabinet now says (so a
// refused or clamped value shows as it really is).
func (d *Daemon) onVolume(log zerolog.Logger, entity string, payload []byte) {
	if d.sys.audio == nil {
		log.Warn().Msg("HA command ignored: this cabinet has no batocera-audio")
		return
	}
	ctx, cancel := context.WithTimeout(d.runCtx, controlTimeout)
	defer cancel()
	var err error
	switch entity {
	case haentities.Volume:
		var level int
		if level, err = parseVolume(payload); err == nil {
			err = d.sys.audio.SetLevel(ctx, level)
		}
	case haentities.Mute:
		var muted bool
		if muted, err = parseSwitch(payload); err == nil {
			err = d.sys.audio.SetMute(ctx, muted)
		}
	}
	if err != nil {
		log.Warn().Str("reason", err.Error()).Int("bytes", len(payload)).Msg("HA command refused")
	} else {
		log.Info().Str("entity", entity).Str("value", untrustedShort(payload)).Msg("HA control")
	}
	d.readVolume(ctx)
}

// parseVolume reads the number HA sends ("65", or "65.0" from a float
// slider): 0–100, rounded to a whole percent.
func parseVolume(payload []byte) (int, error) {
	s := strings.TrimSpace(string(payload))
	if len(s) == 0 || len(s) > 16 {
		return 0, fmt.Errorf("a volume must be a number from 0 to 100")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("a volume must be a number from 0 to 100")
	}
	return int(math.Round(f)), nil
}

// parseSwitch reads a switch command: exactly ON or OFF.
func parseSwitch(payload []byte) (bool, error) {
	switch string(payload) {
	case haentities.OnState:
		return true, nil
	case haentities.OffState:
		return false, nil
	}
	return false, fmt.Errorf("a switch payload must be %q or %q", haentities.OnState, haentities.OffState)
}

func untrustedShort(b []byte) string {
	if len(b) > 16 {
		b = b[:16]
	}
	return strconv.Quote(string(b))
}
