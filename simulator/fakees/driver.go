package fakees

import (
	"errors"
	"fmt"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// Screensaver behaviours (ES setting ScreenSaverBehavior).
const (
	ScreensaverDim       = "dim"
	ScreensaverBlack     = "black"
	ScreensaverVideo     = "random video"
	ScreensaverSlideshow = "slideshow"
	ScreensaverSuspend   = "suspend"
)

// errGameRunning: the UI thread is blocked while a game runs, so nothing a
// user does in the UI can happen then.
var errGameRunning = errors.New("a game is running: the ES UI is blocked")

// busy reports whether the UI thread is blocked by a game (mu held).
func (s *Server) busy() bool { return s.phase == phasePlaying || s.phase == phaseReturning }

// takeIdleUI takes the UI thread and the state lock for a user action. It
// fails, holding neither, while a game blocks the UI. The caller releases
// s.mu once done with the state and s.ui when the action is over.
func (s *Server) takeIdleUI() error {
	s.ui.Lock()
	s.mu.Lock()
	if s.busy() {
		s.mu.Unlock()
		s.ui.Unlock()
		return errGameRunning
	}
	return nil
}

// Start is ES starting up: start, then system-selected for the first system
// shown (events_startup_and_screensaver.txt). It also resets the "first
// launch saves the settings" state.
func (s *Server) Start() {
	s.ui.Lock()
	defer s.ui.Unlock()
	kid := readKid(s.cfg.Settings)
	s.mu.Lock()
	s.settingsSaved = false
	s.kid = kid
	sys := s.selected
	s.mu.Unlock()
	s.fire("start")
	if sys != "" {
		s.fire("system-selected", sys)
	}
}

// SelectSystem is the carousel stopping on a system: system-selected.
func (s *Server) SelectSystem(name string) error {
	if _, ok := s.lib.System(name); !ok {
		return fmt.Errorf("select system %q: no such system", name)
	}
	if err := s.takeIdleUI(); err != nil {
		return err
	}
	defer s.ui.Unlock()
	s.selected = name
	s.mu.Unlock()
	s.fire("system-selected", name)
	return nil
}

// SelectGame is the cursor moving onto a game: game-selected with system,
// raw path and name (FileData::setSelectedGame).
func (s *Server) SelectGame(system, id string) error {
	g, ok := s.lib.Game(system, id)
	if !ok {
		return fmt.Errorf("select game %s/%s: no such game", system, id)
	}
	if err := s.takeIdleUI(); err != nil {
		return err
	}
	defer s.ui.Unlock()
	s.mu.Unlock()
	s.fire("game-selected", g.System, g.Path, g.Name)
	return nil
}

// Launch is a user launching a game from the UI: input cancels the
// screensaver (screensaver-stop, wake if sleeping), then the transition.
func (s *Server) Launch(system, id string) error {
	g, ok := s.lib.Game(system, id)
	if !ok {
		return fmt.Errorf("launch %s/%s: no such game", system, id)
	}
	if err := s.takeIdleUI(); err != nil {
		return err
	}
	defer s.ui.Unlock()
	s.mu.Unlock()
	s.cancelScreensaver()
	s.startTransition(g, false)
	return nil
}

// StartScreensaver is the idle timer firing (SystemScreenSaver::
// startScreenSaver): screensaver-start <behaviour> on the inactive→active
// transition only. dim and black also put ES to sleep (sleep); random video
// and slideshow show a game (game-selected); suspend suspends the machine
// and cancels the screensaver at once, so no screensaver-stop follows.
func (s *Server) StartScreensaver(behaviour string) error {
	switch behaviour {
	case ScreensaverDim, ScreensaverBlack, ScreensaverVideo, ScreensaverSlideshow, ScreensaverSuspend:
	default:
		return fmt.Errorf("start screensaver: unknown behaviour %q (want dim, black, random video, slideshow or suspend)", behaviour)
	}
	if err := s.takeIdleUI(); err != nil {
		return err
	}
	defer s.ui.Unlock()
	if s.saver != "" {
		s.mu.Unlock()
		return nil // already active: ES fires nothing
	}
	if behaviour != ScreensaverSuspend {
		s.saver = behaviour
	}
	s.mu.Unlock()
	s.fire("screensaver-start", behaviour)
	switch behaviour {
	case ScreensaverDim, ScreensaverBlack:
		s.sleepLocked()
	case ScreensaverVideo, ScreensaverSlideshow:
		if g, ok := s.nextScreensaverGame(); ok {
			s.showLocked(g)
		}
	}
	return nil
}

// nextScreensaverGame picks games in a fixed rotation, so runs repeat.
func (s *Server) nextScreensaverGame() (library.Game, bool) {
	all := s.lib.AllGames()
	if len(all) == 0 {
		return library.Game{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := all[s.rotation%len(all)]
	s.rotation++
	return g, true
}

// ScreensaverShow makes a random video or slideshow screensaver move on to
// the given game: game-selected (system, raw path, name), nothing else.
func (s *Server) ScreensaverShow(system, id string) error {
	g, ok := s.lib.Game(system, id)
	if !ok {
		return fmt.Errorf("screensaver show %s/%s: no such game", system, id)
	}
	s.ui.Lock()
	defer s.ui.Unlock()
	s.mu.Lock()
	saver := s.saver
	s.mu.Unlock()
	if saver != ScreensaverVideo && saver != ScreensaverSlideshow {
		return fmt.Errorf("screensaver show: the active screensaver is %q, not random video or slideshow", saver)
	}
	s.showLocked(g)
	return nil
}

func (s *Server) showLocked(g library.Game) {
	s.mu.Lock()
	s.shown = &g
	s.mu.Unlock()
	s.fire("game-selected", g.System, g.Path, g.Name)
}

// ScreensaverLaunch is the user launching the game a video or slideshow
// screensaver shows: game-selected for it, screensaver-stop, then the launch
// (game-start a launch delay later).
func (s *Server) ScreensaverLaunch() error {
	s.ui.Lock()
	defer s.ui.Unlock()
	s.mu.Lock()
	shown := s.shown
	s.mu.Unlock()
	if shown == nil {
		return errors.New("screensaver launch: no screensaver game is shown")
	}
	g := *shown
	s.fire("game-selected", g.System, g.Path, g.Name)
	s.cancelScreensaver()
	s.startTransition(g, false)
	return nil
}

// StopScreensaver is input while the screensaver runs (Window::
// cancelScreenSaver): screensaver-stop if one is active, wake if asleep.
func (s *Server) StopScreensaver() {
	s.ui.Lock()
	defer s.ui.Unlock()
	s.cancelScreensaver()
}

func (s *Server) cancelScreensaver() {
	s.mu.Lock()
	active, sleeping := s.saver != "", s.sleeping
	s.saver, s.shown, s.sleeping = "", nil, false
	s.mu.Unlock()
	if active {
		s.fire("screensaver-stop")
	}
	if sleeping {
		s.fire("wake")
	}
}

// Sleep is ES going to sleep at the idle threshold: sleep, once.
func (s *Server) Sleep() error {
	if err := s.takeIdleUI(); err != nil {
		return err
	}
	defer s.ui.Unlock()
	s.mu.Unlock()
	s.sleepLocked()
	return nil
}

func (s *Server) sleepLocked() {
	s.mu.Lock()
	was := s.sleeping
	s.sleeping = true
	s.mu.Unlock()
	if !was {
		s.fire("sleep")
	}
}

// Wake is input while asleep: wake, if ES was sleeping.
func (s *Server) Wake() {
	s.ui.Lock()
	defer s.ui.Unlock()
	s.mu.Lock()
	was := s.sleeping
	s.sleeping = false
	s.mu.Unlock()
	if was {
		s.fire("wake")
	}
}

// Quit is ES quitting: mode "" is a plain quit (ES saves its settings, then
// fires quit at exit: config-changed, settings-changed, quit —
// events_quit.txt); "reboot" and "shutdown" fire quit <mode> and then
// <mode> (Platform.cpp quitES). The HTTP server keeps running; stop the
// Listener to model ES gone.
func (s *Server) Quit(mode string) error {
	switch mode {
	case "", "reboot", "shutdown":
	default:
		return fmt.Errorf("quit: unknown mode %q (want \"\", reboot or shutdown)", mode)
	}
	s.ui.Lock()
	defer s.ui.Unlock()
	s.quitLocked(mode)
	return nil
}

// quitLocked fires what Quit fires (ui held).
func (s *Server) quitLocked(mode string) {
	if mode == "" {
		s.fire("config-changed")
		s.fire("settings-changed")
		s.fire("quit")
		return
	}
	s.fire("quit", mode)
	s.fire(mode)
}
