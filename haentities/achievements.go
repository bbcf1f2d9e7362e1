package haentities

import (
	"slices"
	"strconv"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Entity keys and the event type of RetroAchievements unlocks (issue 29). Batocera's RetroArch runs
// the scripts in ES's scripts/achievements/ folder on every unlock with argv `id title description`:
// no points, no hardcore flag, no game (research29.md §1).
const (
	LastAchievement          = "last_achievement"
	AchievementEntity        = "achievement"
	EventAchievementUnlocked = "unlocked"
)

// Bounds of an achievement's text, in runes, wherever it is kept or shown. RetroAchievements' own
// limits are 64 for a title and 255 for a description, and Batocera's hook loses any unlock whose
// id, title and description pass 168 bytes together; these leave room and cap hostile input.
const (
	MaxAchievementTitleRunes = 128
	MaxAchievementDescRunes  = 512
	// MaxSessionAchievements is how many of a session's unlocks it keeps (its count goes on): a
	// session_end and the last session's attributes stay well under the recorder's 16 KiB.
	MaxSessionAchievements = 20
)

// Achievement is one unlock as RetroArch reported it, with what Cabinet knew when it happened: the
// running session's game, system and id (empty when no session was known), and whether hardcore was
// configured for that game in batocera.conf (Batocera passes no flag; RetroArch may still pause
// hardcore, so this is "configured", best effort). Title and Description are cleaned (one line, no
// control, bidi or format characters, capped) before they are kept. There is no player: profiles
// come with issue 32, which can add one (absent until then, never an empty string).
type Achievement struct {
	ID          uint32    `json:"id"`
	Title       string    `json:"t,omitempty"`
	Description string    `json:"d,omitempty"`
	Hardcore    bool      `json:"hc,omitempty"`
	At          time.Time `json:"at"`
	Game        string    `json:"game,omitempty"`
	System      string    `json:"sys,omitempty"`
	SessionID   string    `json:"sid,omitempty"`
}

// CleanAchievementTitle and CleanAchievementDescription are the cleaning every achievement's text
// gets before it is kept or shown.
func CleanAchievementTitle(s string) string { return untrusted.Clean(s, MaxAchievementTitleRunes) }

// CleanAchievementDescription: see CleanAchievementTitle.
func CleanAchievementDescription(s string) string { return untrusted.Clean(s, MaxAchievementDescRunes) }

// AchievementLabel is what an achievement is shown by: its title, else "Achievement <id>".
func AchievementLabel(a Achievement) string {
	if t := clean(CleanAchievementTitle(a.Title)); t != "" {
		return t
	}
	return "Achievement " + strconv.FormatUint(uint64(a.ID), 10)
}

// AchievementEntities are the catalogue rows of the unlocks: the event and the last one.
func AchievementEntities() []Entity {
	return []Entity{
		{Key: AchievementEntity, Component: ComponentEvent, Name: "Achievement", Icon: "mdi:trophy-award",
			EventTypes: []string{EventAchievementUnlocked}},
		{Key: LastAchievement, Component: ComponentSensor, Name: "Last achievement", Icon: "mdi:trophy", Attributes: true},
	}
}

// achievementAttrs are the event's attributes and the last-achievement sensor's: absent when unknown
// (no session known), never an empty string but for the title.
type achievementAttrs struct {
	ID          uint32 `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Hardcore    bool   `json:"hardcore"`
	Game        string `json:"game,omitempty"`
	System      string `json:"system,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
}

func newAchievementAttrs(a Achievement) achievementAttrs {
	return achievementAttrs{ID: a.ID, Title: AchievementLabel(a), Description: CleanAchievementDescription(a.Description),
		Hardcore: a.Hardcore, Game: clean(a.Game), System: clean(a.System), SessionID: clean(a.SessionID)}
}

type achievementEvent struct {
	EventType string `json:"event_type"`
	achievementAttrs
}

type lastAchievementAttrs struct {
	achievementAttrs
	At string `json:"at"`
}

// AchievementEvent is the unlocked event of an achievement (not retained; time-sensitive: an unlock
// announced late would flash the lights at the wrong time). at is when the message is built.
// Publishers send it only when s.Achievements announces its entity.
func AchievementEvent(s Settings, a Achievement, at time.Time) Message {
	p := achievementEvent{EventType: EventAchievementUnlocked, achievementAttrs: newAchievementAttrs(a)}
	key := AchievementEntity + "/" + strconv.FormatUint(uint64(a.ID), 10) + "@" + a.At.UTC().Format(time.RFC3339Nano)
	return event(s.StateTopic(AchievementEntity), marshal(p), KindTimeSensitive, key, at)
}

// lastAchievementStates are the retained state (the title, None before the first) and attributes of
// the last-achievement sensor.
func lastAchievementStates(s Settings, a Achievement, at time.Time) []Message {
	state, attrs := NoneState, any(struct{}{})
	if !a.At.IsZero() {
		state = AchievementLabel(a)
		attrs = lastAchievementAttrs{achievementAttrs: newAchievementAttrs(a), At: formatTime(a.At)}
	}
	return []Message{
		retained(s.StateTopic(LastAchievement), []byte(state), KindState, at),
		retained(s.AttributesTopic(LastAchievement), marshal(attrs), KindState, at),
	}
}

// sessionAchievement is one unlock in a session's attributes: no description, to keep them small.
type sessionAchievement struct {
	ID       uint32 `json:"id"`
	Title    string `json:"title"`
	Hardcore bool   `json:"hardcore"`
	At       string `json:"at"`
}

// sessionAchievements are a session's unlocks as the session_end event and the last session's
// attributes carry them: absent when none.
type sessionAchievements struct {
	Achievements      []sessionAchievement `json:"achievements,omitempty"`
	AchievementsCount int                  `json:"achievements_count,omitempty"`
}

func newSessionAchievements(sess Session) sessionAchievements {
	n := max(sess.AchievementCount, len(sess.Achievements))
	if n == 0 {
		return sessionAchievements{}
	}
	out := sessionAchievements{AchievementsCount: n}
	for _, a := range sess.Achievements[:min(len(sess.Achievements), MaxSessionAchievements)] {
		out.Achievements = append(out.Achievements, sessionAchievement{ID: a.ID, Title: untrusted.Clean(AchievementLabel(a), maxDetailRunes),
			Hardcore: a.Hardcore, At: formatTime(a.At)})
	}
	return out
}

// AddAchievement appends a to the session's unlocks: the first MaxSessionAchievements are kept, every
// one is counted.
func (sess *Session) AddAchievement(a Achievement) {
	sess.AchievementCount = max(sess.AchievementCount, len(sess.Achievements)) + 1
	if len(sess.Achievements) < MaxSessionAchievements {
		// Sessions are copied by value (replays, snapshots): never write into a shared array.
		sess.Achievements = append(slices.Clip(sess.Achievements), a)
	}
}

// Unlocks is how many achievements the session unlocked.
func (sess Session) Unlocks() int { return max(sess.AchievementCount, len(sess.Achievements)) }
