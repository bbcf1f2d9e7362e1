package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// saveRig is a cabinet with save sync on, paired with the fake RomM (`cabinet romm pair --code
// --sync-saves`) while its daemon runs, and the household's handheld registered in RomM.
type saveRig struct {
	*rig
	fr       *fakeromm.Server
	handheld string
	rom, srm string
}

func newSaveRig(t *testing.T, b *testBroker) *saveRig {
	t.Helper()
	r := newRigWith(t, b, simulator.Options{RomM: true}, "cabinet.romm.token_file=", "cabinet.romm.sync_saves=1")
	s := &saveRig{rig: r, fr: r.cab.RomM, rom: r.cab.RomMGamePath()}
	s.srm = r.cab.BatterySave("nes", s.rom)
	s.handheld = s.fr.AddDevice(fakeromm.Device{Name: "handheld", Platform: "muos", Client: "grout", SyncEnabled: true})
	r.start()
	code := s.fr.NewPairCode(pairing.SyncScopes())
	if out, exit, _ := runCabinet(t, r.env(), "romm", "pair", "--code", code, "--sync-saves"); exit != 0 {
		t.Fatalf("cabinet romm pair --code --sync-saves: exit %d\n%s", exit, out)
	}
	r.d.waitLog("configuration change applied", 10*time.Second)
	return s
}

// play runs the game through its hooks; the emulator writes save while it runs.
func (s *saveRig) play(save []byte, during func()) {
	s.t.Helper()
	s.hook(append([]string{"game-start"}, esevents.GameStartArgs(s.rom, "Alpha Quest")...)...)
	if err := os.MkdirAll(filepath.Dir(s.srm), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(s.srm, save, 0o644); err != nil {
		s.t.Fatal(err)
	}
	if during != nil {
		during()
	}
	s.hook("game-end")
}

func (s *saveRig) fromHandheld(data []byte) int {
	s.t.Helper()
	id, err := s.fr.AddSave(fakeromm.SaveSpec{ROMID: fakeromm.ROMAlphaQuest, Slot: "autosave", FileName: "Alpha Quest.sav",
		Emulator: "mGBA", Content: data, DeviceID: s.handheld})
	if err != nil {
		s.t.Fatal(err)
	}
	return id
}

// awaitRomM waits until RomM's newest save of the game holds want.
func (s *saveRig) awaitRomM(what string, want []byte) {
	s.t.Helper()
	cabinettest.Await(s.t, what, s.logs.Changed, func() (bool, string) {
		list := s.fr.Saves(fakeromm.ROMAlphaQuest)
		for _, sv := range list {
			if bytes.Equal(sv.Content, want) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d saves in RomM", len(list))
	})
}

// awaitLocal waits until the cabinet's save holds want.
func (s *saveRig) awaitLocal(what string, want []byte) {
	s.t.Helper()
	cabinettest.Await(s.t, what, s.logs.Changed, func() (bool, string) {
		b, err := os.ReadFile(s.srm)
		if err != nil {
			return false, err.Error()
		}
		return bytes.Equal(b, want), fmt.Sprintf("%d bytes, starting %q", len(b), b[:min(len(b), 12)])
	})
}

func (s *saveRig) selectGame() {
	s.hook(append([]string{"game-selected"}, esevents.GameSelectedArgs("nes", s.rom, "Alpha Quest")...)...)
}

func sram(tag string) []byte {
	b := make([]byte, 8192)
	copy(b, tag)
	return b
}

// TestSaveSync is the household's round through the binary: a save made on the cabinet reaches
// RomM when the game ends; the handheld's newer save is in place after the game is selected in
// ES, before it is launched (the cabinet's kept as a backup); the cabinet and the handheld both
// playing is a conflict that keeps both and raises Home Assistant's event; the household keeps
// RomM's with library_resolve_save.
func TestSaveSync(t *testing.T) {
	cabinettest.Long(t, "the save sync through the binary and the hooks")
	b := startBroker(t, cabinettest.Mosquitto)
	s := newSaveRig(t, b)

	s.play(sram("cabinet-1"), nil)
	s.awaitRomM("the cabinet's save in RomM after the game", sram("cabinet-1"))

	s.fromHandheld(sram("handheld-1"))
	s.selectGame()
	s.awaitLocal("the handheld's save on the cabinet after the game is selected", sram("handheld-1"))
	var backups []string
	ents, _ := os.ReadDir(s.cab.Path("/userdata/saves/.cabinet-backup/nes"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), filepath.Base(s.srm)+".") {
			backups = append(backups, filepath.Join(s.cab.Path("/userdata/saves/.cabinet-backup/nes"), e.Name()))
		}
	}
	if len(backups) != 1 {
		t.Fatalf("backups %v, want the cabinet's save", backups)
	}
	if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, sram("cabinet-1")) {
		t.Fatalf("the backup holds %q", b[:12])
	}

	mark := s.obs.Mark()
	s.play(sram("cabinet-2"), func() { s.fromHandheld(sram("handheld-2")) })
	topic := s.topic("save_problem")
	cabinettest.Await(t, "the conflict event", s.obs.Changed, func() (bool, string) {
		for _, m := range s.obs.Since(mark) {
			if m.Topic == topic && strings.Contains(m.Payload, `"event_type":"conflict"`) {
				return strings.Contains(m.Payload, "Alpha Quest") && strings.Contains(m.Payload, "library_resolve_save"), m.Payload
			}
		}
		return false, "no event"
	})
	s.obs.AwaitLatest(s.topic("save_sync"), "conflict")
	if b, _ := os.ReadFile(s.srm); !bytes.Equal(b, sram("cabinet-2")) {
		t.Fatal("the conflict replaced the cabinet's save")
	}
	st := s.waitStatus("the conflict in the status", func(st daemon.Status) bool { return st.SaveSync != nil && st.SaveSync.Conflicts == 1 })
	c := st.SaveSync.Waiting[0]
	if b, _ := os.ReadFile(c.Copy); !bytes.Equal(b, sram("handheld-2")) {
		t.Fatalf("RomM's side at %s: %q", c.Copy, b)
	}
	out, _, _ := runCabinet(t, s.env(), "doctor")
	if !strings.Contains(out, "Conflict: Alpha Quest") {
		t.Errorf("doctor does not show the conflict:\n%s", out)
	}

	out, exit, _ := runCabinet(t, s.env(), "call", "library_resolve_save", "system=nes", "game_id="+library.GameID(s.rom), "slot=autosave", "keep=romm")
	if exit != 0 {
		t.Fatalf("library_resolve_save: exit %d\n%s", exit, out)
	}
	s.awaitLocal("RomM's save in place after keep=romm", sram("handheld-2"))
	s.obs.AwaitLatest(s.topic("save_sync"), "ok")
	t.Logf("library_resolve_save: %s", out)

	// Asked over MCP: every game, and what one game's saves are.
	s.play(sram("cabinet-3"), nil)
	s.awaitRomM("the cabinet's next save in RomM", sram("cabinet-3"))
	s.fromHandheld(sram("handheld-4"))
	out, exit, _ = runCabinet(t, s.env(), "call", "library_sync_saves")
	var synced struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal([]byte(out), &synced); exit != 0 || err != nil || synced.Counts["downloaded"] != 1 {
		t.Fatalf("library_sync_saves: exit %d, %v\n%s", exit, err, out)
	}
	if b, _ := os.ReadFile(s.srm); !bytes.Equal(b, sram("handheld-4")) {
		t.Fatalf("after library_sync_saves the save holds %q", b[:12])
	}
	out, exit, _ = runCabinet(t, s.env(), "call", "library_saves", "system=nes", "game_id="+library.GameID(s.rom))
	if exit != 0 || !strings.Contains(out, `"autosave"`) || strings.Count(out, `"emulator"`) < 4 {
		t.Fatalf("library_saves: exit %d\n%s", exit, out)
	}
}

