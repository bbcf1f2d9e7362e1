package install

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// finishES has ES list an installed game and sets its metadata and cover. While a game runs, ES
// would reload only after it, so nothing is sent: the record stays unlisted and FinishPending (the
// daemon, when the game ends) or the next install call does it.
func (in *Installer) finishES(ctx context.Context, rec *Install, rom romm.ROM) (listed bool, sent, warnings []string, err error) {
	running, err := in.ES.RunningGame(ctx)
	if err != nil {
		return false, nil, nil, fmt.Errorf("ask ES whether a game runs: %w", err)
	}
	if running != nil {
		return false, nil, []string{"A game is running: EmulationStation lists the new game once it ends (with the daemon running it is done then; without it, reload the game lists after the game)."}, nil
	}
	if err := in.ES.ReloadGames(ctx); err != nil {
		return false, nil, nil, fmt.Errorf("have ES reload its game lists: %w", err)
	}
	sent = append(sent, "GET /reloadgames")
	id := es.GameID(rec.Path)
	wait := in.ListWait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	g, err := in.waitListed(ctx, rec.System, id, wait)
	if err != nil {
		return false, sent, nil, err
	}
	rec.GameID = id
	values := metadataOf(rom)
	if g.Name == rom.Name {
		delete(values, "name")
	}
	if len(values) > 0 {
		switch err := in.Meta.SetMetadata(ctx, rec.System, id, values); {
		case err == nil:
			sent = append(sent, "POST /systems/"+rec.System+"/games/"+id)
		case errors.Is(err, es.ErrUnchanged):
		default:
			warnings = append(warnings, "ES did not take RomM's metadata: "+untrusted.Clean(err.Error(), 200))
		}
	}
	if data, ctype, err := in.RomM.Cover(ctx, rom); err == nil {
		if err := in.Meta.UploadMedia(ctx, rec.System, id, "image", ctype, data); err == nil {
			sent = append(sent, "POST /systems/"+rec.System+"/games/"+id+"/media/image")
			if g, err := in.ES.GameLocal(ctx, rec.System, id); err == nil && g.Image != "" && strings.HasPrefix(g.Image, "/") {
				rec.Media = append(rec.Media, g.Image)
			}
		} else {
			warnings = append(warnings, "ES did not take the cover: "+untrusted.Clean(err.Error(), 200))
		}
	} else if !errors.Is(err, romm.ErrNoCover) {
		warnings = append(warnings, "RomM's cover could not be read: "+untrusted.Clean(err.Error(), 200))
	}
	rec.Listed = true
	if err := in.Records.PutInstall(*rec); err != nil {
		warnings = append(warnings, "the install record was not updated: "+untrusted.Clean(err.Error(), 200))
	}
	return true, sent, warnings, nil
}

// waitListed waits until ES lists the game (its reload runs on its UI thread, after the answer).
func (in *Installer) waitListed(ctx context.Context, system, id string, wait time.Duration) (es.Game, error) {
	deadline := time.Now().Add(wait)
	for {
		g, err := in.ES.GameLocal(ctx, system, id)
		if err == nil {
			return g, nil
		}
		if !errors.Is(err, es.ErrNotFound) {
			return es.Game{}, fmt.Errorf("ask ES for the new game: %w", err)
		}
		if time.Now().After(deadline) {
			return es.Game{}, fmt.Errorf("ES did not list the new game within %v of reloading: reload the game lists from ES's menu", wait)
		}
		select {
		case <-ctx.Done():
			return es.Game{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// metadataOf is RomM's metadata in ES's keys and formats (every value a string; releasedate in
// ES's ISO basic form; text cleaned of control and bidi characters and capped).
func metadataOf(rom romm.ROM) map[string]string {
	v := map[string]string{}
	set := func(k, s string, n int) {
		if s = untrusted.Clean(s, n); s != "" {
			v[k] = s
		}
	}
	set("name", rom.Name, 200)
	set("desc", rom.Summary, 2000)
	set("genre", strings.Join(rom.Genres, ", "), 200)
	set("players", rom.Players, 20)
	set("developer", rom.Developer, 200)
	if rom.Year > 0 {
		v["releasedate"] = strconv.Itoa(rom.Year) + "0101T000000"
	}
	return v
}

// FinishPending completes the ES side of installs made while a game ran. The daemon calls it
// when a game ends.
func (in *Installer) FinishPending(ctx context.Context) (int, error) {
	all, err := in.Records.Installs()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rec := range all {
		if rec.Listed || rec.RomM != in.RomMURL {
			continue
		}
		unlock, err := in.lock()
		if err != nil {
			return n, err
		}
		rom, err := in.RomM.ROM(ctx, rec.ROMID)
		if err != nil {
			unlock()
			return n, fmt.Errorf("read ROM %d from RomM: %w", rec.ROMID, err)
		}
		listed, _, _, err := in.finishES(ctx, &rec, rom)
		unlock()
		if err != nil {
			return n, err
		}
		if listed {
			n++
		}
	}
	return n, nil
}
