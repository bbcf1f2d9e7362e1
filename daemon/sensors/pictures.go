package sensors

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
	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// maxLoggedRunes caps text from games and files in log lines.
const maxLoggedRunes = 300

// Pictures publishes image.batocera_artwork and image.batocera_last_screenshot.
type Pictures struct {
	Host  Host
	Clock clock.Clock
	Log   zerolog.Logger
	// Game reads a game as ES lists it, with its media paths (es.Client.GameLocal).
	Game func(ctx context.Context, system, id string) (es.Game, error)
	// Root is cabinet.paths.root, under which ES's paths are read ("" on a cabinet).
	Root string
	// ScreenshotDir is where screenshots are written ("": no last screenshot).
	ScreenshotDir string
}

// runArtwork publishes image.batocera_artwork: the running game's box art
// (ES's thumbnail, which its scraper fills with the box), else its
// marquee, else its image (a screenshot or a mix), once per game; the
// placeholder while no game runs or when the game has no readable picture.
func (p *Pictures) RunArtwork(ctx context.Context) error {
	shown := "-" // the ROM whose picture is published; "" is the placeholder
	for {
		applied := p.Host.Applied()
		snap := p.Host.Snapshot()
		rom := ""
		if snap.Playing {
			rom = snap.Current.Rom
		}
		if rom != shown {
			shown = rom
			pic := artwork.Placeholder()
			if rom != "" {
				if b, err := p.GamePicture(ctx, snap.Current.System, rom); err == nil {
					pic = b
				} else {
					p.Log.Info().Str("rom", untrusted.Clean(rom, maxLoggedRunes)).Str("reason", untrusted.Clean(err.Error(), maxLoggedRunes)).
						Msg("no artwork for the game: the placeholder is shown")
				}
			}
			p.Host.Publish(haentities.ArtworkState(p.Host.Rules().Settings, pic, p.Clock.Now()))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-applied:
		}
	}
}

// errNoPicture: ES names no picture file for the game.
var errNoPicture = errors.New("ES names no picture file for it")

// GamePicture reads the game's picture from the files ES names for it,
// in order; the reason kept for the log is the first file that is there but
// unusable, else that none could be read.
func (p *Pictures) GamePicture(ctx context.Context, system, rom string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g, err := p.Game(ctx, system, es.GameID(rom))
	if err != nil {
		return nil, err
	}
	b, _, err := FirstPicture(p.Root, g.Thumbnail, g.Marquee, g.Image)
	return b, err
}

// FirstPicture reads the first usable picture of files (ES's media paths, under root, which is
// cabinet.paths.root: "" on a cabinet), in order, as artwork.EncodeFile makes it, and says which
// file it was; the error is the first file that is there but unusable, else that none could be
// read.
func FirstPicture(root string, files ...string) (jpeg []byte, file string, err error) {
	reason := errNoPicture
	for _, f := range files {
		if f == "" || !filepath.IsAbs(f) {
			continue
		}
		path := f
		if root != "" {
			path = filepath.Join(root, f)
		}
		b, err := artwork.EncodeFile(path)
		switch {
		case err == nil:
			return b, f, nil
		case reason == errNoPicture || errors.Is(reason, fs.ErrNotExist) && !errors.Is(err, fs.ErrNotExist):
			reason = err
		}
	}
	return nil, "", reason
}

// ScreenshotSettle is how long a new screenshot file stays unchanged
// before it is read: RetroArch writes it in several steps.
const ScreenshotSettle = 500 * time.Millisecond

// runLastScreenshot publishes image.batocera_last_screenshot: the newest
// picture in the screenshot folder (watched with fsnotify), the placeholder
// before the first. A file that is no usable picture is skipped (logged
// once) and the previous one stays.
func (p *Pictures) RunLastScreenshot(ctx context.Context) error {
	dir := p.ScreenshotDir
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
			p.Log.Warn().Err(err).Msg("screenshot folder not watched: the last screenshot is read every minute")
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
	settle, settleC := p.Clock.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	tick, tickC := p.Clock.NewTicker(time.Minute)
	defer tick.Stop()
	warned := map[string]bool{}
	show := func() {
		newest, err := newestPicture(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.Log.Debug().Err(err).Msg("screenshot folder not read")
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
					p.Log.Info().Str("file", filepath.Base(newest)).Str("reason", untrusted.Clean(err.Error(), maxLoggedRunes)).
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
		p.Host.Publish(haentities.PictureState(p.Host.Rules().Settings, haentities.LastScreenshot, pic, p.Clock.Now()))
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
				settle.Reset(ScreenshotSettle)
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
