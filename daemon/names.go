package daemon

import (
	"context"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities/outbox"
)

// cacheName keeps ES's name of a game, for the hooks that only see argv.
func (d *Daemon) cacheName(g es.Game) {
	d.eng.store().Update(func(tx *outbox.Tx) error {
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
	t, tc := d.clock.NewTimer(time.Hour)
	defer t.Stop()
	for {
		wait := time.Hour
		if err := d.refreshNames(ctx); err != nil {
			wait = 30 * time.Second
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		}
	}
}

func (d *Daemon) refreshNames(ctx context.Context) error {
	esc := d.es()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	systems, err := esc.Systems(sctx)
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
		list, err := esc.Games(gctx, s.Name)
		cancel()
		if err != nil {
			return err
		}
		for _, g := range list {
			games = append(games, entry{g.Path, outbox.Name{Name: g.Name, System: g.System, SystemName: s.FullName}})
		}
	}
	return d.eng.store().Update(func(tx *outbox.Tx) error {
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

// swapES points the watcher and the name cache at a new cabinet.es.url
// (the tools get theirs when they are rebuilt).
func (d *Daemon) swapES(url string) {
	c, err := es.New(es.Config{URL: url})
	if err != nil {
		d.log.Error().Err(err).Msg("configuration change: cabinet.es.url not applied")
		return
	}
	d.mu.Lock()
	d.esClient = c
	d.mu.Unlock()
}
