// Package daemon is `cabinet serve`, the Batocera service that ties Cabinet
// together: it owns the store and one MQTT connection (with a last will),
// takes hook events over a unix socket (acked once persisted), ingests the
// spool, watches ES's /runningGame, applies configuration changes live, and
// serves MCP over the socket and over authenticated HTTP on the LAN. Every
// part runs under one context and is restarted with backoff if it fails.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/cmd/cabinet/logfile"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/outbox"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal/intake"
)

// Options are the daemon's dependencies.
type Options struct {
	// Load reads the configuration as it is now (at start and after every
	// change of the file).
	Load    func() *config.Loaded
	Version string
	// LogOut receives the log lines (the rotated log file, or stderr);
	// Redactor, when set, is given the secrets after every reload.
	LogOut   io.Writer
	Redactor *logfile.Redactor
	// Now stamps events (default: the hook's clock, wall + CLOCK_BOOTTIME).
	Now func() tracker.Stamp
	// WatchInterval is the /runningGame poll period (default 3 s).
	WatchInterval time.Duration
	// DiagnosticsInterval is the diagnostics' publish period (default
	// haentities.DiagnosticsInterval, which their expire_after assumes).
	DiagnosticsInterval time.Duration
	// Ready, when set, is called once everything listens.
	Ready func(*Daemon)
}

// Daemon is a running `cabinet serve`.
type Daemon struct {
	opts  Options
	log   zerolog.Logger
	level *levelGate

	mu      sync.Mutex
	cfg     *config.Config
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
	runCtx   context.Context
	mcp      mcpSet
	httpAddr string
	watch    *watcher
	esClient *es.Client
	intake   *hookIntake // nil when the intake log cannot be used
}

// Status is what `cabinet doctor` and the health tool see of the daemon.
type Status struct {
	PID           int       `json:"pid"`
	Version       string    `json:"version"`
	Started       time.Time `json:"started"`
	ConfigError   string    `json:"config_error,omitempty"`
	MQTTEnabled   bool      `json:"mqtt_enabled"`
	MQTTConnected bool      `json:"mqtt_connected"`
	MQTTError     string    `json:"mqtt_error,omitempty"`
	Reconnects    int64     `json:"mqtt_reconnects"`
	OutboxDepth   int       `json:"outbox_depth"`
	OutboxDropped uint64    `json:"outbox_dropped"`
	OutboxExpired uint64    `json:"outbox_expired"`
	Sessions      int       `json:"sessions"`
}

