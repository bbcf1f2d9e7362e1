// Package daemon is `cabinet serve`, the Batocera service that ties Cabinet
// together: it owns the store and one MQTT connection (with a last will),
// takes hook events over a unix socket (acked once persisted), ingests the
// spool, watches ES's /runningGame, applies configuration changes live, and
// serves MCP over the socket and over authenticated HTTP on the LAN. Every
// part runs under one context and is restarted with backoff if it fails.
// Its configuration is its own (Config), mapped by cmd/cabinet; its time
// comes from an injected clock, so tests advance it instead of waiting.
//
// The package keeps the lifecycle, the engine around the journal, the hook
// intake and the transports; the rest is wired from their own packages: the
// clients of the configuration in force (daemon/links), the Home Assistant
// entities of the cabinet's own state and HA's controls (daemon/sensors,
// through sensorHost), the RomM reporting and the library requests' loops
// (daemon/library/rommreport, daemon/library/requests).
package daemon

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/daemon/sensors"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/bootclock"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Options are the daemon's dependencies.
type Options struct {
	// Load reads the configuration as it is now (at start and after every
	// change of ConfigFile). An error means no usable configuration could
	// be built (the cabinet id cannot be read or written): fatal at start,
	// and a reload that fails keeps the configuration in force.
	Load       func() (Loaded, error)
	ConfigFile string
	// WatchFiles are more files whose changes reload the configuration
	// (the RomM pairing: `cabinet romm pair` and `unpair` apply live). Their
	// folder is created if missing, so it can be watched.
	WatchFiles []string
	Version    string
	// LogOut receives the log lines (the rotated log file, or stderr);
	// Redactor, when set, is given the secrets after every reload.
	LogOut   io.Writer
	Redactor interface{ SetSecrets([]string) }
	// Clock is the daemon's time: timers, tickers, retries (nil: real).
	Clock clock.Clock
	// Now stamps events (default: bootclock.Now, wall + CLOCK_BOOTTIME).
	Now func() tracker.Stamp
	// ClockSynced says whether the wall clock is set (default: the
	// kernel's NTP status, or a clock chip; see bootclock.Synced).
	ClockSynced func(time.Time) bool
	// WatchInterval is the /runningGame poll period (default 3 s).
	WatchInterval time.Duration
	// DiagnosticsInterval is the diagnostics' publish period (default
	// haentities.DiagnosticsInterval, which their expire_after assumes).
	DiagnosticsInterval time.Duration
	// Ready, when set, is called once the socket and MCP over HTTP listen
	// (or MCP over HTTP has been reported unavailable).
	Ready func(*Daemon)
	// HouseholdArmed, when set, is told each wait the play-time rules'
	// loop arms (a benchmark steps its fake clock to it).
	HouseholdArmed func(time.Duration)
}

