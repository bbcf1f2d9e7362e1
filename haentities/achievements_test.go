package haentities

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func goldenAchievement() Achievement {
	return Achievement{ID: 12345, Title: "Hadouken!", Description: "Win a round with a fireball", Hardcore: true,
		At: time.Date(2026, 1, 2, 20, 3, 7, 0, zone), Game: goldenCurrent().Game, System: "mame", SessionID: goldenCurrent().ID}
}

// goldenUnlocks pins what an unlock publishes: its event, the last-achievement sensor (also before
// the first), a session_end and a last session with unlocks, and a hostile one.
func goldenUnlocks() []Message {
	s := goldenSettings()
	s.Achievements = true
	a := goldenAchievement()
	last := goldenLast()
	last.AddAchievement(a)
	menu := a
	menu.Game, menu.System, menu.SessionID, menu.Hardcore = "", "", "", false
	hostile := Achievement{ID: 7, Title: "\u202eevil\x1b[31m\ttitle\n" + strings.Repeat("long ", 80), Description: "a\u200bb\x00c\u2066",
		At: goldenNow, Game: "g\x07", System: "s\u200f"}
	out := []Message{AchievementEvent(s, a, goldenNow), AchievementEvent(s, menu, goldenNow), AchievementEvent(s, hostile, goldenNow)}
	out = append(out, lastAchievementStates(s, Achievement{}, goldenNow)...)
	out = append(out, lastAchievementStates(s, a, goldenNow)...)
	out = append(out, lastAchievementStates(s, hostile, goldenNow)...)
	out = append(out, SessionEnd(s, last, goldenNow))
	return append(out, States(s, Snapshot{Online: true, Activity: ActivityMenu, Last: last, LastAchievement: a}, goldenNow)...)
}

func TestGoldenAchievements(t *testing.T) {
	checkGolden(t, "events_achievements", render(goldenUnlocks()))
	s := goldenSettings()
	s.Achievements = true
	checkGolden(t, "discovery_achievements", render(Discovery(s, goldenNow)))
}

// Without RetroAchievements on, a cabinet can unlock nothing: neither the hook nor the daemon
// announces the achievement entities or publishes their states.
func TestAchievementsOnlyWhenOn(t *testing.T) {
	for _, daemon := range []bool{false, true} {
		s := goldenSettings()
		s.Daemon = daemon
		has := func() (announced, published bool) {
			for _, m := range Discovery(s, goldenNow) {
				announced = announced || strings.Contains(m.Topic, "achievement")
			}
			for _, m := range States(s, Snapshot{Online: true, LastAchievement: goldenAchievement()}, goldenNow) {
				published = published || strings.Contains(m.Topic, "achievement")
			}
			return
		}
		if a, p := has(); a || p {
			t.Errorf("daemon %v, RetroAchievements off: announced %v, published %v", daemon, a, p)
		}
		s.Achievements = true
		if a, p := has(); !a || !p {
			t.Errorf("daemon %v, RetroAchievements on: announced %v, published %v", daemon, a, p)
		}
		if kept := KeptTopics(s); slices.ContainsFunc(kept, func(t string) bool { return strings.Contains(t, "achievement") }) {
			t.Errorf("a hook keeps the achievement configs as the daemon's: %v", kept)
		}
	}
}

// However hostile an unlock's text, what reaches Home Assistant is clean, capped and valid JSON.
func TestAchievementPayloadsAreClean(t *testing.T) {
	s := goldenSettings()
	huge := strings.Repeat("é\u202e\x01\t\"", 1<<18)
	a := Achievement{ID: 1, Title: huge, Description: huge, At: goldenNow, Game: huge, System: huge, SessionID: huge}
	var sess Session
	for range 30 {
		sess.AddAchievement(a)
	}
	sess.ID, sess.Started, sess.Ended = "x", goldenNow, goldenNow
	msgs := append([]Message{AchievementEvent(s, a, goldenNow), SessionEnd(s, sess, goldenNow)}, lastAchievementStates(s, a, goldenNow)...)
	for _, m := range msgs {
		if len(m.Payload) > 16<<10 {
			t.Errorf("%s: %d bytes, over the recorder's 16 KiB", m.Topic, len(m.Payload))
		}
		if !utf8.Valid(m.Payload) || strings.ContainsAny(string(m.Payload), "\x01\t\u202e") {
			t.Errorf("%s holds unclean text: %.120q", m.Topic, m.Payload)
		}
		if m.Payload[0] == '{' && !json.Valid(m.Payload) {
			t.Errorf("%s: not JSON", m.Topic)
		}
	}
	if sess.Unlocks() != 30 || len(sess.Achievements) != MaxSessionAchievements {
		t.Errorf("session keeps %d of %d", len(sess.Achievements), sess.Unlocks())
	}
	if AchievementLabel(Achievement{ID: 9}) != "Achievement 9" {
		t.Errorf("an untitled unlock: %q", AchievementLabel(Achievement{ID: 9}))
	}
}
