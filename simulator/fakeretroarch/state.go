package fakeretroarch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Volume limits and step of RetroArch's VOLUME_UP/VOLUME_DOWN (0.5 dB, as the
// 1.14 log shows "Audio volume: 0.5 dB").
const (
	volumeStep = 0.5
	volumeMin  = -80
	volumeMax  = 12
	keepLast   = 64 // entries kept in each history list
)

// gameState is what one game's hotkeys change; Load resets it.
type gameState struct {
	content     Content
	contentless bool
	paused      bool
	slot        int
	volumeDB    float64
	muted       bool
}

// record is the server's history across games, for tests and the simulator.
type record struct {
	datagrams, dropped                          int
	resets, quits, screenshotsTaken             int
	statesSaved, statesLoaded, stateLoadFailure int
	messagesShown                               int
	screenshots, states                         []string
	messages, commands, unrecognized            []string
	lastError                                   string
}

func (r *record) add(list *[]string, v string) {
	*list = append(*list, v)
	if len(*list) > keepLast {
		*list = append((*list)[:0:0], (*list)[len(*list)-keepLast:]...)
	}
}

// Snapshot is the fake's observable state at one moment.
type Snapshot struct {
	Addr        string // command address ("" before a port was picked)
	Listening   bool   // the socket is open
	Loaded      bool   // a game (or contentless RetroArch) runs
	Contentless bool
	Content     Content
	Paused      bool
	Slot        int     // current state slot
	VolumeDB    float64 // audio volume in dB, 0 at Load
	Muted       bool

	// Totals over the server's life, across games.
	Datagrams, Dropped int // received; dropped by the loss faults
	Resets, Quits      int
	StatesSaved        int
	StatesLoaded       int
	StateLoadFailures  int      // LOAD_STATE with no state file
	StateFiles         []string // paths SAVE_STATE wrote, oldest first
	Screenshots        []string // paths SCREENSHOT wrote, oldest first
	Messages           []string // SHOW_MSG texts, oldest first (each list keeps the last 64)
	MessagesShown      int      // SHOW_MSG texts over the server's life
	Commands           []string // recognized commands as received, oldest first
	Unrecognized       []string // what RetroArch would log as unrecognized
	LastError          string   // last file error (missing folder...)
}

// Snapshot returns a copy of the current state.
func (s *Server) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

func (s *Server) snapshotLocked() Snapshot {
	r := &s.rec
	return Snapshot{
		Addr: s.addr, Listening: s.ln != nil, Loaded: s.loaded,
		Contentless: s.st.contentless, Content: s.st.content,
		Paused: s.st.paused, Slot: s.st.slot, VolumeDB: s.st.volumeDB, Muted: s.st.muted,
		Datagrams: r.datagrams, Dropped: r.dropped, Resets: r.resets, Quits: r.quits,
		StatesSaved: r.statesSaved, StatesLoaded: r.statesLoaded, StateLoadFailures: r.stateLoadFailure,
		StateFiles: clone(r.states), Screenshots: clone(r.screenshots), Messages: clone(r.messages), MessagesShown: r.messagesShown,
		Commands: clone(r.commands), Unrecognized: clone(r.unrecognized), LastError: r.lastError,
	}
}

func clone(v []string) []string { return append([]string(nil), v...) }

// WaitFor blocks until cond holds for a snapshot or ctx ends, and returns the
// last snapshot. Tests use it instead of sleeping.
func (s *Server) WaitFor(ctx context.Context, cond func(Snapshot) bool) (Snapshot, error) {
	for {
		s.mu.Lock()
		snap := s.snapshotLocked()
		ch := s.changedLocked()
		s.mu.Unlock()
		if cond(snap) {
			return snap, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return snap, fmt.Errorf("fakeretroarch wait: %w", ctx.Err())
		}
	}
}

func (s *Server) changedLocked() chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

func (s *Server) notifyLocked() {
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
}

// pressLocked applies the hotkeys of one datagram and reports whether QUIT
// closed the game. Without content only the audio hotkeys do anything.
func (s *Server) pressLocked(pressed []string) (quit bool) {
	g := &s.st
	for _, key := range pressed {
		switch key {
		case "VOLUME_UP":
			g.volumeDB = min(g.volumeDB+volumeStep, volumeMax)
		case "VOLUME_DOWN":
			g.volumeDB = max(g.volumeDB-volumeStep, volumeMin)
		case "MUTE":
			g.muted = !g.muted
		}
		if g.contentless {
			continue
		}
		switch key {
		case "PAUSE_TOGGLE":
			g.paused = !g.paused
		case "STATE_SLOT_PLUS":
			g.slot++
		case "STATE_SLOT_MINUS":
			if g.slot > 0 { // 1.14 stays at 0
				g.slot--
			}
		case "SAVE_STATE":
			s.saveStateLocked()
		case "LOAD_STATE":
			s.loadStateLocked()
		case "SCREENSHOT":
			s.screenshotLocked()
		case "RESET":
			s.rec.resets++
		case "QUIT":
			s.rec.quits++
			quit = true
		}
	}
	return quit
}

// statePath names state files as RetroArch does: <basename>.state for slot
// 0, <basename>.state<N> for slot N.
func (s *Server) statePath() string {
	name := s.st.content.Basename + ".state"
	if s.st.slot > 0 {
		name += strconv.Itoa(s.st.slot)
	}
	return filepath.Join(s.SavestateDir, name)
}

func (s *Server) saveStateLocked() {
	if s.SavestateDir == "" {
		s.rec.lastError = "SAVE_STATE: no savestate folder configured"
		return
	}
	c := s.st.content
	data := fmt.Sprintf("FAKE-RETROARCH-STATE 1\nsystem=%s\ngame=%s\ncrc32=%x\nslot=%d\npaused=%t\nsaved=%d\n",
		c.SystemID, c.Basename, c.CRC32, s.st.slot, s.st.paused, s.rec.statesSaved+1)
	p := s.statePath()
	if err := writeFileAtomic(p, []byte(data)); err != nil {
		s.rec.lastError = "SAVE_STATE: " + err.Error()
		return
	}
	s.rec.statesSaved++
	s.rec.add(&s.rec.states, p)
}

func (s *Server) loadStateLocked() {
	if _, err := os.ReadFile(s.statePath()); err != nil || s.SavestateDir == "" {
		s.rec.stateLoadFailure++ // 1.14 logs "Failed to load state" and carries on
		return
	}
	s.rec.statesLoaded++
}

func (s *Server) screenshotLocked() {
	if s.ScreenshotDir == "" {
		s.rec.lastError = "SCREENSHOT: no screenshot folder configured"
		return
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	s.rec.screenshotsTaken++
	// RetroArch's dated name: <basename>-YYMMDD-HHMMSS.png (two in one
	// second overwrite each other, as they do in RetroArch).
	p := filepath.Join(s.ScreenshotDir, s.st.content.Basename+now().Format("-060102-150405")+".png")
	img, err := screenshotPNG(s.st.content.CRC32, s.rec.screenshotsTaken, s.st.paused)
	if err == nil {
		err = writeFileAtomic(p, img)
	}
	if err != nil {
		s.rec.lastError = "SCREENSHOT: " + err.Error()
		return
	}
	s.rec.add(&s.rec.screenshots, p)
}

// writeFileAtomic writes through a temporary file and a rename, so a watcher
// never reads half a file.
// The folder is created if needed.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fakeretroarch-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