// Run runs the daemon until ctx ends, then stops cleanly: the cabinet is
// marked offline, pending messages get a last chance, the store is closed.
func Run(ctx context.Context, opts Options) error {
	if opts.Now == nil {
		opts.Now = stampNow
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
	l := opts.Load()
	d := &Daemon{opts: opts, cfg: &l.Config, started: time.Now(), level: newLevelGate(opts.LogOut, l.Config.LogLevel)}
	d.log = zerolog.New(d.level).Level(zerolog.TraceLevel).With().Timestamp().Int("pid", os.Getpid()).Str("cmd", "serve").Logger()
	if opts.Redactor != nil {
		opts.Redactor.SetSecrets(l.Config.Secrets())
	}
	if l.Err != nil {
		d.cfgErr = l.Err
		d.log.Error().Err(l.Err).Msg("configuration has invalid values; their defaults are used")
	}
	for _, w := range l.Warnings {
		d.log.Warn().Msg(w)
	}
	cfg := d.cfg

	unlock, err := singleInstance(cfg.RunDir())
	if err != nil {
		return err
	}
	defer unlock()

	settings, err := haSettings(cfg, opts.Version)
	if err != nil {
		return fmt.Errorf("home assistant settings: %w", err)
	}
	store, err := outbox.Open(journal.StorePath(cfg), outbox.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("open the store: %w", err)
	}
	defer store.Close()
	if store.Quarantined != "" {
		d.log.Error().Str("moved_to", store.Quarantined).Msg("the store was damaged; it was moved aside and a new one started")
	}
	j := journal.Journal{Settings: settings, Tracker: journal.TrackerConfig(cfg), Publishing: cfg.MQTTEnabled()}
	d.eng = newEngine(store, journal.Spool{Dir: journal.SpoolDir(cfg)}, j, d.log, opts.Now)
	defer d.eng.stop()
	// Record discovery with the current settings (clearing configs we no
	// longer produce) and ingest what the spool holds. A store that refuses
	// writes (a full disk) is no reason not to start: the engine retries,
	// and the hooks' events wait in the intake log meanwhile.
	d.eng.apply()

	d.esClient, err = es.New(es.Config{URL: cfg.ESURL})
	if err != nil {
		return err
	}
	d.watch = newWatcher(d.esClient, opts.WatchInterval, opts.Now, d.emitWatcher, d.cacheName, d.log)

	if err := d.buildMCP(cfg); err != nil {
		return fmt.Errorf("MCP tools: %w", err)
	}
	if lg, err := intake.Open(journal.IntakePath(cfg)); err != nil {
		d.log.Warn().Err(err).Msg("intake log unavailable; hooks wait for the store's commit")
	} else {
		defer lg.Close()
		d.intake = newHookIntake(lg, d.eng, d.log, d.afterHookEvent)
		// Events acked before a crash, not yet in the store: first (when
		// the store refuses them now, the intake's loop retries them, still
		// ahead of anything newer).
		d.intake.recover()
	}
	sock := &socketServer{path: journal.SocketPath(cfg), log: d.log, event: d.hookEvent, mcp: d.serveSocketMCP, status: func() any { return d.Status() }}
	ln, err := sock.listen()
	if err != nil {
		return err
	}
	defer os.Remove(sock.path)

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
		{"socket", func(ctx context.Context) error { return sock.serve(ctx, ln) }},
		{"drain", d.eng.drainLoop},
		{"intake", d.runIntake},
		{"watcher", d.watch.run},
		{"spool", d.watchSpool},
		{"config", d.watchConfig},
		{"names", d.cacheNames},
		{"mcp-http", d.serveHTTP},
		{"diagnostics", d.publishDiagnostics},
	}
	d.log.Info().Str("version", opts.Version).Str("socket", sock.path).Bool("mqtt", cfg.MQTTEnabled()).Msg("cabinet serve started")
	if opts.Ready != nil {
		opts.Ready(d)
	}
	supervise(runCtx, d.log, parts)
	return d.shutdown()
}

