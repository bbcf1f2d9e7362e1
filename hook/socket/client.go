package socket

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// dialTimeout bounds the connect: a daemon that does not accept at once is
// starting, stopping or gone, and the caller then works without it.
const dialTimeout = 200 * time.Millisecond

// DialMCP opens an MCP session through the daemon's socket at path (dryRun:
// a dry-run session). The connection is the MCP stdio stream; its
// CloseWrite ends the session's input while the daemon's last answers
// still arrive.
func DialMCP(ctx context.Context, path string, dryRun bool) (net.Conn, error) {
	conn, r, _, err := ask(ctx, path, Request{Op: OpMCP, DryRun: dryRun}, 2*time.Second)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	return &bufferedConn{Conn: conn, r: r}, nil
}

// ErrNotRunning means nothing accepts on the socket: no daemon runs.
var ErrNotRunning = errors.New("cabinet serve is not running")

// Status asks the daemon at path for its status and decodes it into v,
// within ctx's deadline or else five seconds. A daemon that is not there
// is ErrNotRunning; one that does not answer properly is another error.
func Status(ctx context.Context, path string, v any) error {
	conn, _, rep, err := ask(ctx, path, Request{Op: OpStatus}, 5*time.Second)
	if err != nil {
		return err
	}
	conn.Close()
	if err := json.Unmarshal(rep.Status, v); err != nil {
		return fmt.Errorf("daemon status: %w", err)
	}
	return nil
}

// Entry asks the daemon at path to answer the Cabinet entry name, within
// ctx's deadline or else five seconds; the answer is the text to show.
func Entry(ctx context.Context, path, name string) (string, error) {
	conn, _, rep, err := ask(ctx, path, Request{Op: OpEntry, Entry: name}, 5*time.Second)
	if err != nil {
		return "", err
	}
	conn.Close()
	return rep.Text, nil
}

// ask connects, sends req and reads the daemon's reply line, all within
// ctx's deadline or else limit. A reply that is not OK is an error.
func ask(ctx context.Context, path string, req Request, limit time.Duration) (net.Conn, *bufio.Reader, Reply, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	conn, err := d.DialContext(dctx, "unix", path)
	cancel()
	if err != nil {
		return nil, nil, Reply{}, fmt.Errorf("%w: %v", ErrNotRunning, err)
	}
	deadline := time.Now().Add(limit)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	r := bufio.NewReader(conn)
	var rep Reply
	if err := WriteLine(conn, req); err == nil {
		err = ReadLine(r, &rep)
	}
	if err == nil && !rep.OK {
		err = fmt.Errorf("daemon: %s", rep.Error)
	}
	if err != nil {
		conn.Close()
		return nil, nil, Reply{}, err
	}
	return conn, r, rep, nil
}
