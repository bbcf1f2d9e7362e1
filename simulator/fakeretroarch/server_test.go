package fakeretroarch

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestLifecycleKeepsAddressAndHasNoSocketWithoutGame(t *testing.T) {
	var s Server // zero value
	addr, err := s.Reserve()
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if s.Snapshot().Listening {
		t.Fatal("listening after Reserve, want no socket before a game")
	}
	r := dialRaw(t, addr)
	r.expectRefused()

	for game := range 3 {
		if err := s.Load(stub); err != nil {
			t.Fatalf("Load %d: %v", game, err)
		}
		if got := s.Addr(); got != addr {
			t.Fatalf("game %d address: got %s, want %s as reserved", game, got, addr)
		}
		if err := s.Load(stub); err == nil {
			t.Fatalf("second Load while running: got nil error, want one")
		}
		r.send("VERSION")
		if got := r.mustRead(); got != "1.14.0\n" {
			t.Fatalf("game %d VERSION: got %q", game, got)
		}
		s.Unload()
		r.expectRefused()
	}
	s.Unload() // no game: a no-op
}

func TestPortPickedAtFirstLoadIsKept(t *testing.T) {
	var s Server
	if s.Addr() != "" {
		t.Fatalf("Addr before any game: got %q, want empty", s.Addr())
	}
	first := loaded(t, &s, stub)
	s.Unload()
	second := loaded(t, &s, stub)
	if first == "" || first != second {
		t.Fatalf("addresses of two games: got %q and %q, want the same", first, second)
	}
}

func TestHotkeyState(t *testing.T) {
	dir := t.TempDir()
	states, shots := filepath.Join(dir, "states"), filepath.Join(dir, "shots")
	os.Mkdir(states, 0o755)
	os.Mkdir(shots, 0o755)
	clock := time.Date(2026, 11, 30, 4, 18, 39, 0, time.Local)
	s := &Server{SavestateDir: states, ScreenshotDir: shots, Now: func() time.Time { return clock }}
	r := dialRaw(t, loaded(t, s, stub))

	r.send("LOAD_STATE") // nothing saved yet
	r.send("SAVE_STATE")
	r.send("STATE_SLOT_PLUS")
	r.send("STATE_SLOT_PLUS")
	r.send("SAVE_STATE")
	r.send("STATE_SLOT_MINUS")
	r.send("LOAD_STATE") // slot 1: no file
	r.send("STATE_SLOT_MINUS")
	r.send("STATE_SLOT_MINUS") // stays at 0
	r.send("LOAD_STATE")
	r.send("VOLUME_UP\nVOLUME_DOWN\nMUTE") // one datagram: all three, once each
	r.send("VOLUME_DOWN")
	r.send("RESET")
	r.send("PAUSE_TOGGLE")
	r.send("SCREENSHOT")
	r.expectSilence("")

	snap := s.Snapshot()
	wantFiles := []string{filepath.Join(states, "stub.state"), filepath.Join(states, "stub.state2")}
	checks := []struct {
		what      string
		got, want any
	}{
		{"state files", snap.StateFiles, wantFiles},
		{"slot", snap.Slot, 0},
		{"states loaded", snap.StatesLoaded, 1},
		{"state load failures", snap.StateLoadFailures, 2},
		{"volume dB", snap.VolumeDB, -0.5},
		{"muted", snap.Muted, true},
		{"resets", snap.Resets, 1},
		{"paused", snap.Paused, true},
		{"screenshots", snap.Screenshots, []string{filepath.Join(shots, "stub-261130-041839.png")}},
	}
	for _, c := range checks {
		if !equal(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	for _, f := range wantFiles {
		if b, err := os.ReadFile(f); err != nil || !bytes.HasPrefix(b, []byte("FAKE-RETROARCH-STATE")) {
			t.Errorf("state file %s: err %v, content %.30q", f, err, b)
		}
	}
	if len(snap.Screenshots) == 1 {
		b, err := os.ReadFile(snap.Screenshots[0])
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("screenshot is not a PNG: %v", err)
		}
		if got := img.Bounds().Size(); got.X != shotW || got.Y != shotH {
			t.Errorf("screenshot size: got %v, want %dx%d", got, shotW, shotH)
		}
	}
}

func equal(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, _ := b.([]string)
		return slices.Equal(as, bs)
	}
	return a == b
}

func TestLoadResetsGameState(t *testing.T) {
	s := &Server{}
	r := dialRaw(t, loaded(t, s, stub))
	r.send("PAUSE_TOGGLE\nSTATE_SLOT_PLUS\nMUTE\nVOLUME_UP")
	r.expectSilence("")
	s.Unload()
	loaded(t, s, Content{SystemID: "snes", Basename: "other"})
	snap := s.Snapshot()
	if snap.Paused || snap.Slot != 0 || snap.Muted || snap.VolumeDB != 0 || snap.Content.Basename != "other" {
		t.Errorf("after a new Load: got %+v, want a running game at slot 0, volume 0, unmuted", snap)
	}
}

func TestQuitClosesTheGame(t *testing.T) {
	quit := make(chan struct{})
	s := &Server{OnQuit: func() { close(quit) }}
	r := dialRaw(t, loaded(t, s, stub))
	r.send("QUIT")
	select {
	case <-quit:
	case <-time.After(cabinettest.Deadline):
		t.Fatal("OnQuit was not called after QUIT")
	}
	if snap := s.Snapshot(); snap.Loaded || snap.Listening || snap.Quits != 1 {
		t.Errorf("after QUIT: got loaded=%v listening=%v quits=%d, want false false 1", snap.Loaded, snap.Listening, snap.Quits)
	}
	r.expectRefused()
	if err := s.Load(stub); err != nil {
		t.Fatalf("Load after QUIT: %v", err)
	}
	r.send("VERSION")
	if got := r.mustRead(); got != "1.14.0\n" {
		t.Errorf("VERSION in the next game: got %q", got)
	}
}

func TestMissingFoldersAreReported(t *testing.T) {
	s := &Server{}
	r := dialRaw(t, loaded(t, s, stub))
	r.send("SAVE_STATE")
	r.send("SCREENSHOT")
	r.expectSilence("")
	snap := s.Snapshot()
	if snap.StatesSaved != 0 || len(snap.Screenshots) != 0 || snap.LastError == "" {
		t.Errorf("without folders: got saved=%d screenshots=%d lastError=%q, want 0 0 and an error",
			snap.StatesSaved, len(snap.Screenshots), snap.LastError)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := &Server{}
	addr := loaded(t, s, stub)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := dialRaw(t, addr)
			for range 20 {
				r.send("GET_STATUS\nPAUSE_TOGGLE\nVOLUME_UP")
				if _, err := r.read(); err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
			}
		}()
	}
	for range 20 {
		s.SetLatency(0)
		_ = s.Snapshot()
	}
	wg.Wait()
	if got := s.Snapshot().Datagrams; got != 160 {
		t.Errorf("datagrams: got %d, want 160", got)
	}
}
