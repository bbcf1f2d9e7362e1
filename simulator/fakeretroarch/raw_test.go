package fakeretroarch

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// rawConn is a UDP socket connected to the fake, for byte-exact checks.
type rawConn struct {
	t    *testing.T
	conn net.Conn
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c}
}

func (r *rawConn) send(msg string) {
	r.t.Helper()
	if _, err := r.conn.Write([]byte(msg)); err != nil {
		r.t.Fatalf("send %q: %v", msg, err)
	}
}

// read returns the next datagram, or the read error.
func (r *rawConn) read() (string, error) {
	buf := make([]byte, 64*1024)
	_ = r.conn.SetReadDeadline(time.Now().Add(cabinettest.Deadline))
	n, err := r.conn.Read(buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func (r *rawConn) mustRead() string {
	r.t.Helper()
	s, err := r.read()
	if err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	return s
}

// expectSilence proves msg got no reply without waiting for a timeout: the
// fake handles datagrams in order, so a VERSION sent next must produce the
// very next datagram.
func (r *rawConn) expectSilence(msg string) {
	r.t.Helper()
	r.send(msg)
	r.send("VERSION")
	if got := r.mustRead(); got != Version+"\n" {
		r.t.Fatalf("after %q: got reply %q, want silence (then the VERSION reply)", msg, got)
	}
}

// expectRefused sends and reports whether the port was refused.
func (r *rawConn) expectRefused() {
	r.t.Helper()
	r.send("VERSION")
	_, err := r.read()
	if !errors.Is(err, syscall.ECONNREFUSED) {
		r.t.Fatalf("read after VERSION: got %v, want connection refused", err)
	}
}

func loaded(t *testing.T, s *Server, c Content) string {
	t.Helper()
	if err := s.Load(c); err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(s.Unload)
	return s.Addr()
}

func waitFor(t *testing.T, s *Server, what string, cond func(Snapshot) bool) Snapshot {
	t.Helper()
	snap, err := s.WaitFor(cabinettest.Context(t), cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v (last snapshot %+v)", what, err, snap)
	}
	return snap
}

var stub = Content{SystemID: "nes", Basename: "stub", CRC32: 0x708c346c}
