package haentities

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The payloads Home Assistant publishes on a command topic (<base>/<id>/<key>/set), read strictly:
// anything else is refused with an error that says what was expected.

// ParseSwitch reads a switch command: exactly ON or OFF (payload_on, payload_off).
func ParseSwitch(payload []byte) (bool, error) {
	switch string(payload) {
	case OnState:
		return true, nil
	case OffState:
		return false, nil
	}
	return false, fmt.Errorf("a switch payload must be %q or %q", OnState, OffState)
}

// ParsePress reads a button command: exactly PRESS (payload_press).
func ParsePress(payload []byte) error {
	if string(payload) != PayloadPress {
		return fmt.Errorf("a button payload must be %q", PayloadPress)
	}
	return nil
}

// errMinutes is the one error of ParseLimitMinutes: what a parent or a script must send instead.
var errMinutes = fmt.Errorf("a daily limit must be a whole number of minutes from 0 to %d", MaxDailyLimit)

// ParseLimitMinutes reads daily_limit's command: whole minutes from 0 to MaxDailyLimit, as HA sends
// them ("90", or "90.0" from a float). Signs other than a leading "-", exponents, hex, "inf" and
// "nan" are refused rather than read.
func ParseLimitMinutes(payload []byte) (int, error) {
	v := string(payload)
	if v == "" || len(v) > 24 || strings.Trim(v, "0123456789.-") != "" || strings.LastIndex(v, "-") > 0 {
		return 0, errMinutes
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, errMinutes
	}
	if f != math.Trunc(f) || f < 0 || f > MaxDailyLimit {
		return 0, errMinutes
	}
	return int(f), nil
}
