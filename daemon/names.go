package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"runtime/debug"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// cacheName keeps ES's name and metadata of the running game, for the
// hooks that only see argv; new metadata for the running game are
// published at once.
func (d *Daemon) cacheName(g es.Game) {
	// The watcher calls this at every poll while a game runs: a read
	// without a commit says whether anything is to be written.
	if old, ok, err := d.eng.store().CachedName(g.Path); err == nil && ok && old == cachedName(g, old.SystemName) {
		return
	}
	var changed bool
	d.eng.store().Update(func(tx *store.Tx) error {
		old, ok := tx.Name(g.Path)
		n := cachedName(g, old.SystemName)
		if ok && old == n {
			return nil
		}
		changed = old.Details != n.Details
		return tx.PutName(g.Path, n)
	})
	if changed {
		d.republishFor(g.Path)
	}
}

// cachedName is what the store keeps of a game ES listed.
func cachedName(g es.Game, systemName string) store.Name {
	det := haentities.GameDetails{Genre: g.Genre, Players: g.Players, Developer: g.Developer,
		Publisher: g.Publisher, Region: g.Region}
	if !g.ReleaseDate.IsZero() {
		det.Year = g.ReleaseDate.Year()
	}
	return store.Name{Name: g.Name, System: g.System, SystemName: systemName, Details: det}
}

// republishFor publishes the states again when path is the running game
// or the last session's, whose attributes come from the cache.
func (d *Daemon) republishFor(paths ...string) {
	snap := d.eng.snapshot()
	for _, p := range paths {
		if p != "" && (snap.Playing && snap.Current.Rom == p || snap.Last.Rom == p) {
			if _, err := d.eng.apply(); err != nil {
				d.log.Warn().Err(err).Msg("game details not republished; they go out with the next event")
			}
			return
		}
	}
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
	// One system at a time, each in its own transaction: a large library (tens of thousands of
	// games) never has every list decoded, nor every name written, in memory at once.
	defer debug.FreeOSMemory() // an hourly pass gives back what the lists took, now
	stored := 0
	defer func() { d.log.Debug().Int("systems_changed", stored).Msg("game names refreshed") }()
	for _, s := range es.GameSystems(systems) {
		gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		// The names are all this keeps: the list is not kept in the client's cache either.
		list, err := esc.ListGames(gctx, s.Name)
		cancel()
		if err != nil {
			return err
		}
		wrote, err := d.storeNames(s, list)
		if err != nil {
			return err
		}
		if wrote {
			stored++
		}
	}
	return nil
}

// nameDigests are, by system, a digest of what the names cache holds of the system's games as
// ES last listed them: an hourly pass over an unchanged list reads and writes nothing of the
// cache (for 50,000 games it is tens of MB, which reading would bring into memory).
var nameDigests = store.Records[string]{Name: "name_digests"}

// namesDigest is the digest of what storeNames keeps of one system's list.
func namesDigest(s es.System, list []es.Game) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.Encode(s.FullName)
	for _, g := range list {
		enc.Encode(g.Path)
		enc.Encode(cachedName(g, s.FullName))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// storeNames keeps one system's full name and the names of its games, writing only what
// changed (nothing when the list's digest is the one kept), and republishes the states when the
// running game's or the last session's details did.
func (d *Daemon) storeNames(s es.System, list []es.Game) (wrote bool, err error) {
	digest := namesDigest(s, list)
	var kept string
	nameDigests.View(d.eng.store(), func(b store.Bucket[string]) error {
		kept, _, _ = b.Get(s.Name)
		return nil
	})
	if kept == digest {
		return false, nil
	}
	var changed []string
	err = d.eng.store().Update(func(tx *store.Tx) error {
		changed = changed[:0]
		digests, err := nameDigests.Within(tx)
		if err != nil {
			return err
		}
		if err := digests.Put(s.Name, digest); err != nil {
			return err
		}
		if full, ok := tx.SystemName(s.Name); !ok || full != s.FullName {
			if err := tx.PutSystem(s.Name, s.FullName); err != nil {
				return err
			}
		}
		for _, g := range list {
			name := cachedName(g, s.FullName)
			n, ok := tx.Name(g.Path)
			if ok && n == name {
				continue
			}
			if n.Details != name.Details {
				changed = append(changed, g.Path)
			}
			if err := tx.PutName(g.Path, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		d.republishFor(changed...)
	}
	return err == nil, err
}
