package socket

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Server is the daemon's side of the socket: the framing and the ops,
// with the daemon's handlers plugged in.
type Server struct {
	Path string
	Log  zerolog.Logger
	// Event persists a hook's event; the hook is acked when it returns nil
	// and told the error otherwise (it then records the event itself).
	Event func(key string, ev tracker.Event) error
	// MCP runs one MCP stdio session on conn (nil: refused).
	MCP func(ctx context.Context, conn net.Conn, dryRun bool)
	// Status is the daemon's status, sent as JSON.
	Status func() any
	// Entry answers a Cabinet entry chosen in ES with the text to show
	// (nil: refused).
	Entry func(ctx context.Context, name string) (string, error)
}

// Listen creates the socket (0600: root only, like the store) after
// removing a stale one left by a crash. The caller holds the daemon's
// single-instance lock, so a live daemon's socket is never removed.
func (s *Server) Listen() (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return nil, fmt.Errorf("socket dir: %w", err)
	}
	os.Remove(s.Path)
	ln, err := net.Listen("unix", s.Path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.Path, err)
	}
	os.Chmod(s.Path, 0o600)
	return ln, nil
}

// Serve accepts on ln until ctx ends, then waits for the open connections.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(ctx, conn)
		}()
	}
}

func (s *Server) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	var req Request
	if err := ReadLine(r, &req); err != nil {
		if !errors.Is(err, io.EOF) {
			s.Log.Debug().Err(err).Msg("socket: bad request")
		}
		return
	}
	conn.SetReadDeadline(time.Time{})
	reply := func(rep Reply) {
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		WriteLine(conn, rep)
	}
	switch req.Op {
	case OpEvent:
		rep := Reply{OK: true}
		if req.Event == nil || req.Key == "" {
			rep = Reply{Error: "event request without event or key"}
		} else if err := s.Event(req.Key, *req.Event); err != nil {
			rep = Reply{Error: err.Error()}
		}
		reply(rep)
	case OpStatus:
		b, _ := json.Marshal(s.Status())
		reply(Reply{OK: true, Status: b})
	case OpEntry:
		if s.Entry == nil {
			reply(Reply{Error: "entries are not available in this daemon"})
			return
		}
		text, err := s.Entry(ctx, req.Entry)
		if err != nil {
			reply(Reply{Error: err.Error()})
			return
		}
		reply(Reply{OK: true, Text: text})
	case OpMCP:
		if s.MCP == nil {
			reply(Reply{Error: "MCP is not available in this daemon"})
			return
		}
		if err := WriteLine(conn, Reply{OK: true}); err != nil {
			return
		}
		s.MCP(ctx, &bufferedConn{Conn: conn, r: r}, req.DryRun)
	default:
		reply(Reply{Error: fmt.Sprintf("unknown op %q", clip(req.Op))})
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
