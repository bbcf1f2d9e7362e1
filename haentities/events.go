package haentities

import "time"

// sessionEvent is the payload of the game_session event entity. The attributes other than event_type
// become the event's attributes in HA.
type sessionEvent struct {
	EventType string `json:"event_type"`
	Game      string `json:"game"`
	System    string `json:"system"`
	Rom       string `json:"rom"`
	Source    string `json:"source"`
	Started   string `json:"started"`
	Ended     string `json:"ended,omitempty"`
	DurationS *int64 `json:"duration_s,omitempty"`
	SessionID string `json:"session_id"`
	// Profile is the household's player who launched it; left out for none.
	Profile *string `json:"profile,omitempty"`
	gameAttrs
	sessionAchievements
}

type cabinetEvent struct {
	EventType string `json:"event_type"`
	At        string `json:"at"`
}

func newSessionEvent(typ string, sess Session) sessionEvent {
	return sessionEvent{
		EventType: typ,
		Game:      gameName(sess),
		System:    clean(sess.System),
		Rom:       cleanAttr(sess.Rom),
		Source:    clean(sess.Source),
		Started:   formatTime(sess.Started),
		SessionID: sess.ID,
		Profile:   optional(clean(sess.Profile)),
		gameAttrs: newGameAttrs(sess),
	}
}

// SessionStart is the session_start event of a session (not retained; time-sensitive: dropped when
// late). at is when the message is built.
func SessionStart(s Settings, sess Session, at time.Time) Message {
	p := newSessionEvent(EventSessionStart, sess)
	return event(s.StateTopic(GameSession), marshal(p), KindTimeSensitive, EventSessionStart+"/"+sess.ID, at)
}

// SessionEnd is the session_end event of a logged session (not retained; delivered exactly once and
// in order; Key is the session id).
func SessionEnd(s Settings, sess Session, at time.Time) Message {
	p := newSessionEvent(EventSessionEnd, sess)
	p.Ended = formatTime(sess.Ended)
	d := seconds(sess.Duration)
	p.DurationS = &d
	p.sessionAchievements = newSessionAchievements(sess)
	return event(s.StateTopic(GameSession), marshal(p), KindSessionEnd, sess.ID, at)
}

// CabinetEvent is a cabinet event: kind is one of CabinetStart, CabinetWake, CabinetSleep,
// CabinetQuit, CabinetReboot, CabinetShutdown; when is the moment it happened, at when the message is
// built. Not retained; time-sensitive.
func CabinetEvent(s Settings, kind string, when, at time.Time) Message {
	p := cabinetEvent{EventType: kind, At: formatTime(when)}
	key := kind + "@" + when.UTC().Format(time.RFC3339Nano)
	return event(s.StateTopic(Cabinet), marshal(p), KindTimeSensitive, key, at)
}
