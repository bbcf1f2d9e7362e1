// Package fakees is a fake EmulationStation web API: an http.Handler that
// answers like Batocera's ES on 127.0.0.1:1234, quirks included (string-valued
// metadata, the duplicated theme key, 201 sentinels, POST /launch answering
// 200 for anything, launches queued behind a running game, /emukill answering
// once the emulator is gone), over a library.Library.
//
// It also models the ES UI thread that the API posts work to: the launch
// transition, the running game, the return to the UI, and the screensaver,
// sleep and quit states, firing ES events through an EventSink exactly where
// ES fires them. Driver methods (Start, StartScreensaver, Quit, ...) play the
// user at the cabinet. Faults make it misbehave on the wire. Listener serves
// it on a 127.0.0.1 port that can be closed and reopened. Through hooks in
// Config (ROMs, WriteFile, Media) it reads and writes a disk the way ES
// does, without knowing where that disk is: /reloadgames rescans the ROM
// folders, uploaded media are saved at the scraper's save-as paths.
package fakees

import (
	"context"
	"io/fs"
	"regexp"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// EventSink receives ES events where ES would run its event scripts
// (Scripting::fireEvent): the event name and up to three arguments, exactly
// as ES passes them (game-start's path already escaped). It is called on the
// fake's UI thread, so it must return promptly (ES forks and forgets, except
// for root "quit" scripts) and must not call the Server's driver methods;
// HTTP requests to the Server are fine.
type EventSink interface {
	Fire(event string, args ...string)
}

// Emulator runs a game. Run blocks while the game runs and returns its exit
// code; ctx is cancelled by /emukill, EndGame or the play timer, and Run must
// then return promptly. Only exit code 0 updates play statistics.
type Emulator interface {
	Run(ctx context.Context, game library.Game) (exitCode int, err error)
}

// Defaults for Config fields left zero.
const (
	DefaultVersion     = "42"
	DefaultLaunchDelay = time.Second            // POST /launch to running (launch_timeline_smb.txt)
	DefaultReturnDelay = 300 * time.Millisecond // UI re-init after a game before queued work runs
)

// Config configures a Server. The zero value serves library.Fixture("").
type Config struct {
	Library *library.Library
	// Version is /caps "Version" (batocera-version's first line on a cabinet).
	Version string
	// Collections are the enabled auto collections, listed after the systems
	// in ES's order ("all", "favorites", "recent"); nil means all three.
	Collections []string
	Clock       Clock
	Events      EventSink // nil discards events
	Emulator    Emulator  // nil: a built-in emulator that runs until stopped
	// LaunchDelay is the launch transition: from the moment the UI thread
	// takes a launch to game-start and /runningGame turning 200.
	LaunchDelay time.Duration
	// ReturnDelay is how long the UI takes after a game before it runs work
	// posted meanwhile; with LaunchDelay it makes a queued launch start ~1.3 s
	// after the previous game ended (launch_queue_timeline.txt).
	ReturnDelay time.Duration
	// PlayTime ends every game after this long with exit code 0; 0 means a
	// game runs until /emukill, EndGame or the emulator ends it.
	PlayTime time.Duration
	// KeepQueuedLaunchOnReload turns off the observed quirk that a
	// /reloadgames posted behind a queued /launch cancels that launch.
	KeepQueuedLaunchOnReload bool
	// PublicWebAccess lets peers other than 127.0.0.1 in (ES's setting).
	PublicWebAccess bool
	// Media returns the bytes of a media file by its stored path; nil serves
	// what was uploaded through the API (when WriteFile is nil), else
	// DefaultMedia.
	Media func(path string) ([]byte, bool)
	// WriteFile stores an uploaded media file at its absolute cabinet path,
	// creating its folder, as HttpApi::ImportMedia writes at the scraper's
	// save-as path (<system folder>/images/<stem>-image.png, ...). Nil keeps
	// uploads in memory, where the default Media serves them; a Config that
	// sets WriteFile sets Media to read them back. ES ignores a failed
	// write, and so does the fake: the metadata is set all the same.
	WriteFile func(path string, data []byte) error
	// Settings is es_settings.cfg, read as ES reads it at each Start: its
	// UIMode "Kid" makes /systems count only kidgame games and hide what
	// has none. "": Full.
	Settings string
	// ROMs is the disk behind the library: the ROM folder of a system
	// (<RomsRoot>/<system>) as a file system. When set, /reloadgames
	// rescans every system's folder as ES's populateFolder does and makes
	// the library match it: a new file with one of the system's
	// extensions becomes a game, subfolders included, and a game whose file
	// is gone is dropped (pinned games excepted, see library.Sync). Hidden
	// entries (".name") are never games. Nil, or a nil fs.FS for a system,
	// leaves the library as it is.
	ROMs func(system string) fs.FS
}

type phase int

const (
	phaseIdle       phase = iota // the UI thread is free
	phaseTransition              // launch animation running, game not started yet
	phasePlaying                 // emulator running, UI thread blocked
	phaseReturning               // emulator gone, UI re-initialising, still blocked
)

// Server is the fake ES. Create it with New; it is safe for concurrent use.
type Server struct {
	cfg      Config
	lib      *library.Library
	clock    Clock
	events   EventSink
	emulator Emulator
	routes   routes
	decls    []library.MetaDecl

	// ui serialises what ES does on its UI thread, event firing included;
	// mu guards the state the HTTP thread reads. Lock order: ui, then mu.
	ui sync.Mutex
	mu sync.Mutex

	phase      phase
	gen        int // bumps on every transition start; stale timers compare it
	pending    *pendingLaunch
	transition clock.Timer
	run        *session
	queue      []posted

	sleeping      bool
	saver         string        // active screensaver behaviour, "" when inactive
	shown         *library.Game // game shown by a video/slideshow screensaver
	rotation      int
	selected      string // system selected in the UI
	settingsSaved bool   // es_settings.cfg saved since start (first launch saves it)
	kid           bool   // UIMode was Kid in Config.Settings at the last Start
	closed        bool

	faults Faults
	calls  []Call
	counts map[string]int

	uploadsMu sync.Mutex
	uploads   map[string][]byte // media uploaded while Config.WriteFile is nil, by path
}

type pendingLaunch struct {
	game      library.Game
	fromQueue bool
}

// session is one running game.
type session struct {
	game      library.Game
	start     time.Time
	cancel    context.CancelFunc
	done      chan struct{} // closed when the end of the game is fully processed
	exitCode  *int          // set by EndGame / the play timer (guarded by Server.mu)
	playTimer clock.Timer
}

// New returns a Server for cfg, with defaults for zero fields.
func New(cfg Config) *Server {
	if cfg.Library == nil {
		cfg.Library = library.Fixture("")
	}
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
	}
	if cfg.Collections == nil {
		cfg.Collections = []string{"all", "favorites", "recent"}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Events == nil {
		cfg.Events = discard{}
	}
	if cfg.Emulator == nil {
		cfg.Emulator = waitEmulator{}
	}
	if cfg.LaunchDelay == 0 {
		cfg.LaunchDelay = DefaultLaunchDelay
	}
	if cfg.ReturnDelay == 0 {
		cfg.ReturnDelay = DefaultReturnDelay
	}
	s := &Server{cfg: cfg, lib: cfg.Library, clock: cfg.Clock, events: cfg.Events,
		emulator: cfg.Emulator, counts: map[string]int{}, decls: library.MetaDecls()}
	if s.cfg.WriteFile == nil {
		s.cfg.WriteFile = s.keepUpload
	}
	if s.cfg.Media == nil {
		s.cfg.Media = s.uploadedMedia
	}
	s.routes.compile()
	s.kid = readKid(cfg.Settings)
	if sys := s.lib.Systems(); len(sys) > 0 {
		s.selected = sys[0].Name
	}
	return s
}

// Library is the library the Server serves.
func (s *Server) Library() *library.Library { return s.lib }

// Running returns the game /runningGame reports (ES's mRunningGame).
func (s *Server) Running() (library.Game, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		return library.Game{}, false
	}
	return s.run.game, true
}

