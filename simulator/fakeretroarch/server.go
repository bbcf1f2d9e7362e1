// Package fakeretroarch is a fake RetroArch 1.14 network command interface: a
// real UDP server on 127.0.0.1 that answers byte for byte like Debian's
// RetroArch 1.14 (shared/reference/retroarch-netcmd.md, re-checked against the
// real binary by daemon/retroarch's scenario test). Like RetroArch on a
// cabinet it has no socket at all while no game runs, so a client sees the
// port refused. It keeps the state the allowed hotkeys change, writes real
// state files and PNG screenshots, and injects faults (latency, loss, down).
// Production code (cabinet simulate) uses it, so it must not import testing.
//
// Quirks reproduced because the real one has them: a command without its
// argument reads stale bytes of the receive buffer (kept between datagrams,
// as RetroArch's is), so "GET_CONFIG_PARAM" alone after "GET_CONFIG_PARAM
// log_dir" answers for log_dir; datagrams are cut at 2047 bytes; hotkeys act
// after the whole datagram, as on RetroArch's next frame. Not emulated: the
// core memory commands (recognized, silent; Cabinet never sends them) and
// frame timing beyond the latency fault.
package fakeretroarch

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Version is what VERSION answers.
const Version = "1.14.0"

// Content is the game RetroArch runs.
type Content struct {
	// SystemID is what GET_STATUS reports as the system: the core info
	// systemid ("nes") or, as 1.14 does without core info, the core's
	// library name ("Nestopia").
	SystemID string
	// Basename is the ROM file name without directory and extension.
	Basename string
	// CRC32 is the content CRC; 0 as for content RetroArch does not hash.
	CRC32 uint32
}

// Server is a fake RetroArch. The zero value is ready: it listens on
// 127.0.0.1 with a port picked at the first Load (or Reserve) and kept for
// every later game, writes no files, and nobody is told about QUIT. Set the
// exported fields before the first Reserve or Load and do not change them
// afterwards; all methods are safe for concurrent use.
type Server struct {
	// ListenAddr is the UDP address; "" means "127.0.0.1:0".
	ListenAddr string
	// Folders as GET_CONFIG_PARAM reports them. SAVE_STATE and LOAD_STATE
	// use SavestateDir, SCREENSHOT uses ScreenshotDir; empty disables the
	// file. ScreenshotDir is not readable over the wire (1.14 answers
	// "unsupported" for screenshot_directory).
	SavestateDir, ScreenshotDir, SavefileDir, SystemDir string
	LogDir, RuntimeLogDir, CacheDir                     string
	NetplayNickname                                     string
	VideoFullscreen                                     bool
	// OnQuit is called on its own goroutine after QUIT closed the game (the
	// socket is already gone, as when RetroArch exits). It may call Unload
	// (a no-op by then) or Load the next game.
	OnQuit func()
	// Now names screenshots; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	addr    string    // fixed once a port is picked
	ln      *listener // nil: no socket
	loaded  bool
	st      gameState
	rec     record
	flt     faults
	rx      [rxSize]byte  // RetroArch's receive buffer, kept for the stale-argument quirk
	changed chan struct{} // closed and replaced on every change
}

// listener is one command socket and its serving goroutine.
type listener struct {
	conn net.PacketConn
	stop chan struct{} // closed to abandon a latency wait
	done chan struct{} // closed when serve returns
}

// Reserve picks the address (the port, when ListenAddr has port 0) that every
// game will use and returns it, without opening the socket: it binds and
// releases the port, so another program could take it in between.
func (s *Server) Reserve() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserveLocked()
}

func (s *Server) reserveLocked() (string, error) {
	if s.addr != "" {
		return s.addr, nil
	}
	want := s.ListenAddr
	if want == "" {
		want = "127.0.0.1:0"
	}
	c, err := net.ListenPacket("udp", want)
	if err != nil {
		return "", fmt.Errorf("fakeretroarch reserve %s: %w", want, err)
	}
	s.addr = c.LocalAddr().String()
	c.Close()
	return s.addr, nil
}

// Addr returns the command address, or "" before a port was picked.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Load starts a game: the per-game state resets (running, slot 0, volume
// 0 dB, not muted) and the socket opens, unless the down fault is on.
func (s *Server) Load(c Content) error {
	return s.load(c, false)
}

// LoadContentless starts RetroArch without content: GET_STATUS answers
// CONTENTLESS, and hotkeys that need a game (pause, states, screenshot, reset,
// QUIT) do nothing, as observed on 1.14 with the null menu.
func (s *Server) LoadContentless() error {
	return s.load(Content{}, true)
}

func (s *Server) load(c Content, contentless bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return errors.New("fakeretroarch load: a game is already running; Unload it first")
	}
	s.st = gameState{content: c, contentless: contentless}
	s.loaded = true
	if err := s.openLocked(); err != nil {
		s.loaded = false
		return err
	}
	s.notifyLocked()
	return nil
}

// Unload ends the game: the socket closes and Unload returns once the server
// goroutine has stopped. Unloading with no game is a no-op.
func (s *Server) Unload() {
	s.mu.Lock()
	s.loaded = false
	ln := s.detachLocked()
	s.notifyLocked()
	s.mu.Unlock()
	ln.shutdown()
}

func (s *Server) openLocked() error {
	if s.ln != nil || !s.loaded || s.flt.down {
		return nil
	}
	addr, err := s.reserveLocked()
	if err != nil {
		return err
	}
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return fmt.Errorf("fakeretroarch listen %s: %w", addr, err)
	}
	ln := &listener{conn: conn, stop: make(chan struct{}), done: make(chan struct{})}
	s.ln = ln
	go s.serve(ln)
	return nil
}

// detachLocked takes the listener away; the caller shuts it down after
// unlocking, since serve needs the lock to finish a datagram.
func (s *Server) detachLocked() *listener {
	ln := s.ln
	s.ln = nil
	if ln != nil {
		close(ln.stop)
		ln.conn.Close()
	}
	return ln
}

func (ln *listener) shutdown() {
	if ln != nil {
		<-ln.done
	}
}

// serve reads datagrams until the socket closes, one at a time as
// RetroArch's main loop does.
func (s *Server) serve(ln *listener) {
	defer close(ln.done)
	pkt := make([]byte, 64*1024)
	for {
		n, from, err := ln.conn.ReadFrom(pkt)
		if err != nil {
			return
		}
		delay, drop := s.admit()
		if drop {
			continue
		}
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ln.stop:
				t.Stop()
				return
			}
		}
		s.handle(ln, pkt[:n], from)
	}
}
