package daemon

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// runArtwork publishes image.batocera_artwork: the running game's box art
// (ES's thumbnail, which its scraper fills with the box), else its
// marquee, else its image (a screenshot or a mix), once per game; the
// placeholder while no game runs or when the game has no readable picture.
func (d *Daemon) runArtwork(ctx context.Context) error {
	shown := "-" // the ROM whose picture is published; "" is the placeholder
	for {
		applied := d.eng.appliedCh()
		snap := d.eng.snapshot()
		rom := ""
		if snap.Playing {
			rom = snap.Current.Rom
		}
		if rom != shown {
			shown = rom
			pic := artwork.Placeholder()
			if rom != "" {
				if b, err := d.gamePicture(ctx, snap.Current.System, rom); err == nil {
					pic = b
				} else {
					d.log.Info().Str("rom", untrusted.Clean(rom, maxLoggedRunes)).Str("reason", untrusted.Clean(err.Error(), maxLoggedRunes)).
						Msg("no artwork for the game: the placeholder is shown")
				}
			}
			d.publish(haentities.ArtworkState(d.eng.currentRules().Settings, pic, d.clock.Now()))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-applied:
		}
	}
}

// errNoPicture: ES names no picture file for the game.
var errNoPicture = errors.New("ES has no box art, marquee or image for it")

// gamePicture reads the game's picture from the files ES names for it,
// in order; the reason kept for the log is the first file that is there but
// unusable, else that none could be read.
func (d *Daemon) gamePicture(ctx context.Context, system, rom string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g, err := d.es().GameLocal(ctx, system, es.GameID(rom))
	if err != nil {
		return nil, err
	}
	reason := errNoPicture
	for _, p := range []string{g.Thumbnail, g.Marquee, g.Image} {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		if root := d.config().Tools.Root; root != "" {
			p = filepath.Join(root, p)
		}
		b, err := artwork.EncodeFile(p)
		switch {
		case err == nil:
			return b, nil
		case reason == errNoPicture || errors.Is(reason, fs.ErrNotExist) && !errors.Is(err, fs.ErrNotExist):
			reason = err
		}
	}
	return nil, reason
}

// screenshotSettle is how long a new screenshot file stays unchanged
// before it is read: RetroArch writes it in several steps.
const screenshotSettle = 500 * time.Millisecond

// runLastScreenshot publishes image.batocera_last_screenshot: the newest
// picture in the screenshot folder (watched with fsnotify), the placeholder
// before the first. A file that is no usable picture is skipped (logged
// once) and the previous one stays.
func (d *Daemon) runLastScreenshot(ctx context.Context) error {
	dir := d.config().Tools.Paths.ScreenshotDir
	if dir == "" {
		<-ctx.Done()
		return nil
	}
	// The folder is watched once it exists (Batocera makes it; Cabinet
	// never creates it: uninstall leaves the tree as it found it); till
	// then, and if the watch fails, it is read every minute.
	var w *fsnotify.Watcher
	var events <-chan fsnotify.Event
	watch := func() {
		if w != nil {
			return
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return
		}
		nw, err := fsnotify.NewWatcher()
		if err == nil {
			if err = nw.Add(dir); err != nil {
				nw.Close()
			}
		}
		if err != nil {
			d.log.Warn().Err(err).Msg("screenshot folder not watched: the last screenshot is read every minute")
			return
		}
		w, events = nw, nw.Events
	}
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	watch()
	shown, first := "", true
	settle, settleC := d.clock.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	tick, tickC := d.clock.NewTicker(time.Minute)
	defer tick.Stop()
	warned := map[string]bool{}
	show := func() {
		newest, err := newestPicture(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.log.Debug().Err(err).Msg("screenshot folder not read")
		}
		if newest == shown && !first {
			return
		}
		pic := artwork.Placeholder()
		if newest != "" {
			b, err := artwork.EncodeFile(newest)
			if err != nil {
				if !warned[newest] {
					warned[newest] = true
					d.log.Info().Str("file", filepath.Base(newest)).Str("reason", untrusted.Clean(err.Error(), maxLoggedRunes)).
						Msg("screenshot not shown")
				}
				if !first {
					return
				}
			} else {
				pic = b
			}
		}
		shown, first = newest, false
		d.publish(haentities.PictureState(d.eng.currentRules().Settings, haentities.LastScreenshot, pic, d.clock.Now()))
	}
	show()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Rename|fsnotify.Remove) != 0 {
				settle.Reset(screenshotSettle)
			}
		case <-settleC:
			show()
		case <-tickC:
			watch()
			show()
		}
	}
}

// screenshotExt are the files RetroArch and ES write as screenshots.
var screenshotExt = map[string]bool{".png": true, ".jpg": true, ".jpeg": true}

// maxScreenshotEntries bounds one read of the folder.
const maxScreenshotEntries = 10_000

// newestPicture is the newest screenshot file in dir (by modification
// time, then name), "" when there is none.
func newestPicture(dir string) (string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return "", err
	}
	defer f.Close()
	entries, err := f.ReadDir(maxScreenshotEntries)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	var best string
	var bestTime time.Time
	for _, e := range entries {
		if !e.Type().IsRegular() || !screenshotExt[strings.ToLower(filepath.Ext(e.Name()))] {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if t := info.ModTime(); best == "" || t.After(bestTime) || t.Equal(bestTime) && e.Name() > filepath.Base(best) {
			best, bestTime = filepath.Join(dir, e.Name()), t
		}
	}
	return best, nil
}
