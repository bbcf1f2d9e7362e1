package realretroarch_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realretroarch"
)

func TestBatteryROMHeader(t *testing.T) {
	rom := realretroarch.BatteryROM()
	if got, want := len(rom), 16+16*1024+8*1024; got != want {
		t.Fatalf("size: got %d, want %d", got, want)
	}
	if !bytes.Equal(rom[:8], []byte{'N', 'E', 'S', 0x1a, 1, 1, 0x02, 0}) {
		t.Fatalf("header: got % x, want NES<1a>, 1 PRG, 1 CHR, battery, mapper 0", rom[:8])
	}
	prg := rom[16 : 16+16*1024]
	if reset := int(prg[0x3ffc]) | int(prg[0x3ffd])<<8; reset != 0xc000 || prg[0] != 0x78 {
		t.Fatalf("reset vector $%04x, first opcode %02x: want $c000 and SEI (78)", reset, prg[0])
	}
	if !bytes.Contains(prg, realretroarch.SRAMMarker[:]) {
		t.Fatalf("the marker %q is not in PRG", realretroarch.SRAMMarker)
	}
	if crc32.ChecksumIEEE(rom) == crc32.ChecksumIEEE(realretroarch.StubROM()) {
		t.Fatal("BatteryROM and StubROM have one CRC32")
	}
}

// TestBatterySave holds the facts Cabinet's battery-save handling builds on,
// seen on the real RetroArch 1.14 with Nestopia: a battery cartridge's RAM
// is written to <savefile_directory>/<stem>.srm, 8 KiB, when the content is
// unloaded, on QUIT and on SIGTERM alike (not while it runs: autosave_interval
// is 0); and at the next start RetroArch loads that file into the cartridge
// before the game's first instruction, so an edited save is what the game
// reads.
func TestBatterySave(t *testing.T) {
	dir := t.TempDir()
	ctx := cabinettest.Context(t)
	opts := realretroarch.Options{Dir: dir, ROM: realretroarch.BatteryROM(), ROMName: "battery"}
	marker := realretroarch.SRAMMarker[:]

	// A fresh cartridge: the game writes the marker, QUIT writes the save.
	in := peertest.RetroArch(t, opts)
	if want := crc32.ChecksumIEEE(opts.ROM); in.CRC32 != want {
		t.Fatalf("Instance.CRC32 %08x, want the BatteryROM's %08x", in.CRC32, want)
	}
	status, err := in.Command(ctx, "GET_STATUS")
	if want := fmt.Sprintf("GET_STATUS PLAYING nes,battery,crc32=%x\n", in.CRC32); err != nil || status != want {
		t.Fatalf("GET_STATUS: %q, %v; want %q", status, err, want)
	}
	cabinettest.Await(t, "the game's marker in its battery RAM", nil,
		sramIs(ctx, in, realretroarch.SRAMCoreRAMAddr, marker))
	if _, err := os.Stat(in.SRMPath()); !os.IsNotExist(err) {
		t.Fatalf("%s before QUIT: %v, want none (autosave_interval is 0)", in.SRMPath(), err)
	}
	if err := in.Quit(ctx); err != nil {
		t.Fatal(err)
	}
	srm, err := os.ReadFile(in.SRMPath())
	if err != nil {
		t.Fatalf("no save after QUIT: %v", err)
	}
	if len(srm) != realretroarch.SRAMSize || !bytes.Equal(srm[:len(marker)], marker) || srm[realretroarch.SRAMCounterOffset] != 1 {
		t.Fatalf("save after QUIT: %d bytes, begins % x; want %d bytes, the marker % x, counter 1",
			len(srm), srm[:min(len(srm), 32)], realretroarch.SRAMSize, marker)
	}

	// An edited save: the game reads the edited bytes (its copy at $20),
	// keeps them and counts its second reset; SIGTERM writes the save too.
	edited := []byte("edited by a test")
	copy(srm[realretroarch.SRAMMarkerOffset:], edited)
	if err := os.WriteFile(in.SRMPath(), srm, 0o644); err != nil {
		t.Fatal(err)
	}
	in = peertest.RetroArch(t, opts)
	cabinettest.Await(t, "the edited save in the game's copy", nil,
		sramIs(ctx, in, realretroarch.SRAMCopyAddr, edited))
	cabinettest.Await(t, "the second reset counted", nil,
		sramIs(ctx, in, realretroarch.SRAMCoreRAMAddr+realretroarch.SRAMCounterOffset, []byte{2}))
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	srm, err = os.ReadFile(in.SRMPath())
	if err != nil || len(srm) != realretroarch.SRAMSize || !bytes.Equal(srm[:len(edited)], edited) || srm[realretroarch.SRAMCounterOffset] != 2 {
		t.Fatalf("save after Stop: %d bytes, begins % x, %v; want %d bytes, % x, counter 2",
			len(srm), srm[:min(len(srm), 32)], err, realretroarch.SRAMSize, edited)
	}
}

// sramIs is a condition: READ_CORE_RAM at addr answers want.
func sramIs(ctx context.Context, in *realretroarch.Instance, addr uint32, want []byte) func() (bool, string) {
	return func() (bool, string) {
		got, err := in.ReadCoreRAM(ctx, addr, len(want))
		if err != nil {
			return false, err.Error()
		}
		return bytes.Equal(got, want), fmt.Sprintf("READ_CORE_RAM %x %d: % x, want % x", addr, len(want), got, want)
	}
}
