// Package household owns the household's play-time rules on the cabinet:
// the cabinet.household.* keys (Rules), the time played and granted each
// play day (Ledger, kept in the store), what the rules allow at a moment
// (Evaluate), and the Enforcer that warns the player over the game, saves
// and quits at the limit and ends launches that are not allowed.
//
// Time is counted on the boot clock and placed on the calendar by the same
// play-day rules as sensor.batocera_play_time_today (hook/playday): a wall
// clock is believed only when NTP or a plausible clock chip set it, so a
// clock that is wrong, jumps or is set back never resets a day or counts
// play twice. Everything here works with the network, the broker and Home
// Assistant down.
package household

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Prefix starts every key of the rules.
const Prefix = "cabinet.household."

// ProfilePrefix is reserved for rules per player:
// cabinet.household.profile.<name>.<rule>, where <rule> is one of the keys
// below without the prefix (minutes.daily, bedtime…), or pad (profiles.go).
const ProfilePrefix = Prefix + "profile."

// AtLimit is what happens when the time is up while a game runs.
type AtLimit string

// The at_limit values.
const (
	SaveQuit AtLimit = "save_quit" // save if the emulator can, then quit
	Quit     AtLimit = "quit"      // quit (unsaved progress is lost; the warnings say so)
	WarnOnly AtLimit = "warn_only" // keep warning; nothing is closed
)

// Bounds of the rules.
const (
	MaxMinutes      = 24 * 60 // a day's limit, a session's, a grant's
	MaxWarnPoints   = 6
	MaxWarnMinutes  = 120
	MaxStartMinutes = 60
)

// Window is a daily window in local wall time, in minutes after midnight;
// From > To crosses midnight (21:00-07:00).
type Window struct {
	From, To int
}

// String is the window as written in batocera.conf.
func (w Window) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.From/60, w.From%60, w.To/60, w.To%60)
}

// contains reports whether minute m of a day (0–1439) falls in the window.
func (w Window) contains(m int) bool {
	if w.From < w.To {
		return m >= w.From && m < w.To
	}
	return m >= w.From || m < w.To
}

// Rules are the household's rules (cabinet.household.*).
type Rules struct {
	Enabled bool
	// Daily is minutes.daily (-1: no daily limit); Weekday[time.Sunday…]
	// are minutes.sun… (-1: Daily applies).
	Daily   int
	Weekday [7]int
	// Session is session_minutes: the longest one game may run (0: none).
	Session int
	// Bedtime is the window in which no game runs (nil: none).
	Bedtime *Window
	// WarnAt are the warning points in minutes before the end, largest first.
	WarnAt  []int
	AtLimit AtLimit
	// MinStart is min_start_minutes: a launch needs at least this much time left.
	MinStart int
	// Profiles are the household's players, each with its own rules (profiles.go); nil in a
	// profile's own rules.
	Profiles []Profile
}

// Default are the rules with every key at its default: off.
func Default() Rules {
	r := Rules{Daily: -1, WarnAt: []int{15, 5, 1}, AtLimit: SaveQuit, MinStart: 1}
	for i := range r.Weekday {
		r.Weekday[i] = -1
	}
	return r
}

// DayLimit is the limit in minutes of a day of the week (-1: none).
func (r Rules) DayLimit(d time.Weekday) int {
	if v := r.Weekday[d]; v >= 0 {
		return v
	}
	return r.Daily
}

// weekdayKeys are the minutes.<day> suffixes, indexed by time.Weekday.
var weekdayKeys = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Key is one rule key: its name, default and what a valid value looks like.
type Key struct {
	Name, Default, Expect, Doc string
}

