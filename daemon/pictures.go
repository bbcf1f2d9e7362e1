package daemon

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

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

// noPicture: ES has no picture of the game.
type noPicture struct{}

func (noPicture) Error() string { return "ES has no box art, marquee or image for it" }

// gamePicture reads the game's picture from the files ES names for it.
func (d *Daemon) gamePicture(ctx context.Context, system, rom string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g, err := d.es().GameLocal(ctx, system, es.GameID(rom))
	if err != nil {
		return nil, err
	}
	var last error = noPicture{}
	for _, p := range []string{g.Thumbnail, g.Marquee, g.Image} {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		if root := d.config().Tools.Root; root != "" {
			p = filepath.Join(root, p)
		}
		b, err := artwork.EncodeFile(p)
		if err == nil {
			return b, nil
		}
		// The reason worth logging is a file that is there but unusable,
		// not a picture the scraper never fetched.
		if _, missing := last.(noPicture); missing || !errors.Is(err, fs.ErrNotExist) {
			if !errors.Is(last, artwork.ErrNotImage) && !errors.Is(last, artwork.ErrTooLarge) {
				last = err
			}
		}
	}
	return nil, last
}
