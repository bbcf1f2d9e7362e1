package es

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
)

func TestPowerRoutes(t *testing.T) {
	f := newFake(t, nil, Config{})
	p := NewPowerClient(f.c)
	cx := ctx(t)
	for _, tc := range []struct {
		name  string
		call  func(context.Context) error
		route string
	}{
		{"RestartES", p.RestartES, fakees.RouteQuit},
		{"Reboot", p.Reboot, fakees.RouteRestart},
		{"Shutdown", p.Shutdown, fakees.RouteShutdown},
	} {
		before := f.srv.CallCount(tc.route)
		if err := tc.call(cx); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got := f.srv.CallCount(tc.route) - before; got != 1 {
			t.Errorf("%s: ES got %d %s requests, want 1", tc.name, got, tc.route)
		}
	}
	calls := f.srv.Calls()
	var got []string
	for _, c := range calls {
		got = append(got, c.Method+" "+c.Path)
	}
	if want := "GET /quit|GET /restart|GET /shutdown"; strings.Join(got, "|") != want {
		t.Errorf("ES got %q, want %s", got, want)
	}
}

// rawES accepts connections on 127.0.0.1 and hands each to serve after
// reading the request head (serve nil: closes at once, before reading).
func rawES(t *testing.T, serve func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				serve(c.(*net.TCPConn))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestPowerWhileESQuits(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	for _, tc := range []struct {
		name  string
		serve func(c *net.TCPConn)
		want  error // nil: counts as sent
		text  string
	}{
		{"closed without an answer (EOF)", func(c *net.TCPConn) {}, nil, ""},
		{"reset without an answer", func(c *net.TCPConn) { c.SetLinger(0) }, nil, ""},
		{"answer cut short", func(c *net.TCPConn) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab"))
			c.SetLinger(0)
		}, nil, ""},
		{"no answer", func(c *net.TCPConn) { <-hang }, ErrUnconfirmed, "sent but EmulationStation did not answer"},
		{"404 (an ES without Batocera's /shutdown)", func(c *net.TCPConn) {
			c.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 13\r\nContent-Type: text/html\r\n\r\n404 not found"))
		}, ErrNotFound, "GET /shutdown"},
		{"403", func(c *net.TCPConn) {
			c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 15\r\n\r\n403 - Forbidden"))
		}, ErrForbidden, "PublicWebAccess"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{URL: rawES(t, tc.serve)})
			if err != nil {
				t.Fatal(err)
			}
			p := NewPowerClient(c)
			p.timeout = 300 * time.Millisecond
			err = p.Shutdown(ctx(t))
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("Shutdown = %v, want nil: the request reached ES", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("Shutdown = %v, want %v", err, tc.want)
			case tc.want != nil && !strings.Contains(err.Error(), tc.text):
				t.Errorf("Shutdown = %q, want it to say %q", err, tc.text)
			}
		})
	}
}

func TestPowerESNotRunning(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	c, err := New(Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	err = NewPowerClient(c).Reboot(ctx(t))
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnconfirmed) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("Reboot with ES down = %v, want ErrUnavailable saying nothing was sent", err)
	}
}

func TestPowerCancelled(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	c, err := New(Config{URL: rawES(t, func(*net.TCPConn) { <-hang })})
	if err != nil {
		t.Fatal(err)
	}
	cx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := NewPowerClient(c).RestartES(cx); !errors.Is(err, context.Canceled) {
		t.Errorf("RestartES cancelled = %v, want context.Canceled", err)
	}
}
