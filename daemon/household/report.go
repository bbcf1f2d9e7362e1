package household

import (
	"math"
	"time"
)

// Report is the rules and today's budget as MCP tools and `cabinet doctor`
// show them (JSON, snake_case; null where nothing applies).
type Report struct {
	Enabled bool   `json:"enabled"`
	State   State  `json:"state"`
	Day     string `json:"day"`
	Weekday string `json:"weekday"`
	// ClockTrusted says the wall clock is set (NTP or a clock chip): without
	// it, today is the last day the cabinet knew and bedtime waits.
	ClockTrusted bool `json:"clock_trusted"`
	LimitMinutes *int `json:"limit_minutes"`
	BonusMinutes int  `json:"bonus_minutes"`
	UsedMinutes  int  `json:"used_minutes"`
	LeftMinutes  *int `json:"left_minutes"`
	// SessionLeftMinutes is the running game's time by session_minutes.
	SessionLeftMinutes *int    `json:"session_left_minutes"`
	Bedtime            *string `json:"bedtime"`
	InBedtime          bool    `json:"in_bedtime"`
	Paused             bool    `json:"paused"`
	// LaunchRefused says why a game started now would be ended right away.
	LaunchRefused *string `json:"launch_refused"`
	// NextPlay is when play is possible again (RFC 3339), when known.
	NextPlay *string     `json:"next_play"`
	Rules    RulesReport `json:"rules"`
	// Profile is whose time and rules these are (the running game's player, else Player); null:
	// the cabinet's own. Player is the player chosen now (null: none); Profiles the household's.
	Profile  *string  `json:"profile"`
	Player   *string  `json:"player"`
	Profiles []string `json:"profiles"`
	// UIMode is EmulationStation's UI mode (Full, Kiosk, Kid), which the daemon reads; null: unknown.
	UIMode *string `json:"ui_mode"`
}

// RulesReport is the rules in force.
type RulesReport struct {
	DailyMinutes    *int            `json:"daily_minutes"`
	WeekdayMinutes  map[string]*int `json:"weekday_minutes"`
	SessionMinutes  *int            `json:"session_minutes"`
	Bedtime         *string         `json:"bedtime"`
	WarnAt          []int           `json:"warn_at"`
	AtLimit         AtLimit         `json:"at_limit"`
	MinStartMinutes int             `json:"min_start_minutes"`
}

// NewReport reports the rules and a status.
func NewReport(all Rules, st Status, loc *time.Location) Report {
	r := all.For(st.Profile)
	opt := func(n int) *int {
		if n < 0 {
			return nil
		}
		return &n
	}
	mins := func(d time.Duration) *int {
		if d < 0 {
			return nil
		}
		n := int(math.Ceil(d.Minutes() - 1e-9))
		return &n
	}
	rep := Report{Enabled: r.Enabled, State: st.State, Day: st.Day, Weekday: st.Weekday.String(), ClockTrusted: st.ClockTrusted,
		LimitMinutes: opt(st.Limit), BonusMinutes: st.Bonus, UsedMinutes: int(st.Used / time.Minute),
		LeftMinutes: mins(st.Left), SessionLeftMinutes: mins(st.SessionLeft), InBedtime: st.InBedtime, Paused: st.Paused,
		Rules: RulesReport{DailyMinutes: opt(r.Daily), WeekdayMinutes: map[string]*int{}, WarnAt: append([]int{}, r.WarnAt...),
			AtLimit: r.AtLimit, MinStartMinutes: r.MinStart}}
	if r.Session > 0 {
		rep.Rules.SessionMinutes = &r.Session
	}
	for d, n := range r.Weekday {
		rep.Rules.WeekdayMinutes[weekdayKeys[d]] = opt(n)
	}
	if r.Bedtime != nil {
		b := r.Bedtime.String()
		rep.Bedtime, rep.Rules.Bedtime = &b, &b
	}
	if st.Refusal != "" {
		rep.LaunchRefused = &st.Refusal
	}
	rep.Profiles = all.ProfileNames()
	if st.Profile != "" {
		rep.Profile = &st.Profile
	}
	if st.Player != "" {
		rep.Player = &st.Player
	}
	if !st.NextPlay.IsZero() {
		t := st.NextPlay.In(loc).Format(time.RFC3339)
		rep.NextPlay = &t
	}
	return rep
}
