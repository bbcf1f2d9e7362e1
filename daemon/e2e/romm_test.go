package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// TestRomMPlaySessions: a cabinet paired with RomM while its daemon runs
// (`cabinet romm pair --code`, against the fake RomM) shows the running game as its activity
// in RomM (cleared when it ends) and sends the sessions it logs to RomM's
// play history: the game RomM has (found by the file's hashes) with its
// rom_id, once, and a game RomM does not have is kept unmatched, not sent.
func TestRomMPlaySessions(t *testing.T) {
	r := newRigWith(t, nil, simulator.Options{RomM: true}, "cabinet.romm.token_file=")
	fr := r.cab.RomM
	// Paired while the daemon runs: it picks the pairing up live.
	r.start()
	code := fr.NewPairCode(append(fakeromm.ReadScopes(), fakeromm.WriteScopes()...))
	if out, exit, _ := runCabinet(t, r.env(), "romm", "pair", "--code", code); exit != 0 {
		t.Fatalf("cabinet romm pair --code: exit %d\n%s", exit, out)
	}
	r.d.waitLog("configuration change applied", 10*time.Second)

	rom := r.cab.RomMGamePath()
	name := "Alpha Quest"
	r.hook(append([]string{"game-start"}, esevents.GameStartArgs(rom, name)...)...)
	// While it runs, RomM shows it as the cabinet's activity.
	cabinettest.WaitFor(t, 20*time.Second, "RomM's activity shows the game", nil, func() (bool, string) {
		for _, a := range fr.Active() {
			if a.ROMID == fakeromm.ROMAlphaQuest && a.DeviceID != "" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", fr.Heartbeats())
	})
	time.Sleep(1100 * time.Millisecond) // RomM keeps whole seconds: a session of at least one
	r.hook("game-end")
	cabinettest.WaitFor(t, 20*time.Second, "RomM's activity cleared after the game", nil, func() (bool, string) {
		return len(fr.Active()) == 0, fmt.Sprintf("%+v", fr.Active())
	})
	other := "/userdata/roms/nes/Homebrew_Not_In_RomM.nes"
	r.hook(append([]string{"game-start"}, esevents.GameStartArgs(other, "Homebrew")...)...)
	time.Sleep(1100 * time.Millisecond)
	r.hook("game-end")

	cabinettest.WaitFor(t, 30*time.Second, "RomM receives the session", nil, func() (bool, string) {
		got := fr.PlaySessions()
		return len(got) >= 1, fmt.Sprintf("%+v", got)
	})
	// The unmatched one is not sent later either.
	time.Sleep(2 * time.Second)
	got := fr.PlaySessions()
	if len(got) != 1 || got[0].ROMID != fakeromm.ROMAlphaQuest || got[0].DeviceID == "" || !got[0].EndTime.After(got[0].StartTime) {
		t.Fatalf("RomM's play history: %+v; want one session of Alpha Quest (rom %d) from the cabinet's device", got, fakeromm.ROMAlphaQuest)
	}
	if !strings.Contains(r.logs.String(), "play sessions reported to RomM") {
		t.Errorf("the daemon did not log the report:\n%s", r.logs.Tail())
	}
	// The daemon's status (doctor shows it) counts them.
	r.waitStatus("RomM counts", func(s daemon.Status) bool {
		return s.RomM != nil && s.RomM.Delivered == 1 && s.RomM.Unmatched == 1 && s.RomM.Waiting == 0
	})
}

// TestRomMSyncAndBackfill: with no daemon, a hook only queues its session
// (nothing calls RomM on ES's path); `cabinet romm sync` sends it. A session
// from before the pairing goes only after `cabinet romm backfill`.
func TestRomMSyncAndBackfill(t *testing.T) {
	r := newRigWith(t, nil, simulator.Options{RomM: true}, "cabinet.romm.token_file=")
	fr := r.cab.RomM
	rom := r.cab.RomMGamePath()
	play := func() {
		r.hook(append([]string{"game-start"}, esevents.GameStartArgs(rom, "Alpha Quest")...)...)
		time.Sleep(1100 * time.Millisecond)
		r.hook("game-end")
		time.Sleep(4 * time.Second) // the tracker makes a session final a few seconds after it ends
		r.hook("wake")              // any event applies the flush
	}
	play() // before pairing
	code := fr.NewPairCode(append(fakeromm.ReadScopes(), fakeromm.WriteScopes()...))
	if out, exit, _ := runCabinet(t, r.env(), "romm", "pair", "--code", code); exit != 0 {
		t.Fatalf("cabinet romm pair --code: exit %d\n%s", exit, out)
	}
	play() // after pairing
	if n := len(fr.PlaySessions()); n != 0 {
		t.Fatalf("RomM got %d session(s) from hooks running alone, want none before a sync", n)
	}
	if out, exit, _ := runCabinet(t, r.env(), "romm", "sync"); exit != 0 || !strings.Contains(out, "1 session(s) delivered") {
		t.Fatalf("cabinet romm sync: exit %d\n%s", exit, out)
	}
	if n := len(fr.PlaySessions()); n != 1 {
		t.Fatalf("RomM has %d sessions after the sync, want the one after pairing", n)
	}
	if out, exit, _ := runCabinet(t, r.env(), "romm", "backfill", "--since", time.Now().Add(-24*time.Hour).Format("2006-01-02")); exit != 0 {
		t.Fatalf("cabinet romm backfill: exit %d\n%s", exit, out)
	}
	if out, exit, _ := runCabinet(t, r.env(), "romm", "sync"); exit != 0 || !strings.Contains(out, "1 session(s) delivered") {
		t.Fatalf("cabinet romm sync after backfill: exit %d\n%s", exit, out)
	}
	if got := fr.PlaySessions(); len(got) != 2 || got[0].StartTime.Equal(got[1].StartTime) {
		t.Fatalf("RomM's history after the backfill: %+v; want both sessions once", got)
	}
}