// Daemon is a running `cabinet serve`.
type Daemon struct {
	opts  Options
	clock clock.Clock
	log   zerolog.Logger
	level *levelGate

	mu      sync.Mutex
	cfg     *Config
	cfgErr  error // the last reload's error; nil when the file in force is valid
	started time.Time
	eng     *engine
	link    *mqttLink
	// linkCtx bounds the MQTT link: not the signal context, so the final
	// "stopped" state still goes out after SIGTERM.
	linkCtx    context.Context
	linkCancel context.CancelFunc
	// runCtx ends when the daemon is asked to stop: Home Assistant controls
	// still running then are cut short.
	runCtx context.Context
	mcp    mcpSet
	http   httpState
	watch  *watcher
	intake *hookIntake // nil when the intake log cannot be used
	inbox  *inboxReader
	// romm is what the RomM reporter tells the status about the
	// cabinet's device (set by reportRomM).
	romm rommreport.Note
	// rommWake wakes the RomM reporter when its configuration changes
	// (paired again, unpaired).
	rommWake chan struct{}
	// saveWake wakes the save sync when its configuration changes; saves is the sync.
	saveWake chan struct{}
	saves    *saveSync
	// clients publishes the MCP clients signed in through OAuth.
	clients *mcpClients
	// requestsWake wakes the library request follower when a request is
	// added or changed.
	requestsWake chan struct{}
	// power is sensor.power_state's value; presses the power buttons'
	// second-press rule.
	power   *sensors.PowerState
	presses power.Presses
	// sys reads the volume, the game pads and the update check (built at
	// start from what probe found).
	sys *sensors.System
	// household enforces the play-time rules (set before the parts start).
	household *household.Enforcer
	// uiModes is EmulationStation's UI mode (uimode.go).
	uiModes *uiModes
	// selected is the selection feed: what is under ES's cursor, debounced (selected.go).
	selected *selectedFeed
	// favorites are the favourites select's options and games; playSeq numbers the requests to
	// play (haentities.PlayOutcome.Seq) (play.go).
	favorites favorites
	playSeq   atomic.Uint64
	// events is the second screens' hub (/events, /marquee; screens.go
	// says who publishes what); marquees their pictures; screens what
	// the engine's applies last published (under the engine's lock).
	events   *events.Hub
	marquees *marquees
	screens  screens
	// writing serializes writes of the configuration file; reloading
	// serializes reloads (the watcher's and a write's own).
	writing, reloading sync.Mutex
}

