package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestGamePicturesAndDetails (issue 18) runs the daemon binary on both
// brokers against the simulator's library, whose pictures lie where ES
// names them: a game with box art shows it (a JPEG of at most 512 px) with
// its genre, developer and year in now_playing's attributes; a game whose
// pictures are hostile (a PNG claiming 100,000² pixels, then a text file)
// shows the placeholder, with the reason logged; idle shows the
// placeholder. On the embedded broker the capture passes the strict
// validator.
func TestGamePicturesAndDetails(t *testing.T) {
	cabinettest.Long(t, "two games through the daemon binary on both brokers")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind))
		d := r.startOnline()
		art := r.topic(haentities.Artwork)
		placeholder := base64.StdEncoding.EncodeToString(artwork.Placeholder())
		r.obs.AwaitLatest(art, placeholder)
		r.cab.ES.Start() // ES's start event: the cabinet event entity gets one
		ctx := context.Background()
		play := func(name string) {
			t.Helper()
			for _, g := range r.cab.Library.Games("nes") {
				if strings.HasPrefix(g.Name, name) {
					// ES's UI takes a moment to come back after a game.
					cabinettest.Await(t, "ES to take the launch of "+name, nil, func() (bool, string) {
						if err := r.cab.ES.Launch("nes", g.ID); err != nil {
							return false, err.Error()
						}
						return true, ""
					})
					if err := r.cab.WaitRunning(ctx); err != nil {
						t.Fatal(err)
					}
					// Every report of the launch in (ES's hook, configgen's,
					// the watcher's) before the game ends: a game that ends
					// within milliseconds, before ES's own game-start hook
					// arrives, is two sessions to the tracker.
					cabinettest.Await(t, name+" playing", r.obs.Changed, func() (bool, string) {
						last := ""
						for _, m := range r.obs.Since(0) {
							if m.Topic == r.topic(haentities.NowPlaying) {
								last = m.Payload
							}
						}
						return strings.HasPrefix(last, name), "now playing " + last
					})

					time.Sleep(time.Second) // a second of play: the session's length, not a synchronisation
					return
				}
			}
			t.Fatalf("no %s in the library", name)
		}
		end := func() {
			t.Helper()
			if err := simulator.EndGame(ctx, r.cab); err != nil {
				t.Fatal(err)
			}
		}

		from := r.obs.Mark()
		play("The Legend of Zelda")
		cabinettest.Await(t, "Zelda's details in now_playing's attributes", r.obs.Changed, func() (bool, string) {
			last := ""
			for _, m := range r.obs.Since(from) {
				if m.Topic != r.topic("now_playing/attributes") {
					continue
				}
				var a struct {
					Genre, Developer string
					Year             int
				}
				if json.Unmarshal([]byte(m.Payload), &a) == nil && a.Genre == "Action-Adventure" && a.Developer == "Nintendo R&D4" && a.Year == 1986 {
					return true, ""
				}
				last = m.Payload
			}
			return false, last
		})

		m := r.obs.AwaitMsg(from, art, "")
		for m.Payload == placeholder { // the idle picture may come first
			m = r.obs.AwaitMsg(from+1, art, "")
			from++
		}
		pic, err := base64.StdEncoding.DecodeString(m.Payload)
		if err != nil {
			t.Fatalf("artwork not base64: %v", err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(pic))
		if err != nil || max(cfg.Width, cfg.Height) > artwork.MaxSide || len(pic) > artwork.MaxBytes {
			t.Errorf("Zelda's artwork: %d×%d, %d bytes, %v", cfg.Width, cfg.Height, len(pic), err)
		}
		end()
		r.obs.AwaitLatest(art, placeholder)

		from = r.obs.Mark()
		play("Contra")
		r.obs.AwaitMsg(from, r.topic(haentities.NowPlaying), "")
		r.logs.AwaitLine(t, "Contra's pictures refused", "no artwork for the game")
		if line, _ := r.logs.Line("no artwork for the game"); !strings.Contains(line, "too large") {
			t.Errorf("the reason logged: %s", line)
		}
		for _, m := range r.obs.Since(from) {
			if m.Topic == art && m.Payload != placeholder {
				t.Errorf("a hostile picture was published (%d bytes)", len(m.Payload))
			}
		}
		end()
		// Both sessions logged (about 3 s after their end), then the stop.
		cabinettest.Await(t, "two session_end events", r.obs.Changed, func() (bool, string) {
			n := len(r.sessionEvents(0, "session_end"))
			return n == 2, fmt.Sprintf("%d so far", n)
		})

		d.term()
		if kind == cabinettest.Embedded {
			cabinettest.ValidateCapture(t, fmt.Sprintf("pictures on %s", kind), r.broker.Embedded().Capture())
		}
	})
}
