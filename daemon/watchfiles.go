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
)

// watchDir watches a directory (created if absent). The daemon sets up
// its watches before it says it is ready, so an edit made right after
// start is not missed.
func watchDir(dir string) (*fsnotify.Watcher, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	return w, nil
}

// watching runs fn on a watch of dir: the first time on the one made at
// start (first), after a restart of the part on a new one.
func watching(dir string, first *fsnotify.Watcher, fn func(context.Context, *fsnotify.Watcher) error) func(context.Context) error {
	return func(ctx context.Context) error {
		w := first
		first = nil
		if w == nil {
			var err error
			if w, err = watchDir(dir); err != nil {
				return err
			}
		}
		return fn(ctx, w)
	}
}

// watchSpool ingests spooled events as soon as a hook writes one (the store
// was busy, e.g. while the daemon was starting), and every half minute in
// case a notification was missed.
func (d *Daemon) watchSpool(ctx context.Context, w *fsnotify.Watcher) error {
	defer w.Close()
	tick, tc := d.clock.NewTicker(30 * time.Second)
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
		case <-tc:
			d.ingestSpool()
		}
	}
}

func (d *Daemon) ingestSpool() {
	items, err := d.eng.owner.Spool.Read()
	if err != nil || len(items) == 0 {
		return
	}
	if _, err := d.eng.apply(); err == nil {
		d.log.Debug().Int("events", len(items)).Msg("spool ingested")
	}
}

// configDebounce lets an editor's several writes settle into one reload.
const configDebounce = 200 * time.Millisecond

// msgConfigChanged is logged (debug) when the file changes, before the
// debounce: tests wait for it to know the debounce is armed.
const msgConfigChanged = "configuration file changed"

// watchConfig applies edits of the configuration file without a restart.
// The file's directory is watched, because ES and batocera-settings-set
// replace batocera.conf by rename.
func (d *Daemon) watchConfig(ctx context.Context, w *fsnotify.Watcher) error {
	return d.watchReload(ctx, w, d.opts.ConfigFile)
}

// watchReload reloads the configuration, debounced, when one of files
// changes (files of one folder, which w watches).
func (d *Daemon) watchReload(ctx context.Context, w *fsnotify.Watcher, files ...string) error {
	return d.watchFiles(ctx, w, d.reload, files...)
}

// watchFiles calls changed once files of w's directory settle after a
// change (configDebounce after the last event).
func (d *Daemon) watchFiles(ctx context.Context, w *fsnotify.Watcher, changed func(context.Context), files ...string) error {
	defer w.Close()
	debounce, debounceC := d.clock.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("config watcher closed")
			}
			for _, file := range files {
				if filepath.Clean(ev.Name) == filepath.Clean(file) {
					debounce.Reset(configDebounce)
					d.log.Debug().Str("op", ev.Op.String()).Str("file", filepath.Base(file)).Msg(msgConfigChanged)
				}
			}
		case err := <-w.Errors:
			d.log.Warn().Err(err).Msg("config watcher")
		case <-debounceC:
			changed(ctx)
		}
	}
}

// reload reads the configuration again and applies what changed: each
// part whose section differs is rebuilt. An invalid file keeps the last
// good configuration in force (logged, and shown by `cabinet doctor`).
func (d *Daemon) reload(ctx context.Context) {
	d.reloading.Lock()
	defer d.reloading.Unlock()
	l, err := loadProbed(d.opts.Load)
	if err == nil {
		err = l.Err
	}
	if err != nil {
		d.mu.Lock()
		d.cfgErr = err
		d.mu.Unlock()
		d.log.Error().Err(err).Msg("configuration change refused: the last good configuration stays in force")
		return
	}
	cfg := &l.Config
	d.mu.Lock()
	old := d.cfg
	d.cfg, d.cfgErr = cfg, nil
	d.mu.Unlock()
	if reflect.DeepEqual(old, cfg) {
		return
	}
	for _, w := range l.Warnings {
		d.log.Warn().Msg(w)
	}
	d.level.set(cfg.LogLevel)
	if d.opts.Redactor != nil {
		d.opts.Redactor.SetSecrets(cfg.Secrets)
	}
	ch := diff(old, cfg)
	if ch.rules {
		d.eng.setRules(cfg.Rules)
	}
	if ch.link {
		d.restartMQTT(ctx)
	}
	if ch.es || ch.tools {
		if err := d.buildLinks(cfg); err != nil {
			d.log.Error().Err(err).Msg("configuration change: the clients and MCP tools not rebuilt")
		}
	}
	if !reflect.DeepEqual(old.RomM, cfg.RomM) {
		select { // a new pairing reports what waits at once
		case d.rommWake <- struct{}{}:
		default:
		}
	}
	if !reflect.DeepEqual(old.SaveSync, cfg.SaveSync) {
		select {
		case d.saveWake <- struct{}{}:
		default:
		}
	}
	if ch.http || ch.layout {
		d.log.Warn().Msg("cabinet.mcp.listen, allowed_hosts, allowed_origins, the TLS, Cloudflare Access and sign-in keys (cabinet.mcp.tls*, cabinet.mcp.cf_access.*, cabinet.mcp.oauth, public_url, oauth_client_hosts), cabinet.state_dir and cabinet.paths.root apply at the next restart of cabinet serve")
	}
	// Record discovery for new names, topics or switches (clearing what is
	// no longer produced), and the diagnostics under the topics in force.
	d.eng.apply()
	d.recordDiagnostics()
	if d.uiModes != nil {
		d.uiModes.publish() // the select newly announced, or es.customsargs changed
	}
	d.log.Info().Msg("configuration change applied")
}

// restartMQTT replaces the link with one for the configuration in force.
func (d *Daemon) restartMQTT(ctx context.Context) {
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