// shutdown marks the cabinet offline (tracker "stopped": availability
// offline, activity off), gives pending messages a last chance and stops
// the MQTT link, which publishes offline itself before it disconnects.
func (d *Daemon) shutdown() error {
	if d.intake != nil {
		if err := d.intake.apply(); err != nil {
			d.log.Error().Err(err).Msg("intake not applied; it is applied at the next start")
		}
	}
	ev := d.opts.Now().Event(tracker.KindStopped, tracker.SourceES)
	if _, err := d.eng.apply(journal.Keyed(journal.NewKey(ev), ev)); err != nil {
		d.log.Error().Err(err).Msg("record stop")
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

// hookEvent applies an event a hook handed over the socket.
func (d *Daemon) hookEvent(key string, req journal.Request) error {
	if err := journal.CheckKey(key); err != nil {
		return err
	}
	ev := req.Event.Normalize()
	if err := ev.Validate(); err != nil {
		return err
	}
	if d.intake != nil {
		return d.intake.accept(key, ev)
	}
	if _, err := d.eng.apply(journal.Keyed(key, ev)); err != nil {
		return err
	}
	d.afterHookEvent(ev)
	return nil
}

// runIntake applies the hooks' events as they arrive.
func (d *Daemon) runIntake(ctx context.Context) error {
	if d.intake == nil {
		<-ctx.Done()
		return nil
	}
	return d.intake.run(ctx)
}

// afterHookEvent runs once an event is in the store: after a hook's, ES is
// asked right away what runs (the watcher's own events need no second
// look), and after a game's end the game lists' counts are stale.
func (d *Daemon) afterHookEvent(ev tracker.Event) {
	hooked := ev.Source != tracker.SourceWatcher
	if hooked && (ev.Kind == tracker.KindGameStart || ev.Kind == tracker.KindGameEnd || ev.Kind == tracker.KindStart) {
		d.watch.nudge()
	}
	if ev.Kind == tracker.KindGameEnd {
		d.invalidateGames() // play counts and last played moved
	}
}

// emitWatcher records an event the /runningGame watcher saw. It goes
// through the intake log like a hook's: persisted at once, kept through a
// full disk, and applied in the order it was seen among the hooks' events.
func (d *Daemon) emitWatcher(ev tracker.Event) {
	key := journal.NewKey(ev)
	if d.intake != nil {
		if err := d.intake.accept(key, ev); err != nil {
			d.log.Error().Err(err).Msg("record watcher event")
		}
		return
	}
	if _, err := d.eng.apply(journal.Keyed(key, ev)); err != nil {
		d.log.Error().Err(err).Msg("record watcher event")
	}
	d.afterHookEvent(ev)
}

// cacheName keeps ES's name of a game, for the hooks that only see argv.
func (d *Daemon) cacheName(g es.Game) {
	d.eng.store.Update(func(tx *outbox.Tx) error {
		if n, ok := tx.Name(g.Path); ok && n.Name == g.Name && n.System == g.System {
			return nil
		}
		return tx.PutName(g.Path, outbox.Name{Name: g.Name, System: g.System})
	})
}

// cacheNames keeps ES's system full names ("Nintendo Entertainment
// System") and game names, so events that only carry argv (configgen has no
// name at all, ES mangles "$words") show ES's own names. Refreshed hourly,
// and sooner while ES is still loading.
func (d *Daemon) cacheNames(ctx context.Context) error {
	for {
		wait := time.Hour
		if err := d.refreshNames(ctx); err != nil {
			wait = 30 * time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func (d *Daemon) refreshNames(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	systems, err := d.esClient.Systems(sctx)
	cancel()
	if err != nil {
		return err
	}
	type entry struct {
		path string
		name outbox.Name
	}
	var games []entry
	real := es.GameSystems(systems)
	for _, s := range real {
		gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		list, err := d.esClient.Games(gctx, s.Name)
		cancel()
		if err != nil {
			return err
		}
		for _, g := range list {
			games = append(games, entry{g.Path, outbox.Name{Name: g.Name, System: g.System, SystemName: s.FullName}})
		}
	}
	return d.eng.store.Update(func(tx *outbox.Tx) error {
		for _, s := range real {
			if full, ok := tx.SystemName(s.Name); !ok || full != s.FullName {
				if err := tx.PutSystem(s.Name, s.FullName); err != nil {
					return err
				}
			}
		}
		for _, g := range games {
			if n, ok := tx.Name(g.path); ok && n == g.name {
				continue
			}
			if err := tx.PutName(g.path, g.name); err != nil {
				return err
			}
		}
		return nil
	})
}

// Status reports the daemon's health.
func (d *Daemon) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := Status{PID: os.Getpid(), Version: d.opts.Version, Started: d.started, MQTTEnabled: d.cfg.MQTTEnabled()}
	if d.cfgErr != nil {
		st.ConfigError = d.cfgErr.Error()
	}
	if d.link != nil {
		st.MQTTConnected = d.link.Connected()
		st.Reconnects = d.link.Reconnects()
		if err := d.link.LastError(); err != nil && !st.MQTTConnected {
			st.MQTTError = err.Error()
		}
	}
	if s, err := d.eng.store.Stats(); err == nil {
		st.OutboxDepth, st.OutboxDropped, st.OutboxExpired, st.Sessions = s.QueueDepth+s.Undelivered, s.Dropped, s.Expired, s.Sessions
	}
	return st
}

// Config is the configuration in force.
func (d *Daemon) Config() *config.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// Store is the daemon's store (play history for the MCP tools).
func (d *Daemon) Store() *outbox.Store { return d.eng.store }

// singleInstance refuses a second `cabinet serve`: it holds an exclusive
// lock in the run dir for the daemon's life.
func singleInstance(runDir string) (func(), error) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("run dir: %w", err)
	}
	path := filepath.Join(runDir, "serve.pid")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another cabinet serve is already running (pid %s): stop it first (batocera-services stop cabinet)", strings.TrimSpace(string(b)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
