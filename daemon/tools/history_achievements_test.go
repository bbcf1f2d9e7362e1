package tools

import (
	"strings"
	"testing"
	"time"
)

// "What did we unlock this week?": batocera_play_history lists the period's unlocks, newest first,
// cleaned, with counts per game and per day (an unlock with no known game counts under none), and
// each session says how many it unlocked; a system filter keeps that system's.
func TestPlayHistoryAchievements(t *testing.T) {
	at := func(d, h int) time.Time { return time.Date(2025, 4, d, h, 0, 0, 0, time.UTC) }
	sessions := []Session{{ID: "1", Game: "Tetris", System: "nes", Started: at(28, 10), Duration: time.Hour, Achievements: 2}}
	unlocks := []Achievement{
		{ID: 1, Title: "Old", At: at(20, 10), Game: "Tetris", System: "nes", SessionID: "0"}, // before the week
		{ID: 2, Title: "Line\u202e clear\x1b[2J", Description: "Clear\n4 lines", At: at(28, 10), Game: "Tetris", System: "nes", SessionID: "1", Hardcore: true},
		{ID: 3, Title: "Tetris!", At: at(28, 11), Game: "Tetris", System: "nes", SessionID: "1"},
		{ID: 4, Title: "Shot down", At: at(30, 9), Game: "Galaga", System: "mame", SessionID: "2"},
		{ID: 5, Title: "In the menu", At: at(30, 21)},
	}
	r := newRig(t, rigConfig{deps: func(d *Deps) { d.History = stubHistory{sessions: sessions, unlocks: unlocks} }})
	var h historyResult
	res := r.ok("batocera_play_history", map[string]any{"since": "7d"}, &h)
	a := h.Totals.Achievements
	if a.Total != 4 || len(h.Achievements) != 4 || h.Achievements[0].ID != 5 || h.Achievements[3].ID != 2 {
		t.Fatalf("achievements %+v, total %d: want 5, 4, 3, 2", h.Achievements, a.Total)
	}
	if g := a.ByGame; len(g) != 3 || g[0] != (achievementGame{"Tetris", "nes", 2}) || g[1] != (achievementGame{"", "", 1}) || g[2] != (achievementGame{"Galaga", "mame", 1}) {
		t.Errorf("by game %+v", g)
	}
	if d := a.ByDay; len(d) != 2 || d[0] != (achievementDay{"2025-04-30", 2}) || d[1] != (achievementDay{"2025-04-28", 2}) {
		t.Errorf("by day %+v", d)
	}
	line := h.Achievements[3]
	if line.Title != "Line clear[2J" || line.Description != "Clear 4 lines" || !line.Hardcore || *line.Game != "Tetris" || *line.SessionID != "1" {
		t.Errorf("unlock 2 as listed: %+v", line)
	}
	if menu := h.Achievements[0]; menu.Game != nil || menu.System != nil || menu.SessionID != nil {
		t.Errorf("an unlock with no session: %+v, want null game, system and session", menu)
	}
	if len(h.Sessions) != 1 || h.Sessions[0].Achievements != 2 {
		t.Errorf("sessions %+v: want Tetris with 2 unlocks", h.Sessions)
	}
	if text := text(res); !strings.Contains(text, "Achievements unlocked: 4") || !strings.Contains(text, "Tetris!") {
		t.Errorf("text: %s", text)
	}
	h = historyResult{}
	r.ok("batocera_play_history", map[string]any{"since": "7d", "system": "nes"}, &h)
	if h.Totals.Achievements.Total != 2 || len(h.Achievements) != 2 {
		t.Errorf("nes only: %+v", h.Achievements)
	}
}
