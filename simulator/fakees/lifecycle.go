package fakees

import (
	"context"
	"strings"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// postKind is what an API call queues on ES's UI thread.
type postKind int

const (
	postLaunch postKind = iota // POST /launch that matched a game
	postReload                 // GET /reloadgames: rescan, then system-selected
	postOther                  // messagebox, metadata/media view refresh, storage event
	postQuit                   // GET /quit: SDL_QUIT, handled by the main loop (after the game)
)

type posted struct {
	kind postKind
	game library.Game
}

// launchPath is POST /launch after the body check: the path is made
// absolute like Utils::FileSystem::getAbsolutePath (ES's cwd is /userdata)
// and compared with every game's stored path; a match is posted.
func (s *Server) launchPath(body string) {
	path := esevents.GenericPath(body)
	if !strings.HasPrefix(path, "/") {
		path = esevents.GenericPath("/userdata/" + path)
	}
	if g, ok := s.lib.GameByPath(path); ok {
		s.post(posted{kind: postLaunch, game: g})
	}
}

// post is Window::postToUiThread: it clears the sleep flag without firing
// wake (Window.cpp:1241-1246); the work runs now if the UI thread is free
// (a launch transition does not block it) and after the game otherwise.
func (s *Server) post(p posted) {
	s.ui.Lock()
	defer s.ui.Unlock()
	s.postLocked(p)
}

func (s *Server) postLocked(p posted) {
	s.mu.Lock()
	s.sleeping = false
	if s.phase == phasePlaying || s.phase == phaseReturning {
		s.queue = append(s.queue, p)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.runPosted(p, false)
}

// runPosted runs one piece of posted work on the UI thread (ui held).
func (s *Server) runPosted(p posted, fromQueue bool) {
	switch p.kind {
	case postLaunch:
		// The posted lambda: cancelScreenSaver(); ViewController::launch.
		s.cancelScreensaver()
		s.startTransition(p.game, fromQueue)
	case postReload:
		s.mu.Lock()
		cancel := s.phase == phaseTransition && s.pending.fromQueue && !s.cfg.KeepQueuedLaunchOnReload
		if cancel {
			// Observed: a reload posted right behind a queued launch
			// rebuilt the views during the transition and the launch
			// never happened.
			s.transition.Stop()
			s.phase, s.pending, s.transition = phaseIdle, nil, nil
		}
		s.mu.Unlock()
		s.rescan() // the systems reloaded from their folders and gamelists
		s.mu.Lock()
		sys := s.selected
		s.mu.Unlock()
		// Observed: a reload fires system-selected twice, and no
		// update-gamelists.
		s.fire("system-selected", sys)
		s.fire("system-selected", sys)
	case postQuit:
		s.quitLocked("")
	}
}

// quitRoute is what GET /quit, /restart and /shutdown make ES do
// (HttpServerThread.cpp, Platform.cpp quitES), short of quitting: /restart
// and /shutdown fire quit reboot|shutdown and reboot|shutdown at once, on
// the HTTP thread; a plain /quit fires its events at exit, which ES reaches
// only once its main loop takes the SDL_QUIT, after a running game.
// /quit?confirm=menu opens the Quit menu and fires nothing. The fake never
// exits, reboots or powers off: Calls records what was asked, and stopping
// the Listener models ES gone.
func (s *Server) quitRoute(path, confirm string) {
	switch {
	case path == "/restart":
		s.Quit("reboot")
	case path == "/shutdown":
		s.Quit("shutdown")
	case confirm == "menu" || confirm == "switchscreen":
		// A dialog on the UI thread: nothing quits until someone answers.
	default:
		// SDL_PushEvent, not postToUiThread: the sleep flag stays.
		s.ui.Lock()
		defer s.ui.Unlock()
		s.mu.Lock()
		playing := s.phase == phasePlaying || s.phase == phaseReturning
		if playing {
			s.queue = append(s.queue, posted{kind: postQuit})
		}
		s.mu.Unlock()
		if !playing {
			s.quitLocked("")
		}
	}
}

// startTransition starts ViewController::launch's animation; a launch
// during a transition replaces the pending one (ui held).
func (s *Server) startTransition(g library.Game, fromQueue bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.transition != nil {
		s.transition.Stop()
	}
	s.gen++
	gen := s.gen
	s.phase = phaseTransition
	s.pending = &pendingLaunch{game: g, fromQueue: fromQueue}
	s.transition = s.clock.AfterFunc(s.cfg.LaunchDelay, func() { s.launchGame(gen) })
}

// launchGame is FileData::launchGame up to the blocking emulator run:
// game-start is fired before mRunningGame is set.
func (s *Server) launchGame(gen int) {
	s.ui.Lock()
	defer s.ui.Unlock()
	s.mu.Lock()
	if s.gen != gen || s.phase != phaseTransition {
		s.mu.Unlock()
		return // replaced or cancelled
	}
	if s.closed {
		s.mu.Unlock()
		return
	}
	g := s.pending.game
	s.pending, s.transition = nil, nil
	firstLaunch := !s.settingsSaved
	s.settingsSaved = true
	s.mu.Unlock()
	if fresh, ok := s.lib.Game(g.System, g.ID); ok {
		g = fresh // metadata may have changed while the launch was queued
	}
	if firstLaunch {
		// Observed: the first launch after start saves es_settings.cfg.
		s.fire("config-changed")
		s.fire("settings-changed")
	}
	s.fire("game-start", esevents.EscapedPath(g.Path), library.Stem(g.Path), g.Name)

	ctx, cancel := context.WithCancel(context.Background())
	sess := &session{game: g, start: s.clock.Now(), cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.phase, s.run = phasePlaying, sess
	if s.cfg.PlayTime > 0 {
		sess.playTimer = s.clock.AfterFunc(s.cfg.PlayTime, func() {
			natural := 0 // the game ended by itself
			s.endSession(sess, &natural)
		})
	}
	s.mu.Unlock()
	go s.play(ctx, sess)
}

// play runs the emulator and then what launchGame does after it exits.
func (s *Server) play(ctx context.Context, sess *session) {
	code, err := s.emulator.Run(ctx, sess.game)
	if err != nil && code == 0 {
		code = -1 // an emulator that failed to run did not exit cleanly
	}
	s.ui.Lock()
	defer s.ui.Unlock()
	end := s.clock.Now()
	s.mu.Lock()
	if sess.exitCode != nil {
		code = *sess.exitCode
	}
	if sess.playTimer != nil {
		sess.playTimer.Stop()
	}
	s.run, s.phase = nil, phaseReturning // mRunningGame cleared before game-end
	s.mu.Unlock()
	sess.cancel()
	s.fire("game-end")
	s.lib.RecordPlay(sess.game.System, sess.game.ID, code, sess.start, end) // after game-end
	s.mu.Lock()
	s.clock.AfterFunc(s.cfg.ReturnDelay, s.uiReturned)
	s.mu.Unlock()
	close(sess.done)
}

// uiReturned: the UI thread is back and runs the work posted meanwhile, in
// one batch.
func (s *Server) uiReturned() {
	s.ui.Lock()
	defer s.ui.Unlock()
	s.mu.Lock()
	if s.phase != phaseReturning {
		s.mu.Unlock()
		return
	}
	s.phase = phaseIdle
	batch := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, p := range batch {
		s.runPosted(p, true)
	}
}

// endSession stops a game with the given exit code (nil: whatever the
// emulator returns) and waits until its end is fully processed.
func (s *Server) endSession(sess *session, code *int) {
	s.mu.Lock()
	if code != nil && sess.exitCode == nil {
		sess.exitCode = code
	}
	s.mu.Unlock()
	sess.cancel()
	<-sess.done
}

// emuKill is /emukill: it kills the running emulator and returns once it is
// gone (batocera-es-swissknife --emukill runs synchronously); with nothing
// running it returns at once.
func (s *Server) emuKill(ctx context.Context) {
	s.mu.Lock()
	sess := s.run
	s.mu.Unlock()
	if sess == nil {
		return
	}
	sess.cancel()
	select {
	case <-sess.done:
	case <-ctx.Done():
	}
}

// EndGame ends the running game from outside, as when RetroArch receives
// QUIT, with the given exit code, and returns once ES has processed the end
// (game-end fired, statistics updated). It reports whether a game ran.
func (s *Server) EndGame(exitCode int) bool {
	s.mu.Lock()
	sess := s.run
	s.mu.Unlock()
	if sess == nil {
		return false
	}
	s.endSession(sess, &exitCode)
	return true
}

// Close ends the running game, if any, and waits until its emulator has
// returned; launches still pending never start. Use it when the simulator
// or a test is done with the Server.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	if s.transition != nil {
		s.transition.Stop()
	}
	sess := s.run
	s.mu.Unlock()
	if sess != nil {
		s.endSession(sess, nil)
	}
}
