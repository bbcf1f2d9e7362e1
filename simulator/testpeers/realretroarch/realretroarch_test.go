package realretroarch_test

import (
	"bytes"
	"errors"
	"net"
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