// Run runs the daemon until ctx ends, then stops cleanly: the cabinet is
// marked offline, pending messages get a last chance, the store is closed.
func Run(ctx context.Context, opts Options) error {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Now == nil {
		opts.Now = bootclock.Now
	}
	if opts.WatchInterval <= 0 {
		opts.WatchInterval = 3 * time.Second
	}
	if opts.DiagnosticsInterval <= 0 {
		opts.DiagnosticsInterval = haentities.DiagnosticsInterval
	}
	if opts.LogOut == nil {
		opts.LogOut = io.Discard
	}
	l, err := loadProbed(opts.Load)
	if err != nil {
		return err
	}
	d := &Daemon{opts: opts, clock: opts.Clock, cfg: &l.Config, started: opts.Clock.Now(), level: newLevelGate(opts.LogOut, l.Config.LogLevel),
		rommWake: make(chan struct{}, 1), requestsWake: make(chan struct{}, 1), saveWake: make(chan struct{}, 1)}
	d.log = zerolog.New(d.level).Level(zerolog.TraceLevel).With().Timestamp().Int("pid", os.Getpid()).Str("cmd", "serve").Logger()
	if opts.Redactor != nil {
		opts.Redactor.SetSecrets(l.Config.Secrets)
	}
	if l.Err != nil {
		d.cfgErr = l.Err
		d.log.Error().Err(l.Err).Msg("configuration has invalid values; their defaults are used")
	}
	for _, w := range l.Warnings {
		d.log.Warn().Msg(w)
	}
	cfg := d.cfg

	unlock, err := singleInstance(cfg.Layout.PIDFile())
	if err != nil {
		return err
	}
	defer unlock()

	st, err := store.Open(cfg.Layout.Store(), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("open the store: %w", err)
	}
	defer st.Close()
	if st.Quarantined != "" {
		d.log.Error().Str("moved_to", st.Quarantined).Msg("the store was damaged; it was moved aside and a new one started")
	}
	owner := &journal.Owner{Store: st, Spool: journal.Spool{Dir: cfg.Layout.Spool()}, Log: d.log, Now: opts.Now}
	lg, err := journal.OpenIntake(cfg.Layout.Intake())
	if err != nil {
		d.log.Warn().Err(err).Msg("intake log unavailable; hooks wait for the store's commit")
	} else {
		defer lg.Close()
		owner.Intake = lg
	}
	d.eng = newEngine(owner, cfg.Rules, d.clock, d.log, d.afterEvent)
	d.events, d.marquees = events.New(events.Options{Clock: d.clock}), newMarquees(d)
	d.eng.observe = d.screenEvents
	d.sys = d.newSystem(cfg.System, cfg.Rules.Settings.Has)
	d.power = &sensors.PowerState{Host: sensorHost{d}, Clock: d.clock, Log: d.log}
	d.household = d.newEnforcer()
	owner.Profile = d.household.Player
	d.uiModes = newUIModes(d, cfg.System, cfg.Layout)
	d.saves = newSaveSync(d)
	d.selected = newSelectedFeed(d)
	d.favorites.wake = make(chan struct{}, 1)
	d.clients = newMCPClients(d)
	defer d.eng.stop()
	if lg != nil {
		d.intake = newHookIntake(lg, d.eng, d.clock, d.log)
	}
	if err := d.buildLinks(cfg); err != nil {
		return fmt.Errorf("the clients and MCP tools: %w", err)
	}
	// The watcher before the first apply: events applied then nudge it.
	d.watch = newWatcher(liveES{d}, opts.WatchInterval, d.clock, opts.Now, d.emitWatcher, d.cacheName, d.log)
	// The inbox watch before the crash-left files are taken: no file closed
	// from then on is missed.
	d.inbox = &inboxReader{d: d, dir: journal.InboxDir{Path: cfg.Layout.Inbox()}}
	inboxWatch, err := d.inbox.watch()
	if err != nil {
		d.log.Warn().Err(err).Msg("inbox unavailable; the wrappers start the binary for every event")
	}
	d.recover(lg)
	d.power.Set(haentities.PowerRunning)
	sock := &socket.Server{Path: cfg.Layout.Socket(), Log: d.log, Event: d.hookEvent, MCP: d.serveSocketMCP, Status: func() any { return d.FullStatus() },
		Entry: d.entry}
	ln, err := sock.Listen()
	if err != nil {
		return err
	}
	defer os.Remove(sock.Path)
	httpLn := d.listenHTTP(cfg.HTTP, cfg.Layout.Token())
	spoolWatch, err := watchDir(cfg.Layout.Spool())
	if err != nil {
		d.log.Warn().Err(err).Msg("spool not watched; it is read every half minute")
	}
	watchers := []part{{"spool", watching(cfg.Layout.Spool(), spoolWatch, d.watchSpool)}}
	if opts.ConfigFile != "" {
		dir := filepath.Dir(opts.ConfigFile)
		cfgWatch, err := watchDir(dir)
		if err != nil {
			d.log.Warn().Err(err).Msg("configuration file not watched; edits apply at the next start")
		}
		watchers = append(watchers, part{"config", watching(dir, cfgWatch, d.watchConfig)})
	}
	byDir := map[string][]string{}
	for _, f := range opts.WatchFiles {
		byDir[filepath.Dir(f)] = append(byDir[filepath.Dir(f)], f)
	}
	for dir, files := range byDir {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			d.log.Warn().Err(err).Str("dir", dir).Msg("not watched; changes apply at the next start")
			continue
		}
		w, err := watchDir(dir)
		if err != nil {
			d.log.Warn().Err(err).Str("dir", dir).Msg("not watched; changes apply at the next start")
		}
		files := files
		watchers = append(watchers, part{"watch " + filepath.Base(dir), watching(dir, w, func(ctx context.Context, w *fsnotify.Watcher) error {
			return d.watchReload(ctx, w, files...)
		})})
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.runCtx = runCtx
	// The MQTT link outlives the parts: after a SIGTERM the cabinet's stop
	// is still published through it (shutdown stops it last).
	d.linkCtx, d.linkCancel = context.WithCancel(context.Background())
	defer d.linkCancel()
	if err := d.startMQTT(d.linkCtx); err != nil {
		d.log.Error().Err(err).Msg("MQTT link not started")
	}
	parts := []part{
		{"socket", func(ctx context.Context) error { return sock.Serve(ctx, ln) }},
		{"drain", d.eng.drainLoop},
		{"intake", d.runIntake},
		{"watcher", d.watch.run},
		{"names", d.cacheNames},
		{"mcp-http", func(ctx context.Context) error { return d.serveHTTP(ctx, httpLn) }},
		{"diagnostics", d.diagnostics().Run},
		{"volume", d.sys.RunVolume},
		{"pads", d.sys.RunPads},
		{"update", d.sys.RunUpdate},
		{"artwork", d.pictures().RunArtwork},
		{"screenshots", d.pictures().RunLastScreenshot},
		{"play-today", (&sensors.PlayToday{Host: sensorHost{d}, Clock: d.clock, Log: d.log, Store: d.eng.store(),
			Now: d.opts.Now, Synced: d.clockSynced}).Run},
		{"household", d.household.Run},
		{"ui-mode", d.uiModes.run},
		{"romm-report", d.reportRomM},
		{"save-sync", d.saves.run},
		{"selected", d.selected.run},
		{"favorites", d.runFavorites},
		{"mcp-clients", d.clients.run},
		{"installs", d.keepInstalls},
		{"requests", d.followRequests},
	}
	parts = append(parts, watchers...)
	if inboxWatch != nil {
		parts = append(parts, part{"inbox", d.inboxPart(inboxWatch)})
		// Only now may wrappers hand events over in sh: the watch is armed
		// and the intake log takes what they write.
		if err := writeUpFile(cfg.Layout.UpFile()); err != nil {
			d.log.Warn().Err(err).Msg("wrappers not told the daemon is up; they start the binary for every event")
		}
		defer os.Remove(cfg.Layout.UpFile())
	}
	d.log.Info().Str("version", opts.Version).Str("socket", sock.Path).Bool("mqtt", cfg.mqttEnabled()).Msg("cabinet serve started")
	if opts.Ready != nil {
		opts.Ready(d)
	}
	supervise(runCtx, d.clock, d.log, parts)
	return d.shutdown()
}

