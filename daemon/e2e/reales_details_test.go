package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/reales"
)

// TestRealESGameDetails (issue 18): the game's metadata as Batocera's real
// EmulationStation holds it — set through its own metadata route while it
// runs, so neither the daemon's start-up read of the game lists nor any
// fake knows them — reach now_playing's attributes and the session events
// through the inbox: the daemon's /runningGame watch caches them and
// publishes them again for the running game.
func TestRealESGameDetails(t *testing.T) {
	cabinettest.Long(t, "a real EmulationStation scenario")
	x := newRealRig(t, "inbox", reales.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := es.New(es.Config{URL: reales.URL})
	if err != nil {
		t.Fatal(err)
	}
	rom := x.es.ROM(reales.SystemNES, reales.ROMSpaces)
	meta := map[string]string{"genre": "Platform", "players": "1-2", "developer": "Nintendo R&D4",
		"publisher": "Nintendo", "releasedate": "19850913T000000", "region": "eu\u202e"}
	if err := es.NewMetadataWriter(c).SetMetadata(ctx, reales.SystemNES, es.GameID(rom), meta); err != nil {
		t.Fatal(err)
	}
	from := x.obs.Mark()
	x.playGame(reales.SystemNES, reales.ROMSpaces, "Super Mario Bros. (World)", false)
	want := map[string]any{"genre": "Platform", "players": "1-2", "developer": "Nintendo R&D4", "publisher": "Nintendo",
		"year": 1985.0, "region": "eu", "emulator": "libretro", "core": "nestopia"}
	has := func(payload string) (bool, string) {
		var a map[string]any
		if err := json.Unmarshal([]byte(payload), &a); err != nil {
			return false, err.Error()
		}
		for k, v := range want {
			if a[k] != v {
				return false, k + " is " + strings.TrimSpace(strings.ReplaceAll(payload, "\n", " "))
			}
		}
		return true, ""
	}
	cabinettest.Await(t, "now_playing's attributes with ES's metadata", x.obs.Changed, func() (bool, string) {
		last := "(none)"
		for _, m := range x.obs.Since(from) {
			if m.Topic == x.topic("now_playing/attributes") {
				ok, why := has(m.Payload)
				if ok {
					return true, ""
				}
				last = why
			}
		}
		return false, last
	})

	cabinettest.Await(t, "the session_end with ES's metadata", x.obs.Changed, func() (bool, string) {
		last := "(none)"
		for _, m := range x.obs.Since(from) {
			if m.Topic == x.topic("game_session") && strings.Contains(m.Payload, `"session_end"`) {
				ok, why := has(m.Payload)
				if ok {
					return true, ""
				}
				last = why
			}
		}
		return false, last
	})

	x.checkPath()
}
