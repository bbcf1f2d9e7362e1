package journal

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// The daemon's unix socket: hooks hand it their events (and wait for the
// ack that the event is persisted), `cabinet mcp` and `cabinet call` speak
// MCP through it, `cabinet doctor` asks its status. One JSON request line,
// one JSON reply line; an "mcp" request turns the connection into an MCP
// stdio stream.

// SocketName is the socket's file name in the run dir (/var/run/cabinet:
// tmpfs, because /userdata may be vfat, which has no sockets).
const SocketName = "cabinet.sock"

// SocketPath is the daemon's socket.
func SocketPath(cfg *config.Config) string { return filepath.Join(cfg.RunDir(), SocketName) }

// Requests.
const (
	OpEvent  = "event"
	OpMCP    = "mcp"
	OpStatus = "status"
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
}

// Reply is the daemon's answer.
type Reply struct {
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
}

// NewKey names an event for the socket and the spool: boot clock first, so
// keys sort in event order within a boot, then the process and a random
// part.
func NewKey(ev tracker.Event) string {
	var r [4]byte
	rand.Read(r[:])
	return fmt.Sprintf("%020d-%d-%s", int64(ev.Boot), os.Getpid(), hex.EncodeToString(r[:]))
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
