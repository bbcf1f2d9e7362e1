package tracker

import (
	"slices"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// TestLiveStates checks what HA sees while things happen, not only at the end.
func TestLiveStates(t *testing.T) {
	cfg := DefaultConfig()
	st := New()
	step := func(ev Event) Output {
		var out Output
		st, out = Apply(st, cfg, ev.Stamp(), ev)
		return out
	}
	step(esEvent(KindStart, 0))
	step(esEvent(KindScreensaverStart, 300, "random video"))
	step(screensaverPick(345, "gb", tetrisPath, "Tetris"))
	out := step(esGameStart(345.02, tetrisPath, "Tetris"))
	if out.Snapshot.Activity != haentities.ActivityPlaying || !out.Snapshot.Playing || out.Snapshot.Current.Game != "Tetris" {
		t.Errorf("screensaver launch: snapshot %+v, want playing Tetris", out.Snapshot)
	}
	if len(out.Events) != 0 {
		t.Errorf("screensaver launch emitted %v", describeEvents(out.Events))
	}
	out = step(esEvent(KindScreensaverStop, 345.01)) // arrives late, but within the window
	if out.Snapshot.Screensaver || out.Snapshot.Activity != haentities.ActivityPlaying {
		t.Errorf("after stop: %+v", out.Snapshot)
	}
	out = step(esEvent(KindQuit, 1000))
	if out.Snapshot.Activity != haentities.ActivityOff || out.Snapshot.Online || out.Snapshot.Playing {
		t.Errorf("after quit: %+v", out.Snapshot)
	}
	if got := describeEvents(out.Events); !slices.Equal(got, []string{"quit"}) {
		t.Errorf("quit emitted %q", got)
	}
	if !out.Changed {
		t.Error("quit did not report a changed snapshot")
	}
	out = step(esEvent(KindStart, 1020))
	if out.Snapshot.Activity != haentities.ActivityMenu || !out.Snapshot.Online {
		t.Errorf("after restart: %+v", out.Snapshot)
	}
}

// TestSessionStartTiming: session_start waits until the launch is final (the reorder window), with or
// without a screensaver that may have launched it, and FlushIn says when to flush for it.
func TestSessionStartTiming(t *testing.T) {
	tests := []struct {
		name   string
		ssType string
		now    bool // emitted by the game-start's own Apply
	}{
		{"dim screensaver cannot launch", "dim", false},
		{"random video may have launched it", "random video", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			st, _ := Apply(New(), cfg, stampAt(300), esEvent(KindScreensaverStart, 300, tt.ssType))
			st, _ = Apply(st, cfg, stampAt(340), esEvent(KindScreensaverStop, 340))
			st, out := Apply(st, cfg, stampAt(344), esGameStart(344, smbPath, smbName))
			if got := len(out.Events) == 1; got != tt.now {
				t.Fatalf("session_start with the game-start: %v, want %v (%q)", got, tt.now, describeEvents(out.Events))
			}
			if !tt.now && out.FlushIn == 0 {
				t.Error("held session_start but FlushIn is 0")
			}
			_, out = Apply(st, cfg, stampAt(348))
			if got := len(out.Events) == 1; got == tt.now {
				t.Errorf("session_start at the flush: %v (%q)", got, describeEvents(out.Events))
			}
		})
	}
}

// TestLoggingWaitsForTheWindow: a session is logged once its end is final, and FlushIn says when.
func TestLoggingWaitsForTheWindow(t *testing.T) {
	cfg := DefaultConfig()
	st := New()
	st, _ = Apply(st, cfg, stampAt(10), esGameStart(10, smbPath, smbName))
	st, out := Apply(st, cfg, stampAt(400), esEvent(KindGameEnd, 400))
	if len(out.Logged) != 0 {
		t.Fatalf("logged before the end was final: %v", describeLogged(out.Logged, false))
	}
	if out.Snapshot.Playing || out.Snapshot.Activity != haentities.ActivityMenu {
		t.Errorf("live states not updated at game-end: %+v", out.Snapshot)
	}
	if out.FlushIn != cfg.ReorderWindow {
		t.Errorf("FlushIn = %v, want %v", out.FlushIn, cfg.ReorderWindow)
	}
	st, out = Apply(st, cfg, stampAt(401))
	if len(out.Logged) != 0 || out.FlushIn != 2*time.Second {
		t.Errorf("flush too early: logged %d, FlushIn %v", len(out.Logged), out.FlushIn)
	}
	st, out = Apply(st, cfg, stampAt(403))
	if got := describeLogged(out.Logged, false); !slices.Equal(got, []string{smbName + "|nes|390|es"}) {
		t.Fatalf("flush logged %q", got)
	}
	if out.FlushIn != 0 || out.Snapshot.Last.Game != smbName {
		t.Errorf("after flush: FlushIn %v, last %q", out.FlushIn, out.Snapshot.Last.Game)
	}
	_, out = Apply(st, cfg, stampAt(500))
	if len(out.Logged) != 0 || out.Changed {
		t.Errorf("a second flush logged %d sessions again (changed=%v)", len(out.Logged), out.Changed)
	}
}

