package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestInstallKilledMidDownload: the daemon killed (-9) while `cabinet call library_install`
// downloads leaves nothing EmulationStation lists (only the hidden stage folder), doctor reports
// the leftover, the next daemon removes it when it starts, and the install then completes.
func TestInstallKilledMidDownload(t *testing.T) {
	r := newRigWith(t, nil, simulator.Options{RomM: true}, "cabinet.library.allow_install=1")
	fr := r.cab.RomM
	d := r.start()
	r.cab.ES.Start()
	fr.SetFaults(fakeromm.Faults{Path: fmt.Sprintf("/api/roms/%d/content/", fakeromm.ROMCosmicCrusade), Latency: time.Minute}) // RomM takes its time
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		out, code, _ := run(t, time.Minute, r.env(), cabinetBin, "call", "library_install", fmt.Sprintf("rom_id=%d", fakeromm.ROMCosmicCrusade))
		done <- result{out, code}
	}()
	snes := r.cab.Path("/userdata/roms/snes")
	stage := filepath.Join(snes, fmt.Sprintf(".cabinet-install-romm-%d", fakeromm.ROMCosmicCrusade))
	cabinettest.Await(t, "the install to start downloading", nil, func() (bool, string) {
		_, err := os.Stat(stage)
		return err == nil, fmt.Sprint(err)
	})

	d.kill9()
	if res := <-done; res.code == 0 {
		t.Errorf("cabinet call library_install succeeded although its daemon was killed mid-download:\n%s", res.out)
	}
	if _, err := os.Stat(filepath.Join(snes, "Cosmic Crusade (USA).sfc")); !os.IsNotExist(err) {
		t.Fatalf("the game's file is in the system folder after the kill: %v", err)
	}
	doc, _, _ := runCabinet(t, r.env(), "doctor")
	if !strings.Contains(doc, "1 unfinished library install") {
		t.Errorf("doctor does not report the leftover:\n%s", doc)
	}
	fr.SetFaults(fakeromm.Faults{})
	r.start()
	r.d.waitLog("removed what unfinished installs left", 20*time.Second)
	if _, err := os.Stat(stage); !os.IsNotExist(err) {
		t.Fatalf("the stage is still there after the restart: %v", err)
	}
	out, code, _ := runCabinet(t, r.env(), "call", "library_install", fmt.Sprintf("rom_id=%d", fakeromm.ROMCosmicCrusade))
	if code != 0 || !strings.Contains(out, `"listed": true`) || !strings.Contains(out, `"verified": true`) {
		t.Fatalf("install after the restart: exit %d\n%s", code, out)
	}
}
