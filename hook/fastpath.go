package hook

import (
	"bufio"
	"context"
	"errors"
	"net"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
)

// FastPathTimeout is how long a hook waits for the daemon's ack before it
// records the event itself: the daemon answers in about a millisecond plus
// an fsync, so a longer silence means it is starting, stopping or gone.
const FastPathTimeout = 80 * time.Millisecond

// ErrNoDaemon means nothing listens on the socket.
var ErrNoDaemon = errors.New("no daemon on the socket")

// Deliver hands ev to the daemon and returns once the daemon acknowledged
// that it is persisted (committed and fsynced). Any error means the caller
// must record the event itself, under the same key.
func Deliver(ctx context.Context, socket, key string, ev tracker.Event) error {
	ctx, cancel := context.WithTimeout(ctx, FastPathTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return ErrNoDaemon
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if err := journal.WriteLine(conn, journal.Request{Op: journal.OpEvent, Key: key, Event: &ev}); err != nil {
		return err
	}
	var rep journal.Reply
	if err := journal.ReadLine(bufio.NewReader(conn), &rep); err != nil {
		return err
	}
	if !rep.OK {
		return errors.New("daemon refused the event: " + rep.Error)
	}
	return nil
}
