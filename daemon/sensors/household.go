package sensors

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// HouseholdControl carries out a parent's commands from Home Assistant: the play-time rules
// (daemon/household). by names who asked, for the rules' own log (HouseholdBy).
type HouseholdControl interface {
	SetEnabled(ctx context.Context, on bool, by string) error
	SetTodayLimit(ctx context.Context, minutes int, by string) error
	Grant(ctx context.Context, minutes int, by string) error
	Pause(ctx context.Context, on bool, by string) error
	// SetPlayer chooses the profile playing from the next game ("" none).
	SetPlayer(ctx context.Context, name, by string) error
	// SetUIMode changes EmulationStation's UI mode (in the background: ES restarts).
	SetUIMode(ctx context.Context, mode, by string) error
	// DenyTime answers the player's request for more time with no.
	DenyTime(ctx context.Context, by string) error
}

// HouseholdBy is who a household command from Home Assistant comes from.
const HouseholdBy = "home_assistant"

// householdCall is one well-formed household command, ready to run.
type householdCall func(ctx context.Context, h HouseholdControl) error

// onHousehold carries out a household control (cabinet.ha.household): the limits and pause_play
// switches, the daily_limit number and the extra-time buttons. A press the broker redelivers
// (dup) is ignored: it may be one the daemon already carried out, and extra time must not be
// granted twice. A switch or the number set again is harmless, so their dup is not heeded.
func (c *Controls) onHousehold(log zerolog.Logger, settings haentities.Settings, entity string, payload []byte, dup bool) {
	// The player select comes with the limits too (what a parent reads); the controls need
	// cabinet.ha.household.
	if !settings.Household && !(entity == haentities.Player && settings.LimitsOn) {
		log.Warn().Msg("HA command ignored: cabinet.ha.household is off")
		return
	}
	call, err := parseHousehold(settings, entity, payload)
	if err != nil {
		log.Warn().Str("reason", err.Error()).Int("bytes", len(payload)).Msg("HA command ignored")
		return
	}
	if dup && haentities.ExtraTimeMinutes(entity) > 0 {
		log.Debug().Str("entity", entity).Msg("HA command ignored: a redelivered press (MQTT DUP) would grant the time twice")
		return
	}
	if c.Household == nil {
		log.Warn().Msg("HA command ignored: the household rules are not ready")
		return
	}
	ctx, cancel := context.WithTimeout(c.Ctx, controlTimeout)
	defer cancel()
	if err := call(ctx, c.Household); err != nil {
		log.Warn().Str("entity", entity).Str("reason", untrusted.Clean(err.Error(), maxLoggedRunes)).Msg("HA household command refused")
		return
	}
	log.Info().Str("entity", entity).Str("value", quoteShort(payload)).Msg("HA household control")
}

// parseHousehold reads a household command: ON/OFF for the switches, whole minutes from 0 to
// haentities.MaxDailyLimit for the daily limit, PRESS for the extra-time buttons.
func parseHousehold(settings haentities.Settings, entity string, payload []byte) (householdCall, error) {
	switch entity {
	case haentities.UIMode:
		mode, err := haentities.ParseUIMode(payload)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, h HouseholdControl) error { return h.SetUIMode(ctx, mode, HouseholdBy) }, nil
	case haentities.DenyTime:
		if err := haentities.ParsePress(payload); err != nil {
			return nil, err
		}
		return func(ctx context.Context, h HouseholdControl) error { return h.DenyTime(ctx, HouseholdBy) }, nil
	case haentities.Player:
		name, err := haentities.ParsePlayer(settings, payload)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, h HouseholdControl) error { return h.SetPlayer(ctx, name, HouseholdBy) }, nil
	case haentities.Limits, haentities.PausePlay:
		on, err := haentities.ParseSwitch(payload)
		if err != nil {
			return nil, err
		}
		if entity == haentities.Limits {
			return func(ctx context.Context, h HouseholdControl) error { return h.SetEnabled(ctx, on, HouseholdBy) }, nil
		}
		return func(ctx context.Context, h HouseholdControl) error { return h.Pause(ctx, on, HouseholdBy) }, nil
	case haentities.DailyLimit:
		minutes, err := haentities.ParseLimitMinutes(payload)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, h HouseholdControl) error { return h.SetTodayLimit(ctx, minutes, HouseholdBy) }, nil
	}
	minutes := haentities.ExtraTimeMinutes(entity)
	if minutes == 0 {
		return nil, errors.New("not a household control of this cabinet")
	}
	if err := haentities.ParsePress(payload); err != nil {
		return nil, err
	}
	return func(ctx context.Context, h HouseholdControl) error { return h.Grant(ctx, minutes, HouseholdBy) }, nil
}