// Keys lists the rule keys (without the profile ones), in the order
// batocera.conf.d/cabinet.conf documents them.
func Keys() []Key {
	ks := []Key{
		{Prefix + "enabled", "0", "0 or 1", "Turn the play-time rules on."},
		{Prefix + "minutes.daily", "", "empty (no daily limit) or minutes from 0 to 1440", "Minutes of play a day."},
	}
	for _, d := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		ks = append(ks, Key{Prefix + "minutes." + weekdayKeys[d], "", "empty (minutes.daily applies) or minutes from 0 to 1440",
			"Minutes of play on " + d.String() + "s, instead of minutes.daily."})
	}
	return append(ks,
		Key{Prefix + "session_minutes", "", "empty (none) or minutes from 1 to 1440", "The longest one game may run."},
		Key{Prefix + "bedtime", "", "empty (none) or HH:MM-HH:MM, e.g. 21:00-07:00 (may cross midnight)", "No games in this window."},
		Key{Prefix + "warn_at", "15,5,1", "up to 6 minutes from 1 to 120, comma-separated, e.g. 15,5,1", "Warn the player this many minutes before the end."},
		Key{Prefix + "at_limit", string(SaveQuit), "save_quit, quit or warn_only", "What happens when the time is up while a game runs."},
		Key{Prefix + "min_start_minutes", "1", "minutes from 0 to 60", "A game starts only with at least this much time left."},
		Key{ProfilesKey, "", "empty or up to 8 names of a-z, 0-9 and _, comma-separated, e.g. alice,bob",
			"The household's players: each may have its own rules (cabinet.household.profile.<name>.<rule>) and game pad."},
	)
}

// ErrKey is wrapped by the refusal of a name that is not a rule key.
var ErrKey = errors.New("not a cabinet.household key")

// rule is the key name without the prefix (and without a profile part).
func rule(name string) (string, error) {
	r, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrKey, name)
	}
	if p, ok := strings.CutPrefix(r, "profile."); ok {
		prof, rest, ok := strings.Cut(p, ".")
		if !ok || !ProfileName(prof) {
			return "", fmt.Errorf("%w: %q: a profile key is cabinet.household.profile.<name>.<rule>, name of 1 to 32 of a-z, 0-9, _", ErrKey, name)
		}
		switch rest {
		case "enabled", "profiles":
			return "", fmt.Errorf("%w: %q: %s is for the whole household, not a profile", ErrKey, name, rest)
		case "pad":
			return "pad", nil
		}
		if why := reservedProfile(prof); why != "" {
			return "", fmt.Errorf("%w: %q: %s", ErrKey, name, why)
		}
		r = rest
	}
	if keyNames()[Prefix+r] {
		return r, nil
	}
	return "", fmt.Errorf("%w: %q", ErrKey, name)
}

// keyNames is the set of Keys' names, built once, at first use: the
// configuration checks every key on every hook's start.
var keyNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, k := range Keys() {
		names[k.Name] = true
	}
	return names
})

// ProfileName reports whether p can name a profile: 1 to 32 of [a-z0-9_].
func ProfileName(p string) bool {
	if p == "" || len(p) > 32 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// IsKey reports whether name is a rule key or a reserved profile key.
func IsKey(name string) bool {
	_, err := rule(name)
	return err == nil
}

// Check validates one key's value; the error says what is expected.
func Check(name, value string) error {
	r := Default()
	return r.set(name, value)
}

// Parse builds the rules from the keys' values (missing keys keep their
// defaults), and the profiles cabinet.household.profiles lists over them.
// Every invalid value is reported, and its default kept.
func Parse(values map[string]string) (Rules, []error) {
	r := Default()
	var errs []error
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if strings.HasPrefix(k, ProfilePrefix) {
			continue // over the cabinet's rules, below
		}
		if err := r.set(k, values[k]); err != nil {
			errs = append(errs, err)
		}
	}
	profiles, err := ParseProfiles(values[ProfilesKey])
	if err != nil {
		profiles = nil // already reported by set
	}
	return r, append(errs, applyProfiles(&r, values, profiles)...)
}

