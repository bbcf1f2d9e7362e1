package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
)

// watchSpool ingests spooled events as soon as a hook writes one (the store
// was busy, e.g. while the daemon was starting), and every half minute in
// case a notification was missed.
func (d *Daemon) watchSpool(ctx context.Context) error {
	dir := d.eng.spool.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("spool watcher: %w", err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	d.ingestSpool() // files written before the watch began
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("spool watcher closed")
			}
			if strings.HasSuffix(ev.Name, ".event") && ev.Op&(fsnotify.Create|fsnotify.Rename|fsnotify.Write) != 0 {
				d.ingestSpool()
			}
		case err := <-w.Errors:
			d.log.Warn().Err(err).Msg("spool watcher")
		case <-tick.C:
			d.ingestSpool()
		}
	}
}

func (d *Daemon) ingestSpool() {
	items, err := d.eng.spool.Read()
	if err != nil || len(items) == 0 {
		return
	}
	if _, err := d.eng.apply(); err == nil {
		d.log.Debug().Int("events", len(items)).Msg("spool ingested")
	}
}

// watchConfig applies edits of the configuration file without a restart.
// The file's directory is watched, because ES and batocera-settings-set
// replace batocera.conf by rename.
func (d *Daemon) watchConfig(ctx context.Context) error {
	file := d.opts.Load().File
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config watcher: %w", err)
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(file)); err != nil {
		return fmt.Errorf("watch %s: %w", filepath.Dir(file), err)
	}
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("config watcher closed")
			}
			if filepath.Clean(ev.Name) == filepath.Clean(file) {
				debounce = time.After(200 * time.Millisecond)
			}
		case err := <-w.Errors:
			d.log.Warn().Err(err).Msg("config watcher")
		case <-debounce:
			debounce = nil
			d.reload(ctx)
		}
	}
}

// reload reads the configuration again. An invalid file keeps the last good
// configuration in force (logged, and shown by `cabinet doctor`).
func (d *Daemon) reload(ctx context.Context) {
	l := d.opts.Load()
	if l.Err != nil {
		d.mu.Lock()
		d.cfgErr = l.Err
		d.mu.Unlock()
		d.log.Error().Err(l.Err).Msg("configuration change refused: the last good configuration stays in force")
		return
	}
	d.mu.Lock()
	old := d.cfg
	d.cfg, d.cfgErr = &l.Config, nil
	d.mu.Unlock()
	cfg := &l.Config
	if reflect.DeepEqual(old, cfg) {
		return
	}
	for _, w := range l.Warnings {
		d.log.Warn().Msg(w)
	}
	d.level.set(cfg.LogLevel)
	if d.opts.Redactor != nil {
		d.opts.Redactor.SetSecrets(cfg.Secrets())
	}
	settings, err := haSettings(cfg, d.opts.Version)
	if err != nil {
		d.log.Error().Err(err).Msg("configuration change: Home Assistant settings invalid; keeping the old ones")
		settings = d.eng.journal().Settings
	}
	d.eng.setJournal(settings, journal.TrackerConfig(cfg), cfg.MQTTEnabled())
	if mqttChanged(old, cfg) {
		d.mu.Lock()
		link := d.link
		d.link = nil
		d.mu.Unlock()
		if link != nil {
			sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			link.stop(sctx)
			cancel()
			d.eng.setPublisher(nil)
		}
		if err := d.startMQTT(d.linkCtx); err != nil {
			d.log.Error().Err(err).Msg("MQTT link not restarted")
		}
	}
	if old.MCP.ReadOnly != cfg.MCP.ReadOnly || old.MCP.DryRun != cfg.MCP.DryRun || old.Name != cfg.Name ||
		old.ESURL != cfg.ESURL || old.RetroArchAddr != cfg.RetroArchAddr || old.ScreenshotDir != cfg.ScreenshotDir {
		if err := d.buildMCP(cfg); err != nil {
			d.log.Error().Err(err).Msg("configuration change: MCP tools not rebuilt")
		}
	}
	if old.MCP.Listen != cfg.MCP.Listen || fmt.Sprint(old.MCP.AllowedHosts, old.MCP.AllowedOrigins) != fmt.Sprint(cfg.MCP.AllowedHosts, cfg.MCP.AllowedOrigins) {
		d.log.Warn().Msg("cabinet.mcp.listen, allowed_hosts and allowed_origins apply at the next restart of cabinet serve")
	}
	// Record discovery for new names, topics or switches (clearing what is
	// no longer produced), and the diagnostics under the topics in force.
	d.eng.apply()
	d.recordDiagnostics()
	d.log.Info().Msg("configuration change applied")
}

// mqttChanged reports whether the link must be rebuilt.
func mqttChanged(a, b *config.Config) bool {
	return a.MQTT != b.MQTT || a.HA != b.HA || a.Name != b.Name || a.ID != b.ID
}
