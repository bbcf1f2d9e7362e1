package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/cmd/cabinet/logfile"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook"
	"github.com/batocera-cabinet/cabinet/hook/argv"
	"github.com/batocera-cabinet/cabinet/hook/bootclock"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Hook budgets: ES runs hooks on its own path, so an ordinary event gets a
// quarter of a second whatever the broker does; quit (which ES waits for,
// with the machine about to stop) a little more.
const (
	hookBudget = 250 * time.Millisecond
	quitBudget = 1500 * time.Millisecond
)

type hookCommand struct{ env *env }

func (c *hookCommand) Run(ctx context.Context, args []string) (err error) {
	stamp := bootclock.Now() // first thing: the event's time
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(c.env.Stderr, `Usage: cabinet hook [--source es|configgen] EVENT [ARGS...]

Records an EmulationStation event (start, game-start, game-end, game-selected,
screensaver-start, screensaver-stop, sleep, wake, quit [reboot|shutdown]), a
Batocera launcher event (--source configgen gameStart|gameStop system emulator
core rom) or a RetroAchievements unlock (achievements id title description). Run by the scripts Cabinet installs for ES; always silent, always
exits 0, and returns within a quarter of a second. Problems go to
<state_dir>/cabinet.log.
`)
		return errHelp
	}
	var flushAfter time.Duration
	drain := false
	switch {
	case len(args) == 2 && args[0] == "--flush-after":
		flushAfter, _ = time.ParseDuration(args[1])
		args = nil
	case len(args) == 1 && args[0] == "--drain":
		// The service's stop, once the daemon is gone: what wrappers wrote
		// into the inbox while it stopped is stored and published now.
		drain, args = true, nil
	}
	l := config.Load(config.Inputs{Environ: c.env.Environ})
	cfg := &l.Config
	log, closeLog := hookLogger(cfg)
	defer closeLog()
	defer func() {
		// ES must never see the hook fail: a panic is logged, not raised.
		if r := recover(); r != nil {
			log.Error().Interface("panic", r).Msg("hook crashed")
		}
		err = nil
	}()
	if l.Err != nil {
		log.Warn().Err(l.Err).Msg("configuration has invalid values; their defaults are used")
	}
	if args == nil {
		r, err := newHookRunner(l, log)
		switch {
		case err != nil:
		case drain:
			hook.Drain(ctx, r)
		default:
			hook.RunFlusher(ctx, cfg.Layout().FlushLock(), r, flushAfter)
		}
		return nil
	}
	ev, err := argv.Parse(args, stamp)
	if err != nil {
		// An ES event the tracker has no use for is routine; any other
		// refusal is a broken install or a caller to fix, worth a line.
		lvl := log.Warn()
		if errors.Is(err, argv.ErrIgnored) {
			lvl = log.Debug()
		}
		lvl.Err(err).Strs("args", clipArgs(args)).Msg("event ignored")
		return nil
	}
	budget := hookBudget
	if ev.Kind == tracker.KindQuit {
		budget = quitBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	// The daemon's fast path first: it owns the store and the MQTT link.
	own := journal.NewKeyed(ev)
	if err := socket.Deliver(ctx, cfg.Layout().Socket(), own.Key, ev); err == nil {
		log.Debug().Str("event", string(ev.Kind)).Dur("took", time.Since(stamp.At)).Msg("hook handed to the daemon")
		return nil
	} else if err != socket.ErrNoDaemon {
		log.Warn().Err(err).Str("event", string(ev.Kind)).Msg("daemon did not ack in time; recording the event here")
	}
	r, err := newHookRunner(l, log)
	if err != nil {
		log.Error().Err(err).Msg("hook cannot record the event")
		return nil
	}
	var once sync.Once
	r.ScheduleFlush = func(d time.Duration) { once.Do(func() { hook.SpawnFlusher(c.env.Environ, d, log) }) }
	r.RetryDelivery = func() { r.ScheduleFlush(2 * time.Second) }
	r.HandleKeyed(ctx, own)
	log.Debug().Str("event", string(ev.Kind)).Str("source", string(ev.Source)).Dur("took", time.Since(stamp.At)).Msg("hook done")
	return nil
}

// newHookRunner builds the standalone runner from the configuration.
func newHookRunner(l *config.Loaded, log zerolog.Logger) (*hook.Runner, error) {
	cfg := &l.Config
	settings, err := haSettings(cfg, buildVersion(), false)
	if err != nil {
		return nil, err
	}
	settings.Achievements = l.RetroAchievements
	r := &hook.Runner{
		Layout:       cfg.Layout(),
		Settings:     settings,
		Tracker:      journalRules(cfg, settings).Tracker,
		BatoceraConf: l.File,
		Log:          log,
	}
	if cfg.MQTTEnabled() {
		r.Publisher = oneShot{mqttOptions(cfg, hookClientID(settings.ID))}
	}
	return r, nil
}

type oneShot struct{ opts mqttlink.Options }

func (o oneShot) Publish(ctx context.Context, msgs []haentities.Message) (int, error) {
	return mqttlink.Publish(ctx, o.opts, msgs)
}

// hookLogger appends to <state_dir>/cabinet.log, secrets scrubbed. The file
// is opened only if something is logged; when it cannot be opened the hook
// stays silent rather than write to ES.
func hookLogger(cfg *config.Config) (zerolog.Logger, func()) {
	f := logfile.OpenLazy(cfg.Layout().Log(), 0, -1)
	return logfile.New(logfile.NewRedactor(f, cfg.Secrets()), cfg.LogLevel).With().Str("cmd", "hook").Logger(), func() { f.Close() }
}

func clipArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if len(a) > 120 {
			a = strings.ToValidUTF8(a[:120], "") + "…"
		}
		out = append(out, a)
	}
	return out
}
