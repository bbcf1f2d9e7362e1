package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
)

type mcpCommand struct{ env *env }

func (c *mcpCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "mcp", "", `Serve MCP over stdio, for a local or SSH-launched client:
  ssh root@batocera.local /userdata/system/cabinet/bin/cabinet mcp
While the daemon runs, the session goes through it (one owner for rate limits, play
history and the store); otherwise the tools run in this process. Logs go to stderr.`, &sets)
	standalone := fs.Bool("standalone", false, "do not use the daemon even if it runs")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	if !*standalone {
		conn, err := dialDaemonMCP(ctx, journal.SocketPath(&l.Config), false)
		if err == nil {
			return bridge(ctx, conn, c.env.Stdin, c.env.Stdout)
		}
	}
	srv, err := tools.FromConfig(&l.Config, buildVersion(), false, tools.Deps{History: daemon.StoreHistory{Path: journal.StorePath(&l.Config)}})
	if err != nil {
		return err
	}
	stdio := server.NewStdioServer(srv.MCP())
	stdio.SetErrorLogger(log.New(c.env.Stderr, "cabinet mcp: ", 0))
	if err := stdio.Listen(ctx, c.env.Stdin, c.env.Stdout); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// dialDaemonMCP opens an MCP session through the daemon's socket.
func dialDaemonMCP(ctx context.Context, socket string, dryRun bool) (net.Conn, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	conn, err := d.DialContext(dctx, "unix", socket)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if err := journal.WriteLine(conn, journal.Request{Op: journal.OpMCP, DryRun: dryRun}); err != nil {
		conn.Close()
		return nil, err
	}
	r := bufio.NewReader(conn)
	var rep journal.Reply
	if err := journal.ReadLine(r, &rep); err != nil {
		conn.Close()
		return nil, err
	}
	if !rep.OK {
		conn.Close()
		return nil, fmt.Errorf("daemon: %s", rep.Error)
	}
	conn.SetDeadline(time.Time{})
	return &readerConn{Conn: conn, r: r}, nil
}

type readerConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the socket: the daemon sees the end of the
// session's input and still sends its last answers.
func (c *readerConn) CloseWrite() error {
	if uc, ok := c.Conn.(*net.UnixConn); ok {
		return uc.CloseWrite()
	}
	return nil
}

// bridge copies stdio to and from the daemon. When the client closes its
// input, the daemon still answers what it was sent before the session ends.
func bridge(ctx context.Context, conn net.Conn, in io.Reader, out io.Writer) error {
	defer conn.Close()
	go func() {
		io.Copy(conn, in)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	done := make(chan error, 1)
	go func() { _, err := io.Copy(out, conn); done <- err }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-done:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	}
}
