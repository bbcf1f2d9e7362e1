package daemon

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

	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
)

// socketServer answers on the daemon's unix socket: hooks' events (acked
// once persisted), MCP sessions for `cabinet mcp`/`cabinet call`, and the
// status `cabinet doctor` shows.
type socketServer struct {
	path   string
	log    zerolog.Logger
	event  func(key string, req journal.Request) error
	mcp    func(ctx context.Context, conn net.Conn, dryRun bool)
	status func() any
}

// listen creates the socket (0600: root only, like the store) after
// removing a stale one left by a crash. The single-instance lock is taken
// before, so a live daemon's socket is never removed.
func (s *socketServer) listen() (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return nil, fmt.Errorf("socket dir: %w", err)
	}
	os.Remove(s.path)
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.path, err)
	}
	os.Chmod(s.path, 0o600)
	return ln, nil
}

// serve accepts until ctx ends.
func (s *socketServer) serve(ctx context.Context, ln net.Listener) error {
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

func (s *socketServer) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	var req journal.Request
	if err := journal.ReadLine(r, &req); err != nil {
		if !errors.Is(err, io.EOF) {
			s.log.Debug().Err(err).Msg("socket: bad request")
		}
		return
	}
	conn.SetReadDeadline(time.Time{})
	switch req.Op {
	case journal.OpEvent:
		rep := journal.Reply{OK: true}
		if req.Event == nil || req.Key == "" {
			rep = journal.Reply{Error: "event request without event or key"}
		} else if err := s.event(req.Key, req); err != nil {
			rep = journal.Reply{Error: err.Error()}
		}
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		journal.WriteLine(conn, rep)
	case journal.OpStatus:
		b, _ := json.Marshal(s.status())
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		journal.WriteLine(conn, journal.Reply{OK: true, Status: b})
	case journal.OpMCP:
		if s.mcp == nil {
			journal.WriteLine(conn, journal.Reply{Error: "MCP is not available in this daemon"})
			return
		}
		if err := journal.WriteLine(conn, journal.Reply{OK: true}); err != nil {
			return
		}
		s.mcp(ctx, &bufferedConn{Conn: conn, r: r}, req.DryRun)
	default:
		journal.WriteLine(conn, journal.Reply{Error: fmt.Sprintf("unknown op %q", clip(req.Op))})
	}
}

// bufferedConn keeps bytes the request reader already buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
