package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestRomMPlaySessions: a cabinet paired with RomM while its daemon runs
// (`cabinet romm pair --code`, against the fake RomM) shows the running game as its activity
// in RomM (cleared when it ends) and sends the sessions it logs to RomM's
// play history: the game RomM has (found by the file's hashes) with its
// rom_id, once, and a game RomM does not have is kept unmatched, not sent.
func TestRomMPlaySessions(t *testing.T) {
	cabinettest.Long(t, "whole seconds of real play time for RomM")
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
	cabinettest.Await(t, "RomM's activity shows the game", nil, func() (bool, string) {
		for _, a := range fr.Active() {
			if a.ROMID == fakeromm.ROMAlphaQuest && a.DeviceID != "" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", fr.Heartbeats())
	})

	time.Sleep(1100 * time.Millisecond) // RomM keeps whole seconds: a session of at least one
	r.hook("game-end")
	cabinettest.Await(t, "RomM's activity cleared after the game", nil, func() (bool, string) {
		return len(fr.Active()) == 0, fmt.Sprintf("%+v", fr.Active())
	})

	other := "/userdata/roms/nes/Homebrew_Not_In_RomM.nes"
	r.hook(append([]string{"game-start"}, esevents.GameStartArgs(other, "Homebrew")...)...)
	time.Sleep(1100 * time.Millisecond)
	r.hook("game-end")

	cabinettest.Await(t, "RomM receives the session", nil, func() (bool, string) {
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
	// So does library_status, with the cabinet's device.
	out, exit, _ := runCabinet(t, r.env(), "call", "library_status")
	for _, want := range []string{`"paired": true`, `"delivered": 1`, `"unmatched": 1`, `"waiting": 0`, `RomM does not have`} {
		if exit != 0 || !strings.Contains(out, want) {
			t.Errorf("library_status lacks %s (exit %d):\n%s", want, exit, out)
		}
	}
	if strings.Contains(out, `"device_id": null`) {
		t.Errorf("library_status has no device id:\n%s", out)
	}
}

// TestRomMSyncAndBackfill: with no daemon, a hook only queues its session
// (nothing calls RomM on ES's path); `cabinet romm sync` sends it. A session
// from before the pairing goes only after `cabinet romm backfill`.
func TestRomMSyncAndBackfill(t *testing.T) {
	cabinettest.Long(t, "whole seconds of real play time for RomM")
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

// TestRomMOutageCrashAndRevokedToken: 100 sessions logged while RomM
// fails every write wait (counted, RomM's failure shown); the daemon killed
// (-9) after RomM took the batch but before it heard so sends it again once
// restarted, and RomM's "duplicate" answers count as delivered: each
// session is in RomM's history once, in the order played. A token revoked
// in RomM holds the next session back (nothing lost) until the cabinet is
// paired again, and then it goes.
func TestRomMOutageCrashAndRevokedToken(t *testing.T) {
	cabinettest.Long(t, "three daemon starts and a RomM outage, about 15 s")
	r := newRigWith(t, nil, simulator.Options{RomM: true}, "cabinet.romm.token_file=")
	fr := r.cab.RomM
	pair := func() {
		t.Helper()
		code := fr.NewPairCode(append(fakeromm.ReadScopes(), fakeromm.WriteScopes()...))
		if out, exit, _ := runCabinet(t, r.env(), "romm", "pair", "--code", code); exit != 0 {
			t.Fatalf("cabinet romm pair --code: exit %d\n%s", exit, out)
		}
	}
	pair()
	yesterday := time.Now().Add(-24 * time.Hour)
	if out, exit, _ := runCabinet(t, r.env(), "romm", "backfill", "--since", yesterday.Format("2006-01-02")); exit != 0 {
		t.Fatalf("cabinet romm backfill: exit %d\n%s", exit, out)
	}
	// Yesterday evening's 100 sessions, logged while RomM was away.
	const n = 100
	evening := time.Date(yesterday.Year(), yesterday.Month(), yesterday.Day(), 18, 0, 0, 0, time.Local)
	seedSessions(t, r, r.cab.RomMGamePath(), evening, n)

	fr.FailWrites(http.StatusServiceUnavailable)
	d := r.start()
	st := r.waitStatus("every session waiting, RomM's failure shown", func(s daemon.Status) bool {
		return s.RomM != nil && s.RomM.Waiting == n && s.RomM.LastError != ""
	})
	if !strings.Contains(st.RomM.LastError, "503") && !strings.Contains(st.RomM.LastError, "Service Unavailable") {
		t.Errorf("RomM's failure as the status says it: %q", st.RomM.LastError)
	}
	if got := fr.PlaySessions(); len(got) != 0 {
		t.Fatalf("RomM failing its writes stored %d sessions", len(got))
	}

	// RomM is back but slow to answer: it takes the batch, and the daemon
	// dies before the answer comes.
	d.kill9()
	fr.FailWrites(0)
	fr.SetFaults(fakeromm.Faults{Path: "/api/play-sessions", LatencyAfter: 5 * time.Second})
	d = r.start()
	cabinettest.Await(t, "RomM to take the batch", nil, func() (bool, string) {
		return len(fr.PlaySessions()) == n, fmt.Sprintf("%d sessions", len(fr.PlaySessions()))
	})

	d.kill9()
	fr.SetFaults(fakeromm.Faults{})
	r.start()
	r.waitStatus("all delivered after the restart", func(s daemon.Status) bool {
		return s.RomM != nil && s.RomM.Delivered == n && s.RomM.Waiting == 0 && s.RomM.LastError == ""
	})
	got := fr.PlaySessions()
	if len(got) != n {
		t.Fatalf("RomM's history has %d sessions after the crash, want each of the %d once", len(got), n)
	}
	for i, s := range got {
		if want := evening.Add(time.Duration(i) * time.Minute).UTC(); !s.StartTime.Equal(want) || s.ROMID != fakeromm.ROMAlphaQuest {
			t.Fatalf("session %d: rom %d from %s, want Alpha Quest from %s (in the order played)", i, s.ROMID, s.StartTime, want)
		}
	}

	// The household deletes the cabinet's token in RomM: the next session
	// waits, and RomM's refusal is shown.
	fr.RevokeIssued()
	r.hook(append([]string{"game-start"}, esevents.GameStartArgs(r.cab.RomMGamePath(), "Alpha Quest")...)...)
	time.Sleep(1100 * time.Millisecond) // RomM keeps whole seconds
	r.hook("game-end")
	r.waitStatus("the new session waiting on the revoked token", func(s daemon.Status) bool {
		return s.RomM != nil && s.RomM.Waiting == 1 && s.RomM.LastError != ""
	})
	if len(fr.PlaySessions()) != n {
		t.Fatal("a revoked token still reached RomM's history")
	}
	// Paired again (the daemon picks it up live): it goes at once.
	pair()
	r.waitStatus("delivered after pairing again", func(s daemon.Status) bool {
		return s.RomM != nil && s.RomM.Delivered == n+1 && s.RomM.Waiting == 0
	})
	if got := fr.PlaySessions(); len(got) != n+1 {
		t.Fatalf("RomM's history has %d sessions, want %d", len(got), n+1)
	}
}

// seedSessions appends n sessions of rom to the store (the daemon must be
// stopped), a minute apart from start, 30 s each: sessions the tracker
// logged earlier.
func seedSessions(t *testing.T, r *rig, rom string, start time.Time, n int) {
	t.Helper()
	s, err := store.Open(filepath.Join(r.state, "cabinet.db"), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	defer s.Close()
	if err := s.Update(func(tx *store.Tx) error {
		for i := range n {
			at := start.Add(time.Duration(i) * time.Minute)
			if err := tx.AppendSession(haentities.Session{ID: at.UTC().Format("20060102T150405.000Z") + fmt.Sprintf("-seed%04d", i),
				Game: "Alpha Quest", System: "nes", Rom: rom, Started: at, Ended: at.Add(30 * time.Second), Duration: 30 * time.Second}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRomMDeviceForgotten: RomM answers 404 for the cabinet's device
// (deleted in RomM's web UI): the daemon registers the cabinet again once,
// keeps the new id and RomM shows the game as playing again; doctor says
// so. Forgotten a second time, it does not loop: doctor warns to pair again.
func TestRomMDeviceForgotten(t *testing.T) {
	r := newRigWith(t, nil, simulator.Options{RomM: true}, "cabinet.romm.token_file=")
	fr := r.cab.RomM
	code := fr.NewPairCode(append(fakeromm.ReadScopes(), fakeromm.WriteScopes()...))
	if out, exit, _ := runCabinet(t, r.env(), "romm", "pair", "--code", code); exit != 0 {
		t.Fatalf("cabinet romm pair --code: exit %d\n%s", exit, out)
	}
	devs := fr.Devices()
	if len(devs) != 1 {
		t.Fatalf("RomM has %d devices after pairing", len(devs))
	}
	first := devs[0].ID
	fr.DeleteDevice(first)
	r.start()
	play := func() {
		t.Helper()
		r.hook(append([]string{"game-start"}, esevents.GameStartArgs(r.cab.RomMGamePath(), "Alpha Quest")...)...)
	}
	play()
	cabinettest.Await(t, "RomM to show the game under the cabinet's new device", nil, func() (bool, string) {
		for _, a := range fr.Active() {
			if a.DeviceID != "" && a.DeviceID != first {
				return true, ""
			}
		}
		return false, fmt.Sprintf("active %+v, devices %+v", fr.Active(), fr.Devices())
	})

	st := r.waitStatus("the re-registration noted", func(s daemon.Status) bool { return s.RomM != nil && s.RomM.Device != "" })
	if st.RomM.DeviceProblem || !strings.Contains(st.RomM.Device, "registered again as device") {
		t.Errorf("status: %+v", st.RomM)
	}
	out, _, _ := runCabinet(t, r.env(), "doctor")
	if !strings.Contains(out, "RomM had forgotten the cabinet's device, which registered again") {
		t.Errorf("doctor does not say the cabinet registered again:\n%s", out)
	}
	out, _, _ = runCabinet(t, r.env(), "doctor", "--verbose")
	if !strings.Contains(out, "registered again as device") {
		t.Errorf("doctor does not say the cabinet registered again:\n%s", out)
	}

	// Forgotten again: said once, no registration loop.
	fr.DeleteDevice(fr.Devices()[0].ID)
	r.hook("game-end")
	play()
	r.waitStatus("the device problem", func(s daemon.Status) bool { return s.RomM != nil && s.RomM.DeviceProblem })
	time.Sleep(time.Second)
	if n := len(fr.Devices()); n != 0 {
		t.Errorf("RomM has %d devices: the daemon registered again a second time", n)
	}
	out, _, _ = runCabinet(t, r.env(), "doctor")
	if !strings.Contains(out, "RomM does not know the cabinet's device") || !strings.Contains(out, "cabinet romm pair") {
		t.Errorf("doctor does not warn to pair again:\n%s", out)
	}
	r.hook("game-end")
}
