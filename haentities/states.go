package haentities

import (
	"math"
	"path"
	"strconv"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Explicit "nothing" values: an empty retained payload would delete the topic on the broker.
const (
	IdleState = "Idle" // now_playing when no game runs
	NoneState = "None" // HA reads it as "unknown" (system when idle, last session before the first)
	OnState   = "ON"
	OffState  = "OFF"
	Online    = "online"
	Offline   = "offline"
)

// Session is a play session as published and as kept in the session history. A session that has not
// ended has a zero Ended and Duration.
type Session struct {
	ID         string `json:"id"`
	Game       string `json:"game"`
	System     string `json:"sys,omitempty"`  // short system name (roms folder), e.g. "nes"
	SystemName string `json:"sysn,omitempty"` // full name from ES, e.g. "Nintendo Entertainment System"
	Rom        string `json:"rom,omitempty"`  // ROM path
	Emulator   string `json:"emu,omitempty"`
	Core       string `json:"core,omitempty"`
	Source     string `json:"src,omitempty"` // source that reported the start first: es, configgen, watcher, mcp, ha
	// Profile is the household's player who launched it ("" none: the cabinet's).
	Profile  string        `json:"prof,omitempty"`
	Started  time.Time     `json:"start"`
	Ended    time.Time     `json:"end,omitzero"`
	Duration time.Duration `json:"dur,omitempty"`
	// EndBoot and BootID are the end on the boot clock, so a day's play
	// can be placed after the wall clock jumps (NTP on a box without a
	// clock chip); zero for a session that has not ended.
	EndBoot time.Duration `json:"eb,omitempty"`
	BootID  string        `json:"bid,omitempty"`
	// Details are ES's metadata, from the store's game cache when the
	// session is published (hooks cannot ask ES).
	Details GameDetails `json:"det,omitzero"`
	// Achievements are the RetroAchievements the session unlocked, oldest first: the first
	// MaxSessionAchievements of AchievementCount (see AddAchievement).
	Achievements     []Achievement `json:"ach,omitempty"`
	AchievementCount int           `json:"achn,omitempty"`
}

// GameDetails is what ES's game list says of a game beyond its name:
// scraped text (untrusted, cleaned when published). Year is 0 when
// unknown.
type GameDetails struct {
	Genre     string `json:"g,omitempty"`
	Players   string `json:"pl,omitempty"`
	Developer string `json:"dev,omitempty"`
	Publisher string `json:"pub,omitempty"`
	Year      int    `json:"y,omitempty"`
	Region    string `json:"r,omitempty"`
}

// Snapshot is everything the retained states show at one moment.
type Snapshot struct {
	Online   bool
	Activity string // one of the Activity* constants
	Playing  bool
	Current  Session // the running game when Playing (Ended is zero)
	// CurrentBoot and CurrentBootID are the running game's start on the
	// boot clock; CurrentIgnored says it is a screensaver launch, shown
	// but never logged.
	CurrentBoot     time.Duration
	CurrentBootID   string
	CurrentIgnored  bool
	Screensaver     bool
	ScreensaverType string // dim, black, random video, slideshow, suspend; "" when unknown
	Sleeping        bool
	Last            Session // the last logged session; ID "" before the first
	PlayTime        time.Duration
	// LastAchievement is the latest unlock; zero At before the first.
	LastAchievement Achievement
}

type nowPlayingAttrs struct {
	System  string `json:"system,omitempty"`
	Rom     string `json:"rom,omitempty"`
	Started string `json:"started,omitempty"`
	Source  string `json:"source,omitempty"`
	gameAttrs
}

type lastSessionAttrs struct {
	System    string `json:"system"`
	Rom       string `json:"rom"`
	Started   string `json:"started"`
	Ended     string `json:"ended"`
	DurationS int64  `json:"duration_s"`
	SessionID string `json:"session_id"`
	gameAttrs
	sessionAchievements
}

// gameAttrs are the game's metadata and how it runs, as now_playing, the
// last session and the session events carry them: absent when unknown
// (HA's state_attr then gives none), never an empty string.
type gameAttrs struct {
	Genre     string `json:"genre,omitempty"`
	Players   string `json:"players,omitempty"`
	Developer string `json:"developer,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	Year      int    `json:"year,omitempty"`
	Region    string `json:"region,omitempty"`
	Emulator  string `json:"emulator,omitempty"`
	Core      string `json:"core,omitempty"`
}

// maxDetailRunes caps each metadata attribute: a scraper's genre list or
// publisher is a few words, and the whole now_playing attributes must stay
// far below the recorder's 16 KiB.
const maxDetailRunes = 80

func newGameAttrs(sess Session) gameAttrs {
	d := sess.Details
	c := func(v string) string { return untrusted.Clean(v, maxDetailRunes) }
	a := gameAttrs{Genre: c(d.Genre), Players: c(d.Players), Developer: c(d.Developer), Publisher: c(d.Publisher),
		Region: c(d.Region), Emulator: c(sess.Emulator), Core: c(sess.Core)}
	if d.Year >= 1950 && d.Year <= 9999 {
		a.Year = d.Year
	}
	return a
}

type screensaverAttrs struct {
	Type string `json:"type,omitempty"`
}

// States builds every retained state and attributes payload of the snapshot, then the availability
// message (last, so HA shows the entities available with their new states). All are retained, QoS 1
// and never empty.
func States(s Settings, snap Snapshot, at time.Time) []Message {
	st := func(entity, v string) Message {
		return retained(s.StateTopic(entity), []byte(v), KindState, at)
	}
	attrs := func(entity string, v any) Message {
		return retained(s.AttributesTopic(entity), marshal(v), KindState, at)
	}
	now, system, nowAttrs := IdleState, NoneState, nowPlayingAttrs{}
	if snap.Playing {
		c := snap.Current
		now = gameName(c)
		system = systemName(c)
		nowAttrs = nowPlayingAttrs{System: clean(c.System), Rom: cleanAttr(c.Rom), Started: formatTime(c.Started), Source: clean(c.Source),
			gameAttrs: newGameAttrs(c)}
	}
	last, length := NoneState, NoneState
	var lastAttrs any = struct{}{}
	if l := snap.Last; l.ID != "" {
		last = gameName(l)
		length = minutes(l.Duration)
		lastAttrs = lastSessionAttrs{System: clean(l.System), Rom: cleanAttr(l.Rom), Started: formatTime(l.Started),
			Ended: formatTime(l.Ended), DurationS: seconds(l.Duration), SessionID: l.ID, gameAttrs: newGameAttrs(l),
			sessionAchievements: newSessionAchievements(l)}
	}
	ssAttrs := screensaverAttrs{}
	if snap.Screensaver {
		ssAttrs.Type = clean(snap.ScreensaverType)
	}
	activity := snap.Activity
	if activity == "" {
		activity = ActivityOff
	}
	msgs := []Message{
		st(NowPlaying, now),
		attrs(NowPlaying, nowAttrs),
		st(Playing, onOff(snap.Playing)),
		st(NowPlayingSystem, system),
		st(LastSession, last),
		attrs(LastSession, lastAttrs),
		st(LastSessionLength, length),
		st(PlayTime, strconv.FormatInt(seconds(snap.PlayTime), 10)),
		st(Screensaver, onOff(snap.Screensaver)),
		attrs(Screensaver, ssAttrs),
		st(Activity, activity),
	}
	if s.Achievements {
		msgs = append(msgs, lastAchievementStates(s, snap.LastAchievement, at)...)
	}
	return append(msgs, Availability(s, snap.Online, at))
}

// Availability is the retained online/offline message of <base>/<id>/status.
func Availability(s Settings, online bool, at time.Time) Message {
	v := Offline
	if online {
		v = Online
	}
	return retained(s.AvailabilityTopic(), []byte(v), KindAvailability, at)
}

// gameName is the cleaned display name of a session's game: its name, else its ROM file name, never
// empty.
func gameName(sess Session) string {
	if n := clean(sess.Game); n != "" {
		return n
	}
	if sess.Rom != "" {
		if n := clean(path.Base(sess.Rom)); n != "" && n != "." && n != "/" {
			return n
		}
	}
	return "Unknown game"
}

// systemName is the full system name when ES gave one, else the short one, else None.
func systemName(sess Session) string {
	if n := clean(sess.SystemName); n != "" {
		return n
	}
	if n := clean(sess.System); n != "" {
		return n
	}
	return NoneState
}

func clean(v string) string     { return untrusted.Clean(v, MaxStateRunes) }
func cleanAttr(v string) string { return untrusted.Clean(v, maxAttributeRunes) }

func onOff(b bool) string {
	if b {
		return OnState
	}
	return OffState
}

// minutes is a duration in minutes with at most one decimal ("12.5").
func minutes(d time.Duration) string {
	return strconv.FormatFloat(math.Round(d.Minutes()*10)/10, 'f', -1, 64)
}

// seconds is a whole number of seconds, never negative.
func seconds(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return int64(d / time.Second)
}

// GameLabel is the cleaned name a session's game is shown by (never empty).
func GameLabel(sess Session) string { return gameName(sess) }