// Launching reports whether a launch transition is under way.
func (s *Server) Launching() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase == phaseTransition
}

// Queued is the number of posted UI actions waiting for the running game.
func (s *Server) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Sleeping reports ES's sleep flag.
func (s *Server) Sleeping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sleeping
}

// Screensaver returns the active screensaver behaviour, "" when none.
func (s *Server) Screensaver() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saver
}

func (s *Server) fire(event string, args ...string) { s.events.Fire(event, args...) }

type discard struct{}

func (discard) Fire(string, ...string) {}

// waitEmulator is the built-in emulator: the game runs until stopped.
type waitEmulator struct{}

func (waitEmulator) Run(ctx context.Context, _ library.Game) (int, error) {
	<-ctx.Done()
	return 0, nil
}

// routes holds the greedy cpp-httplib patterns, compiled per Server so that
// the package does no work at init.
type routes struct {
	logo, games, media, game, system, addgames, removegames *regexp.Regexp
}

func (r *routes) compile() {
	// std::regex "." does not match line terminators; neither does [^\r\n].
	const any = `(/?[^\r\n]*)`
	r.logo = regexp.MustCompile(`^/systems/` + any + `/logo$`)
	r.games = regexp.MustCompile(`^/systems/` + any + `/games$`)
	r.media = regexp.MustCompile(`^/systems/` + any + `/games/` + any + `/media/` + any + `$`)
	r.game = regexp.MustCompile(`^/systems/` + any + `/games/` + any + `$`)
	r.system = regexp.MustCompile(`^/systems/` + any + `$`)
	r.addgames = regexp.MustCompile(`^/addgames/` + any + `$`)
	r.removegames = regexp.MustCompile(`^/removegames/` + any + `$`)
}
