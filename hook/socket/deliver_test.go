package socket

import (
	"bufio"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/bootclock"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// daemonStub listens on a unix socket and answers each connection with
// reply(request line).
func daemonStub(t *testing.T, reply func(conn net.Conn, req Request)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cabinet.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				var req Request
				if err := ReadLine(bufio.NewReader(conn), &req); err != nil {
					return
				}
				reply(conn, req)
			}()
		}
	}()
	return path
}

func TestDeliver(t *testing.T) {
	ev := stamped(tracker.KindGameStart)
	ev.Path = "/userdata/roms/nes/Zelda (USA).nes"
	got := make(chan Request, 1)
	cases := []struct {
		name    string
		reply   func(net.Conn, Request)
		wantErr string // "" for success
	}{
		{"acked", func(c net.Conn, r Request) { got <- r; c.Write([]byte(`{"ok":true}` + "\n")) }, ""},
		{"ack in pieces", func(c net.Conn, r Request) {
			c.Write([]byte(`{"ok"`))
			time.Sleep(5 * time.Millisecond)
			c.Write([]byte(":true}\n"))
		}, ""},
		{"refused", func(c net.Conn, r Request) { c.Write([]byte(`{"ok":false,"error":"disk full"}` + "\n")) }, "daemon refused the event: disk full"},
		{"closed without ack", func(c net.Conn, r Request) {}, "without an ack"},
		{"garbage", func(c net.Conn, r Request) { c.Write([]byte("HTTP/1.1 400\n")) }, "ack"},
		{"endless", func(c net.Conn, r Request) {
			for i := 0; i < 100; i++ {
				if _, err := c.Write([]byte(strings.Repeat("x", 512))); err != nil {
					return
				}
			}
		}, "too long"},
		{"silent", func(c net.Conn, r Request) { time.Sleep(time.Second) }, "deadline exceeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sock := daemonStub(t, c.reply)
			// Only the silent daemon is held to the fast path's budget (Deliver's):
			// every other answer is waited for as long as a loaded machine takes.
			var err error
			if c.name == "silent" {
				err = Deliver(context.Background(), sock, "key-1", ev)
			} else {
				err = deliver(context.Background(), sock, "key-1", ev, cabinettest.Deadline)
			}
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Deliver: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Deliver error = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
	r := <-got
	if r.Op != OpEvent || r.Key != "key-1" || r.Event == nil || r.Event.Path != ev.Path || !r.Event.At.Equal(ev.At) {
		t.Fatalf("daemon got %+v, want the event under key-1", r)
	}
}

func TestDeliverWithoutDaemon(t *testing.T) {
	ev := stamped(tracker.KindWake)
	if err := Deliver(context.Background(), filepath.Join(t.TempDir(), "absent.sock"), "k", ev); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("no socket: err = %v, want ErrNoDaemon", err)
	}
	// A socket file left by a crash: nobody listens.
	path := filepath.Join(t.TempDir(), "stale.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if err := Deliver(context.Background(), path, "k", ev); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("stale socket: err = %v, want ErrNoDaemon", err)
	}
	// The caller's budget is shorter than the fast path's: it wins.
	ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	sock := daemonStub(t, func(c net.Conn, r Request) { c.Write([]byte(`{"ok":true}` + "\n")) })
	if err := Deliver(ctx, sock, "k", ev); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("spent budget: err = %v, want a deadline error", err)
	}
}

func stamped(kind tracker.Kind) tracker.Event {
	return bootclock.Now().Event(kind, tracker.SourceES)
}
