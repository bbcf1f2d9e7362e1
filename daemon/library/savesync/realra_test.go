package savesync

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realretroarch"
)

// TestRealRetroArchSave holds the sync to the real RetroArch 1.14 and its nestopia core: the
// .srm RetroArch writes for a battery-backed cartridge (realretroarch.BatteryROM, whose reset
// copies its SRAM into RAM) where Batocera points savefile_directory is uploaded as is; an edited
// save from the handheld comes back, and the running game reads its bytes (READ_CORE_RAM).
func TestRealRetroArchSave(t *testing.T) {
	r := newRig(t)
	ctx := cabinettest.Context(t)
	g := Game{System: "nes", ROM: "/userdata/roms/nes/battery.nes", ROMID: r.game().ROMID, Core: "nestopia", Name: "Battery"}
	srm := r.srm(g)
	opts := realretroarch.Options{Dir: t.TempDir(), ROM: realretroarch.BatteryROM(), ROMName: "battery",
		Config: map[string]string{"savefile_directory": filepath.Dir(srm)}}
	os.MkdirAll(filepath.Dir(srm), 0o755)

	in := peertest.RetroArch(t, opts)
	cabinettest.Await(t, "the cartridge's marker in its RAM", nil, ramIs(in, realretroarch.SRAMCoreRAMAddr, realretroarch.SRAMMarker[:]))
	if err := in.Quit(ctx); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(srm)
	if err != nil || len(written) != realretroarch.SRAMSize {
		t.Fatalf("RetroArch's save at %s: %d bytes, %v", srm, len(written), err)
	}
	os.Chtimes(srm, r.tm(0), r.tm(0))
	r.at(time.Minute)
	item(t, r.sync(g), Uploaded)
	if on := r.newestOnRomM(g.ROMID); !bytes.Equal(on.Content, written) {
		t.Fatal("RomM does not hold the bytes RetroArch wrote")
	}

	edited := bytes.Clone(written)
	copy(edited, "from the handheld")
	r.at(2 * time.Minute)
	r.fromHandheld(g, "battery.srm", edited)
	r.at(3 * time.Minute)
	item(t, r.sync(g), Downloaded)

	in = peertest.RetroArch(t, opts)
	cabinettest.Await(t, "the handheld's bytes read by the running game", nil, ramIs(in, realretroarch.SRAMCopyAddr, edited[:realretroarch.SRAMCopyLen]))
}

func ramIs(in *realretroarch.Instance, addr uint32, want []byte) func() (bool, string) {
	return func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		got, err := in.ReadCoreRAM(ctx, addr, len(want))
		if err != nil {
			return false, err.Error()
		}
		return bytes.Equal(got, want), fmt.Sprintf("% x", got)
	}
}
