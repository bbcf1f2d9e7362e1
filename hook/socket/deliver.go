package socket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// FastPathTimeout is how long a hook waits for the daemon's ack before it
// records the event itself: the daemon answers in about a millisecond plus
// an fsync, so a longer silence means it is starting, stopping or gone.
const FastPathTimeout = 80 * time.Millisecond

// maxReply bounds the daemon's answer.
const maxReply = 4 << 10

// ErrNoDaemon means nothing listens on the socket.
var ErrNoDaemon = errors.New("no daemon on the socket")

// Deliver hands ev to the daemon and returns once the daemon acknowledged
// that it is persisted (fsynced). Any error means the caller must record
// the event itself, under the same key.
//
// It speaks to the socket with plain blocking system calls and kernel
// timeouts rather than package net: the hook is a fresh process each time,
// and net's poller (an epoll instance, an eventfd, a thread to wait on
// them) costs more to set up than the whole exchange.
func Deliver(ctx context.Context, socket, key string, ev tracker.Event) error {
	return deliver(ctx, socket, key, ev, FastPathTimeout)
}

// deliver is Deliver within budget (FastPathTimeout, but for the tests of
// what is not the timeout).
func deliver(ctx context.Context, socket, key string, ev tracker.Event, budget time.Duration) error {
	deadline := time.Now().Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	// UTC: a time in the Local zone would load the zone database to encode.
	ev.At = ev.At.UTC()
	req, err := json.Marshal(Request{Op: OpEvent, Key: key, Event: &ev})
	if err != nil {
		return fmt.Errorf("encode the event: %w", err)
	}
	req = append(req, '\n')
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return ErrNoDaemon
	}
	defer unix.Close(fd)
	connect := func() error {
		err := unix.Connect(fd, &unix.SockaddrUnix{Name: socket})
		if errors.Is(err, unix.EISCONN) { // an interrupted attempt went through
			return nil
		}
		return err
	}
	if err := call(fd, unix.SO_SNDTIMEO, deadline, connect); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ECONNREFUSED) {
			return ErrNoDaemon
		}
		return fmt.Errorf("connect to the daemon: %w", err)
	}
	for len(req) > 0 {
		var n int
		err := call(fd, unix.SO_SNDTIMEO, deadline, func() (err error) { n, err = unix.Write(fd, req); return err })
		if err != nil {
			return fmt.Errorf("send the event: %w", err)
		}
		req = req[n:]
	}
	var buf []byte
	chunk := make([]byte, 512)
	for !bytes.Contains(buf, []byte{'\n'}) {
		if len(buf) > maxReply {
			return errors.New("the daemon's reply is too long")
		}
		var n int
		err := call(fd, unix.SO_RCVTIMEO, deadline, func() (err error) { n, err = unix.Read(fd, chunk); return err })
		if err != nil {
			return fmt.Errorf("read the daemon's ack: %w", err)
		}
		if n == 0 {
			return errors.New("the daemon closed the connection without an ack")
		}
		buf = append(buf, chunk[:n]...)
	}
	var rep Reply
	if err := json.Unmarshal(buf[:bytes.IndexByte(buf, '\n')], &rep); err != nil {
		return fmt.Errorf("the daemon's ack: %w", err)
	}
	if !rep.OK {
		return errors.New("daemon refused the event: " + rep.Error)
	}
	return nil
}

// call runs one blocking socket call that gives up at deadline: the
// kernel's timeout opt (SO_SNDTIMEO for connect and write, SO_RCVTIMEO for
// read) is armed with what is left before each attempt, and
// the call is made again when a signal interrupted it (the Go runtime
// preempts with signals, and the kernel never restarts a socket call that
// has a timeout). A kernel timeout is reported as the deadline it is.
func call(fd, opt int, deadline time.Time, sys func() error) error {
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return context.DeadlineExceeded
		}
		tv := unix.NsecToTimeval(left.Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, opt, &tv); err != nil {
			return fmt.Errorf("socket timeout: %w", err)
		}
		err := sys()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINPROGRESS):
			return fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
		default:
			return err
		}
	}
}
