package realretroarch_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realretroarch"
)

func TestStubROMIsMapper0(t *testing.T) {
	rom := realretroarch.StubROM()
	if got, want := len(rom), 16+16*1024+8*1024; got != want {
		t.Fatalf("size: got %d, want %d", got, want)
	}
	if !bytes.Equal(rom[:6], []byte{'N', 'E', 'S', 0x1a, 1, 1}) || rom[6] != 0 || rom[7] != 0 {
		t.Fatalf("header: got % x, want NES<1a>, 1 PRG, 1 CHR, mapper 0", rom[:8])
	}
	prg := rom[16 : 16+16*1024]
	if reset := int(prg[0x3ffc]) | int(prg[0x3ffd])<<8; reset != 0xc000 || prg[0] != 0x78 {
		t.Fatalf("reset vector $%04x, first opcode %02x: want $c000 and SEI (78)", reset, prg[0])
	}
}

func TestStartAnswersAndStopEndsIt(t *testing.T) {
	in := peertest.RetroArch(t, realretroarch.Options{})
	conn, err := net.Dial("udp", in.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("VERSION"))
	conn.SetReadDeadline(time.Now().Add(cabinettest.Deadline))
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	if err != nil || string(buf[:n]) != "1.14.0\n" {
		t.Fatalf("VERSION: got %q, %v; want \"1.14.0\\n\"", buf[:n], err)
	}
	if err := in.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-in.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	conn.Write([]byte("VERSION"))
	conn.SetReadDeadline(time.Now().Add(cabinettest.Deadline))
	if _, err := conn.Read(buf); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("VERSION after Stop: got %v, want connection refused", err)
	}
}

// TestNarrateAndAutoIndex holds the options Cabinet's household tests build
// on: Narrate logs what SHOW_MSG shows (Spoken), and with Batocera's
// savestate_auto_index SAVE_STATE writes the slot after the highest one in
// the folder when RetroArch started, leaving that one alone.
func TestNarrateAndAutoIndex(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "states", realretroarch.DefaultROMName+".state3")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("the player's"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := peertest.RetroArch(t, realretroarch.Options{Dir: dir, Narrate: true,
		Config: map[string]string{"savestate_auto_index": "true"}})
	conn, err := net.Dial("udp", in.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	spoke := func(text string) func() (bool, string) {
		return func() (bool, string) {
			got := in.Spoken()
			return slices.Contains(got, text), fmt.Sprintf("spoken %q", got)
		}
	}
	conn.Write([]byte("SHOW_MSG Cabinet says hi"))
	cabinettest.Await(t, "SHOW_MSG spoken", nil, spoke("Cabinet says hi"))
	conn.Write([]byte("SAVE_STATE"))
	state4 := filepath.Join(in.SavestateDir, realretroarch.DefaultROMName+".state4")
	cabinettest.Await(t, "a new slot "+state4, nil, func() (bool, string) {
		fi, err := os.Stat(state4)
		return err == nil && fi.Size() > 0, fmt.Sprint(err)
	})
	cabinettest.Await(t, "RetroArch's word on the save", nil, spoke("100%: Saved state to slot #4."))
	if b, err := os.ReadFile(mine); err != nil || string(b) != "the player's" {
		t.Errorf("the player's slot 3: %q, %v", b, err)
	}
}
