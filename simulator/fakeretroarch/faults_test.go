package fakeretroarch

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestLatencyHoldsRepliesAndUnloadStillReturns(t *testing.T) {
	s := &Server{}
	r := dialRaw(t, loaded(t, s, stub))
	s.SetLatency(time.Hour)
	r.send("VERSION")
	waitFor(t, s, "the datagram to arrive", func(sn Snapshot) bool { return sn.Datagrams == 1 })
	_ = r.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	buf := make([]byte, 64)
	if n, err := r.conn.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read during an hour of latency: got %q, %v; want no reply yet", buf[:n], err)
	}
	done := make(chan struct{})
	go func() { s.Unload(); close(done) }()
	select {
	case <-done:
	case <-time.After(cabinettest.Deadline):
		t.Fatal("Unload hung behind the latency wait")
	}
}

func TestLatencyZeroAnswers(t *testing.T) {
	s := &Server{}
	r := dialRaw(t, loaded(t, s, stub))
	s.SetLatency(time.Millisecond)
	r.send("VERSION")
	if got := r.mustRead(); got != "1.14.0\n" {
		t.Fatalf("VERSION with 1ms latency: got %q", got)
	}
}

func TestLossIsDeterministic(t *testing.T) {
	s := &Server{}
	r := dialRaw(t, loaded(t, s, stub))
	s.SetLoss(0.5)
	for range 4 {
		r.send("VERSION")
	}
	snap := waitFor(t, s, "4 datagrams", func(sn Snapshot) bool { return sn.Datagrams == 4 })
	if snap.Dropped != 2 {
		t.Fatalf("dropped with loss 0.5 of 4: got %d, want 2", snap.Dropped)
	}
	s.SetLoss(0)
	for range 2 {
		r.mustRead()
	}
	r.expectSilence("") // exactly two replies came
}

func TestDropNext(t *testing.T) {
	s := &Server{}
	r := dialRaw(t, loaded(t, s, stub))
	s.DropNext(2)
	r.send("PAUSE_TOGGLE")
	r.send("GET_STATUS")
	r.send("GET_STATUS")
	if got, want := r.mustRead(), "GET_STATUS PLAYING nes,stub,crc32=708c346c\n"; got != want {
		t.Fatalf("after two dropped datagrams: got %q, want %q", got, want)
	}
	if snap := s.Snapshot(); snap.Dropped != 2 || snap.Paused {
		t.Errorf("got dropped=%d paused=%v, want 2 and false (the PAUSE_TOGGLE was lost)", snap.Dropped, snap.Paused)
	}
}

func TestDown(t *testing.T) {
	s := &Server{}
	addr := loaded(t, s, stub)
	r := dialRaw(t, addr)
	r.send("PAUSE_TOGGLE")
	r.expectSilence("")
	if err := s.SetDown(true); err != nil {
		t.Fatal(err)
	}
	r.expectRefused()
	if err := s.SetDown(false); err != nil {
		t.Fatal(err)
	}
	r.send("GET_STATUS")
	if got, want := r.mustRead(), "GET_STATUS PAUSED nes,stub,crc32=708c346c\n"; got != want {
		t.Fatalf("after coming back up: got %q, want %q (state kept)", got, want)
	}
	if s.Addr() != addr {
		t.Errorf("address after down/up: got %s, want %s", s.Addr(), addr)
	}

	// Down before a game: Load runs it without a socket.
	s.Unload()
	s.SetDown(true)
	if err := s.Load(stub); err != nil {
		t.Fatal(err)
	}
	if snap := s.Snapshot(); !snap.Loaded || snap.Listening {
		t.Errorf("Load while down: got loaded=%v listening=%v, want true false", snap.Loaded, snap.Listening)
	}
	s.SetDown(false)
	if !s.Snapshot().Listening {
		t.Error("SetDown(false) with a game: not listening")
	}
}
