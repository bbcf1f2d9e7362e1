package main

import (
	"context"
	"errors"
	"io"
	"log"
	"net"

	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/links"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/hook/socket"
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
		conn, err := socket.DialMCP(ctx, l.Config.Layout().Socket(), false)
		if err == nil {
			return bridge(ctx, conn, c.env.Stdin, c.env.Stdout)
		}
	}
	srv, err := localTools(&l.Config, false)
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

// localTools builds the tools in this process, with the play history read
// from the store (opened briefly for each query: a hook may need it next).
func localTools(cfg *config.Config, dryRun bool) (*tools.Server, error) {
	l, err := links.Build(toolsSettings(cfg), daemon.StoreInstalls{Path: cfg.Layout().Store()}, nil)
	if err != nil {
		return nil, err
	}
	return l.Tools(buildVersion(), dryRun, tools.Deps{History: daemon.StoreHistory{Path: cfg.Layout().Store()},
		Requests: daemon.StoreRequests{Path: cfg.Layout().Store()}})
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
