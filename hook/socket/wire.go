// Package socket is the daemon's unix socket protocol, every side of it:
// the wire (one JSON request line, one JSON reply line), the hook's
// client (an event handed over and acked once persisted), the client of
// `cabinet mcp`, `cabinet call` and `cabinet doctor` (an MCP session, the
// daemon's status), and the server's framing, which the daemon fills with
// its handlers. An "mcp" request turns the connection into an MCP stdio
// stream.
package socket

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Requests.
const (
	OpEvent  = "event"
	OpMCP    = "mcp"
	OpStatus = "status"
	OpEntry  = "entry"
)

// maxLine bounds one request or reply line.
const maxLine = 256 << 10

// Request is what a client sends first.
type Request struct {
	Op string `json:"op"`
	// Key identifies an event across the socket and the spool, so an event
	// that reached the daemon and was also spooled (the ack came too late)
	// is applied once.
	Key   string         `json:"key,omitempty"`
	Event *tracker.Event `json:"event,omitempty"`
	// DryRun asks for a dry-run MCP session (cabinet call --dry-run).
	DryRun bool `json:"dry_run,omitempty"`
	// Entry is the Cabinet entry chosen in ES (`cabinet entry`): its name,
	// "ask-15", "time-left".
	Entry string `json:"entry,omitempty"`
}

// Reply is the daemon's answer.
type Reply struct {
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
	// Text is the answer to an entry, for the screen.
	Text string `json:"text,omitempty"`
}

// WriteLine sends one JSON line.
func WriteLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadLine reads one bounded JSON line into v.
func ReadLine(r *bufio.Reader, v any) error {
	var line []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return err
		}
		line = append(line, chunk...)
		if len(line) > maxLine {
			return errors.New("line too long")
		}
		if !isPrefix {
			break
		}
	}
	return json.Unmarshal(line, v)
}

// bufferedConn is a connection whose first line was read through r: the
// bytes r already buffered belong to the stream that follows.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes a unix socket: the peer sees the end of the input
// and still sends its last answers.
func (c *bufferedConn) CloseWrite() error {
	if uc, ok := c.Conn.(*net.UnixConn); ok {
		return uc.CloseWrite()
	}
	return nil
}