// TestSaveSyncKilled: the daemon killed (SIGKILL) while it downloads a save leaves the cabinet's
// save byte-identical; the next daemon finishes the download and clears what was left.
func TestSaveSyncKilled(t *testing.T) {
	cabinettest.Long(t, "a daemon killed in a download")
	s := newSaveRig(t, nil)
	s.play(sram("cabinet-1"), nil)
	s.awaitRomM("the cabinet's save in RomM", sram("cabinet-1"))

	big := bytes.Repeat([]byte("handheld"), 1<<17) // 1 MiB
	s.fromHandheld(big)
	// RomM starts the answer and then holds it: the daemon is mid-download.
	s.fr.SetFaults(fakeromm.Faults{Path: "/api/saves/", LatencyAfter: time.Minute})
	s.selectGame()
	cabinettest.Await(t, "the download started", nil, func() (bool, string) {
		for _, rq := range s.fr.Requests() {
			if strings.HasSuffix(rq.Path, "/content") {
				return true, ""
			}
		}
		return false, "no download yet"
	})
	s.d.cmd.Process.Signal(syscall.SIGKILL)
	<-s.d.done
	if b, _ := os.ReadFile(s.srm); !bytes.Equal(b, sram("cabinet-1")) {
		t.Fatal("the killed download changed the save")
	}
	s.fr.SetFaults(fakeromm.Faults{})
	s.start()
	s.selectGame()
	s.awaitLocal("the handheld's save after a restart", big)
	ents, _ := os.ReadDir(filepath.Dir(s.srm))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".cabinet-tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestSaveSyncRomMDown: RomM failing when a game ends leaves the save on the cabinet, the sync in
// error (doctor's and HA's last error), and the save goes by itself once RomM is back, after
// the backoff (30 s), with no other event to wake the sync.
func TestSaveSyncRomMDown(t *testing.T) {
	cabinettest.Long(t, "the save sync's backoff: 30 s of real time")
	t.Parallel()
	s := newSaveRig(t, nil)
	s.fr.FailWrites(503)
	s.play(sram("cabinet-1"), nil)
	st := s.waitStatus("the sync in error", func(st daemon.Status) bool {
		return st.SaveSync != nil && st.SaveSync.State == "error" && st.SaveSync.LastError != "" && !st.SaveSync.NextTry.IsZero()
	})
	t.Logf("while RomM fails: %s (next try %s)", st.SaveSync.LastError, st.SaveSync.NextTry.Format(time.TimeOnly))
	if n := len(s.fr.Saves(fakeromm.ROMAlphaQuest)); n != 0 {
		t.Fatalf("RomM holds %d saves while failing", n)
	}
	if b, _ := os.ReadFile(s.srm); !bytes.Equal(b, sram("cabinet-1")) {
		t.Fatal("the save changed")
	}
	s.fr.FailWrites(0)
	s.awaitRomM("the save in RomM after its backoff", sram("cabinet-1"))
	s.waitStatus("the sync ok again", func(st daemon.Status) bool { return st.SaveSync != nil && st.SaveSync.State == "ok" })
}
