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
	ID         string        `json:"id"`
	Game       string        `json:"game"`
	System     string        `json:"sys,omitempty"`  // short system name (roms folder), e.g. "nes"
	SystemName string        `json:"sysn,omitempty"` // full name from ES, e.g. "Nintendo Entertainment System"
	Rom        string        `json:"rom,omitempty"`  // ROM path
	Emulator   string        `json:"emu,omitempty"`
	Core       string        `json:"core,omitempty"`
	Source     string        `json:"src,omitempty"` // source that reported the start first: es, configgen, watcher, mcp, ha
	Started    time.Time     `json:"start"`
	Ended      time.Time     `json:"end,omitzero"`
	Duration   time.Duration `json:"dur,omitempty"`
}

// Snapshot is everything the retained states show at one moment.
type Snapshot struct {
	Online          bool
	Activity        string // one of the Activity* constants
	Playing         bool
	Current         Session // the running game when Playing (Ended is zero)
	Screensaver     bool
	ScreensaverType string // dim, black, random video, slideshow, suspend; "" when unknown
	Sleeping        bool
	Last            Session // the last logged session; ID "" before the first
	PlayTime        time.Duration
}

type nowPlayingAttrs struct {
	System  string `json:"system,omitempty"`
	Rom     string `json:"rom,omitempty"`
	Started string `json:"started,omitempty"`
	Source  string `json:"source,omitempty"`
}

type lastSessionAttrs struct {
	System    string `json:"system"`
	Rom       string `json:"rom"`
	Started   string `json:"started"`
	Ended     string `json:"ended"`
	DurationS int64  `json:"duration_s"`
	SessionID string `json:"session_id"`
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
		nowAttrs = nowPlayingAttrs{System: clean(c.System), Rom: cleanAttr(c.Rom), Started: formatTime(c.Started), Source: clean(c.Source)}
	}
	last, length := NoneState, NoneState
	var lastAttrs any = struct{}{}
	if l := snap.Last; l.ID != "" {
		last = gameName(l)
		length = minutes(l.Duration)
		lastAttrs = lastSessionAttrs{System: clean(l.System), Rom: cleanAttr(l.Rom), Started: formatTime(l.Started),
			Ended: formatTime(l.Ended), DurationS: seconds(l.Duration), SessionID: l.ID}
	}
	ssAttrs := screensaverAttrs{}
	if snap.Screensaver {
		ssAttrs.Type = clean(snap.ScreensaverType)
	}
	activity := snap.Activity
	if activity == "" {
		activity = ActivityOff
	}
	return []Message{
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
		Availability(s, snap.Online, at),
	}
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