// TestDurationsUseTheBootClock: the wall clock jumps years at NTP sync on a box without a clock chip;
// the session still lasts what the boot clock says.
func TestDurationsUseTheBootClock(t *testing.T) {
	cfg := DefaultConfig()
	startEv := esGameStart(0, smbPath, smbName)
	startEv.At = time.Date(2020, 1, 1, 0, 0, 10, 0, time.UTC) // before NTP
	st, _ := Apply(New(), cfg, startEv.Stamp(), startEv)
	end := esEvent(KindGameEnd, 300) // after NTP: the boot clock moved 300 s
	st, _ = Apply(st, cfg, end.Stamp(), end)
	_, out := Apply(st, cfg, stampAt(400))
	if len(out.Logged) != 1 || out.Logged[0].Duration != 300*time.Second {
		t.Fatalf("logged %+v, want one session of 5m0s", out.Logged)
	}
	// Across boots only the wall clock is left, clamped at zero when it went backwards.
	st, _ = Apply(New(), cfg, stampAt(10), esGameStart(10, smbPath, smbName))
	back := inBoot(esEvent(KindStart, 5))
	_, out = Apply(st, cfg, back.Stamp(), back)
	if out.Snapshot.Playing || out.Snapshot.Activity != haentities.ActivityMenu {
		t.Error("a session of the previous boot is still running")
	}
}

// TestRecordLeavesEventsToApply: the configgen hook records its start without publishing; the ES
// hook's Apply right after emits session_start once.
func TestRecordLeavesEventsToApply(t *testing.T) {
	cfg := DefaultConfig()
	st, _ := Apply(New(), cfg, stampAt(0), esEvent(KindStart, 0))
	st, out := Record(st, cfg, stampAt(10.4), cgEvent(KindGameStart, 10.4, "nes", smbPath))
	if len(out.Events) != 0 || len(st.Sent) != 1 {
		t.Fatalf("Record emitted %q, marked %d", describeEvents(out.Events), len(st.Sent))
	}
	if !out.Snapshot.Playing {
		t.Error("Record did not update the live states")
	}
	st, out = Apply(st, cfg, stampAt(10.45), esGameStart(10, smbPath, smbName))
	if len(out.Events) != 0 {
		t.Fatalf("session_start before the launch is final: %q", describeEvents(out.Events))
	}
	st, _ = Apply(st, cfg, stampAt(10.5), watcherEvent(KindGameStart, 10.5, smbPath, smbName, "NES"))
	st, out = Apply(st, cfg, stampAt(14)) // the flush FlushIn asked for
	if got := describeEvents(out.Events); !slices.Equal(got, []string{"session_start:" + smbName}) {
		t.Fatalf("the flush after Record and Apply emitted %q", got)
	}
	st, out = Apply(st, cfg, stampAt(15))
	if len(out.Events) != 0 {
		t.Errorf("emitted again: %q", describeEvents(out.Events))
	}
	// Logged sessions come out of Record too: the store must keep them.
	_, out = Record(st, cfg, stampAt(500), cgEvent(KindGameEnd, 400, "nes", smbPath))
	if len(out.Logged) != 1 {
		t.Errorf("Record logged %d sessions, want 1", len(out.Logged))
	}
}

// TestBackToBackLaunches: the player starts the wrong game, quits it after
// a few seconds and starts another: each launch is a live event of its own,
// even within the duplicate window.
func TestBackToBackLaunches(t *testing.T) {
	cfg := DefaultConfig()
	st := New()
	var starts []string
	step := func(ev Event) {
		var out Output
		st, out = Apply(st, cfg, ev.Stamp(), ev)
		for _, e := range out.Events {
			if e.Type == haentities.EventSessionStart {
				starts = append(starts, e.Session.Game)
			}
		}
	}
	step(esEvent(KindStart, 0))
	step(esGameStart(10, tetrisPath, "Tetris"))
	step(esEvent(KindGameEnd, 13))
	step(esGameStart(15, "/userdata/roms/nes/Zelda.nes", "Zelda"))
	step(esEvent(KindSystemSelected, 30, "nes")) // later: both launches are final
	if !slices.Equal(starts, []string{"Tetris", "Zelda"}) {
		t.Errorf("session_start for %q, want one per launch", starts)
	}
}

// TestLateEarlierReportKeepsOneID: the report stamped first reaches the
// tracker last (its hook was spooled); session_start still carries the id
// the session ends with, because it waits until the start is final.
func TestLateEarlierReportKeepsOneID(t *testing.T) {
	cfg := DefaultConfig()
	st, _ := Apply(New(), cfg, stampAt(0), esEvent(KindStart, 0))
	var startID, endID string
	collect := func(out Output) {
		for _, e := range out.Events {
			if e.Type == haentities.EventSessionStart {
				startID = e.Session.ID
			}
		}
		for _, s := range out.Logged {
			endID = s.ID
		}
	}
	var out Output
	st, out = Apply(st, cfg, stampAt(10.35), esGameStart(10.3, smbPath, smbName))
	collect(out)
	st, out = Apply(st, cfg, stampAt(10.9), cgEvent(KindGameStart, 10.0, "nes", smbPath)) // earlier, later
	collect(out)
	st, out = Apply(st, cfg, stampAt(14))
	collect(out)
	st, out = Apply(st, cfg, stampAt(200), esEvent(KindGameEnd, 200))
	collect(out)
	_, out = Apply(st, cfg, stampAt(205))
	collect(out)
	if startID == "" || startID != endID {
		t.Errorf("session_start id %q, session_end id %q: want one id", startID, endID)
	}
}
