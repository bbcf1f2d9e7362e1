package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestRomMHeartbeatCadence: over a ten-minute game (on the daemon's fake
// clock, which the fake RomM keeps time by too) RomM gets the game's
// heartbeat as it starts and then every 30 s, so its "now playing" — gone
// 90 s after the last heartbeat — never lapses; the game's end clears it at
// once.
func TestRomMHeartbeatCadence(t *testing.T) {
	var fr *fakeromm.Server
	r := newRigWith(t, simulator.Options{RomM: true}, nil, func(r *rig) {
		fr = r.cab.RomM
		fr.SetClock(r.clock.Now)
		dev := fr.AddDevice(fakeromm.Device{Name: "Batocera", Platform: "batocera", Client: "cabinet"})
		tok := fr.IssueToken(append(fakeromm.ReadScopes(), fakeromm.WriteScopes()...), dev)
		r.cfg.RomM = rommreport.Config{URL: r.cab.RomMURL(), Token: tok, DeviceID: dev, Since: rigEpoch, Root: r.cab.Root}
	})
	send := func(ev tracker.Event) {
		t.Helper()
		r.deliver(ev)
	}
	start := r.stamped(tracker.KindGameStart)
	start.Path, start.Name, start.System = r.cab.RomMGamePath(), "Alpha Quest", "nes"
	send(start)
	beats := func(n int) {
		t.Helper()
		cabinettest.Await(t, fmt.Sprintf("%d heartbeat(s)", n), nil, func() (bool, string) {
			return len(fr.Heartbeats()) >= n, fmt.Sprintf("%d", len(fr.Heartbeats()))
		})

	}
	beats(1)
	// The round at now has sent its heartbeat: only then does the clock
	// move on (a game start wakes the reporter twice, once for the start
	// and once for the tracker's signal, and counting alone would then run
	// ahead of a round still under way).
	beatNow := func() {
		t.Helper()
		now := r.clock.Now()
		cabinettest.Await(t, fmt.Sprintf("a heartbeat at %v", now), nil, func() (bool, string) {
			hb := fr.Heartbeats()
			if len(hb) == 0 {
				return false, "none"
			}
			return hb[len(hb)-1].At.Equal(now), fmt.Sprintf("%d, the last at %v", len(hb), hb[len(hb)-1].At)
		})

	}
	const game = 10 * time.Minute
	for n := 2; time.Duration(n-1)*rommreport.Interval <= game; n++ {
		r.clock.Advance(rommreport.Interval)
		beats(n)
		beatNow()
		if len(fr.Active()) != 1 {
			t.Fatalf("after %v of play RomM shows %d games as playing, want 1", time.Duration(n-1)*rommreport.Interval, len(fr.Active()))
		}
	}
	hb := fr.Heartbeats()
	for i := 1; i < len(hb); i++ {
		if gap := hb[i].At.Sub(hb[i-1].At); gap > rommreport.Interval || gap >= fakeromm.ActivityTTL/2 {
			t.Errorf("heartbeat %d came %v after the one before (RomM forgets after %v)", i, gap, fakeromm.ActivityTTL)
		}
		if hb[i].ROMID != fakeromm.ROMAlphaQuest || hb[i].DeviceID != r.cfg.RomM.DeviceID {
			t.Errorf("heartbeat %d: %+v", i, hb[i])
		}
	}
	if len(hb) < int(game/rommreport.Interval) {
		t.Errorf("%d heartbeats over %v", len(hb), game)
	}
	r.clock.Advance(time.Second)
	send(r.stamped(tracker.KindGameEnd))
	cabinettest.Await(t, "RomM's now playing cleared at the game's end", nil, func() (bool, string) {
		return len(fr.Active()) == 0, fmt.Sprintf("%+v", fr.Active())
	})

}
