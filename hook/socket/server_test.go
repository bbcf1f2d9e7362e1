package socket

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// serve runs srv on a socket in a temporary dir until the test ends.
func serve(t *testing.T, srv *Server) string {
	t.Helper()
	srv.Path = filepath.Join(t.TempDir(), "cabinet.sock")
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Path
}

// exchange sends one raw request line and returns the reply line.
func exchange(t *testing.T, path, line string) string {
	t.Helper()
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(cabinettest.Deadline))
	io.WriteString(conn, line+"\n")
	rep, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("reply to %s: %v", line, err)
	}
	return strings.TrimSpace(rep)
}

func TestServerOps(t *testing.T) {
	var got []string
	srv := &Server{Log: zerolog.Nop(),
		Event: func(key string, ev tracker.Event) error {
			if ev.Kind == tracker.KindSleep {
				return errors.New("disk full")
			}
			got = append(got, key+"="+string(ev.Kind))
			return nil
		},
		Status: func() any { return map[string]int{"pid": 7} }}
	path := serve(t, srv)
	tests := []struct{ request, reply string }{
		{`{"op":"event","key":"k1","event":{"k":"wake","at":"2026-11-30T20:00:00Z","src":"es"}}`, `{"ok":true}`},
		{`{"op":"event","key":"k2","event":{"k":"sleep","at":"2026-11-30T20:00:00Z","src":"es"}}`, `{"ok":false,"error":"disk full"}`},
		{`{"op":"event","event":{"k":"wake","at":"2026-11-30T20:00:00Z","src":"es"}}`, `{"ok":false,"error":"event request without event or key"}`},
		{`{"op":"event","key":"k3"}`, `{"ok":false,"error":"event request without event or key"}`},
		{`{"op":"status"}`, `{"ok":true,"status":{"pid":7}}`},
		{`{"op":"mcp"}`, `{"ok":false,"error":"MCP is not available in this daemon"}`},
		{`{"op":"` + strings.Repeat("x", 60) + `"}`, `{"ok":false,"error":"unknown op \"` + strings.Repeat("x", 40) + `…\""}`},
	}
	for _, tt := range tests {
		if rep := exchange(t, path, tt.request); rep != tt.reply {
			t.Errorf("%.50s…: reply %s, want %s", tt.request, rep, tt.reply)
		}
	}
	if strings.Join(got, ",") != "k1=wake" {
		t.Errorf("events handed to the daemon: %v", got)
	}
	var st struct{ PID int }
	if err := Status(context.Background(), path, &st); err != nil || st.PID != 7 {
		t.Errorf("Status = %+v, %v", st, err)
	}
	if err := Status(context.Background(), filepath.Join(t.TempDir(), "none.sock"), &st); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Status without a daemon: %v, want ErrNotRunning", err)
	}
}

// An MCP session starts right after the request line; bytes the client
// sent with it, already buffered by the server, belong to the session, and
// the client's half-close ends its input while answers still arrive.
func TestMCPSession(t *testing.T) {
	srv := &Server{Log: zerolog.Nop(), MCP: func(ctx context.Context, conn net.Conn, dryRun bool) {
		sc := bufio.NewScanner(conn)
		for sc.Scan() {
			io.WriteString(conn, strings.ToUpper(sc.Text())+map[bool]string{true: " dry", false: ""}[dryRun]+"\n")
		}
		io.WriteString(conn, "bye\n")
	}}
	path := serve(t, srv)
	conn, err := DialMCP(context.Background(), path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "hello\nworld\n")
	conn.(interface{ CloseWrite() error }).CloseWrite()
	out, err := io.ReadAll(conn)
	if err != nil || string(out) != "HELLO dry\nWORLD dry\nbye\n" {
		t.Errorf("session = %q, %v", out, err)
	}
	// Bytes sent in the same write as the request line reach the session.
	raw, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	io.WriteString(raw, `{"op":"mcp"}`+"\nsame write\n")
	raw.(*net.UnixConn).CloseWrite()
	out, _ = io.ReadAll(raw)
	if string(out) != `{"ok":true}`+"\nSAME WRITE\nbye\n" {
		t.Errorf("buffered bytes lost: %q", out)
	}
}

// Whatever a client sends first, the server answers with one JSON line or
// closes, and hands the daemon only events that have a key.
func FuzzServerRequest(f *testing.F) {
	f.Add([]byte(`{"op":"event","key":"k","event":{"k":"wake","at":"2026-11-30T20:00:00Z","src":"es"}}`))
	f.Add([]byte(`{"op":"status"}`))
	f.Add([]byte(`{"op":"mcp","dry_run":true}`))
	f.Add([]byte("\x00\xff{\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		srv := &Server{Log: zerolog.Nop(),
			Event: func(key string, ev tracker.Event) error {
				if key == "" {
					t.Fatal("an event without a key reached the daemon")
				}
				return nil
			},
			Status: func() any { return "ok" }}
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { srv.handle(context.Background(), server); close(done) }()
		client.SetDeadline(time.Now().Add(cabinettest.Deadline))
		go func() { client.Write(append(line, '\n')); client.Write([]byte{'\n'}) }()
		rep, err := bufio.NewReader(client).ReadString('\n')
		if err == nil && !strings.HasPrefix(rep, `{"ok":`) {
			t.Fatalf("reply %q is not a reply line", rep)
		}
		client.Close()
		<-done
	})
}