// set applies one key to r.
func (r *Rules) set(name, value string) error {
	ru, err := rule(name)
	if err != nil {
		return err
	}
	if len(value) > 256 {
		return fmt.Errorf("%s: the value is over 256 bytes", name)
	}
	v := strings.TrimSpace(value)
	bad := func() error {
		for _, k := range Keys() {
			if k.Name == Prefix+ru {
				return fmt.Errorf("%s=%q: want %s", name, clip(value), k.Expect)
			}
		}
		return fmt.Errorf("%s=%q is invalid", name, clip(value))
	}
	switch {
	case ru == "enabled":
		switch v {
		case "1", "true", "on", "yes":
			r.Enabled = true
		case "0", "false", "off", "no", "":
			r.Enabled = false
		default:
			return bad()
		}
	case ru == "minutes.daily":
		n, ok := minutes(v, 0, MaxMinutes, -1)
		if !ok {
			return bad()
		}
		r.Daily = n
	case strings.HasPrefix(ru, "minutes."):
		n, ok := minutes(v, 0, MaxMinutes, -1)
		if !ok {
			return bad()
		}
		r.Weekday[slices.Index(weekdayKeys[:], strings.TrimPrefix(ru, "minutes."))] = n
	case ru == "session_minutes":
		n, ok := minutes(v, 1, MaxMinutes, 0)
		if !ok {
			return bad()
		}
		r.Session = n
	case ru == "bedtime":
		if v == "" {
			r.Bedtime = nil
			return nil
		}
		w, ok := ParseWindow(v)
		if !ok {
			return bad()
		}
		r.Bedtime = &w
	case ru == "warn_at":
		pts, ok := parseWarnAt(v)
		if !ok {
			return bad()
		}
		r.WarnAt = pts
	case ru == "at_limit":
		switch a := AtLimit(v); a {
		case SaveQuit, Quit, WarnOnly:
			r.AtLimit = a
		case "":
			r.AtLimit = SaveQuit
		default:
			return bad()
		}
	case ru == "pad":
		if len(v) > 64 {
			return fmt.Errorf("%s: a pad's id is at most 64 characters", name)
		}
	case ru == "profiles":
		if _, err := ParseProfiles(v); err != nil {
			return err
		}
	case ru == "min_start_minutes":
		n, ok := minutes(v, 0, MaxStartMinutes, 1)
		if !ok {
			return bad()
		}
		r.MinStart = n
	default:
		return bad()
	}
	return nil
}

// minutes parses a whole number within [lo, hi]; "" is empty.
func minutes(v string, lo, hi, empty int) (int, bool) {
	if v == "" {
		return empty, true
	}
	if len(v) > 5 {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi || strings.HasPrefix(v, "+") {
		return 0, false
	}
	return n, true
}

// ParseWindow reads HH:MM-HH:MM (24-hour; the ends differ).
func ParseWindow(v string) (Window, bool) {
	a, b, ok := strings.Cut(v, "-")
	if !ok {
		return Window{}, false
	}
	from, ok1 := clockMinute(strings.TrimSpace(a))
	to, ok2 := clockMinute(strings.TrimSpace(b))
	if !ok1 || !ok2 || from == to {
		return Window{}, false
	}
	return Window{From: from, To: to}, true
}

// clockMinute reads HH:MM (H:MM too) as minutes after midnight.
func clockMinute(s string) (int, bool) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
		return 0, false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 || strings.ContainsAny(s, "+- ") {
		return 0, false
	}
	return hh*60 + mm, true
}

// parseWarnAt reads the warning points; they come back largest first,
// without repeats.
func parseWarnAt(v string) ([]int, bool) {
	if v == "" {
		return nil, true
	}
	parts := strings.Split(v, ",")
	if len(parts) > MaxWarnPoints {
		return nil, false
	}
	var pts []int
	for _, p := range parts {
		n, ok := minutes(strings.TrimSpace(p), 1, MaxWarnMinutes, -1)
		if !ok || n < 0 {
			return nil, false
		}
		if !slices.Contains(pts, n) {
			pts = append(pts, n)
		}
	}
	slices.SortFunc(pts, func(a, b int) int { return b - a })
	return pts, true
}

// Values are the rules as batocera.conf keys, the inverse of Parse (every
// key, defaults included).
func (r Rules) Values() map[string]string {
	v := map[string]string{Prefix + "enabled": "0"}
	if r.Enabled {
		v[Prefix+"enabled"] = "1"
	}
	num := func(n, empty int) string {
		if n == empty {
			return ""
		}
		return strconv.Itoa(n)
	}
	v[Prefix+"minutes.daily"] = num(r.Daily, -1)
	for d, n := range r.Weekday {
		v[Prefix+"minutes."+weekdayKeys[d]] = num(n, -1)
	}
	v[Prefix+"session_minutes"] = num(r.Session, 0)
	v[Prefix+"bedtime"] = ""
	if r.Bedtime != nil {
		v[Prefix+"bedtime"] = r.Bedtime.String()
	}
	pts := make([]string, len(r.WarnAt))
	for i, p := range r.WarnAt {
		pts[i] = strconv.Itoa(p)
	}
	v[Prefix+"warn_at"] = strings.Join(pts, ",")
	v[Prefix+"at_limit"] = string(r.AtLimit)
	v[Prefix+"min_start_minutes"] = strconv.Itoa(r.MinStart)
	v[ProfilesKey] = strings.Join(r.ProfileNames(), ",")
	return v
}

// clip shortens a value quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