// recover records discovery with the current settings (clearing configs
// no longer produced) and applies what a previous owner of the store left:
// events a crashed daemon acked, hooks' events on a full disk, the spool.
// A store that refuses writes (a full disk) is no reason not to start: the
// engine retries, and the hooks' events wait in the intake log meanwhile.
func (d *Daemon) recover(lg *journal.IntakeLog) {
	left := 0
	if lg != nil {
		left = len(lg.Pending())
	}
	// Records a crashed daemon left in the inbox: into the intake log
	// first, in stamp order, so they are applied with the rest.
	d.inbox.sweep()
	if _, err := d.eng.apply(); err != nil {
		if left > 0 {
			d.log.Error().Err(err).Int("events", left).Msg("events left in the intake log not applied yet; retrying")
		}
		return
	}
	if left > 0 {
		d.log.Info().Int("events", left).Msg("applied the events left in the intake log")
	}
}

// shutdown marks the cabinet offline (tracker "stopped": availability
// offline, activity off), gives pending messages a last chance and stops
// the MQTT link, which publishes offline itself before it disconnects.
func (d *Daemon) shutdown() error {
	// Wrappers fall back to the binary from now on; what they wrote before
	// is taken here, and what a late one writes by the service's drain.
	os.Remove(d.config().Layout.UpFile())
	d.inbox.sweep()
	d.inbox.stop()
	d.selected.hub.Close() // the subscribers' streams end
	// Before the tracker's stop: drained ahead of offline.
	d.power.Set(d.power.AtStop(d.config().System.ShutdownFlag))
	ev := d.opts.Now().Event(tracker.KindStopped, tracker.SourceES)
	if _, err := d.eng.apply(journal.NewKeyed(ev)); err != nil {
		d.log.Error().Err(err).Msg("record stop; the intake and the spool are applied at the next start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	d.eng.drain(ctx)
	d.mu.Lock()
	link := d.link
	d.mu.Unlock()
	if link != nil {
		link.stop(ctx)
	}
	d.log.Info().Msg("cabinet serve stopped")
	return nil
}
