package retroarch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// Defaults for New.
const (
	// DefaultAddr is RetroArch's command port on the cabinet itself.
	DefaultAddr = "127.0.0.1:55355"
	// DefaultTimeout is how long a query waits for its reply when the context
	// has no deadline. RetroArch answers from its main loop, once per frame.
	DefaultTimeout = 400 * time.Millisecond
	// DefaultQuitInterval separates the two QUITs of Client.Quit: on stock
	// 1.14 (quit_press_twice on) two QUITs about 0.2 s apart close the game.
	DefaultQuitInterval = 200 * time.Millisecond
	// DefaultRefusalWait is how long a hotkey send waits for the port to be
	// refused. Hotkeys never reply, so a refusal is the only evidence that
	// nothing received them; on loopback it arrives at once.
	DefaultRefusalWait = 25 * time.Millisecond
	// maxReply bounds a reply read. RetroArch's largest replies (memory
	// reads, never sent by this package) are the only ones near it.
	maxReply = 64 * 1024
)

// Client talks to one RetroArch. Every call uses its own UDP socket, so a
// Client is safe for concurrent use and replies never cross between calls.
type Client struct {
	addr         string
	timeout      time.Duration
	quitInterval time.Duration
	refusalWait  time.Duration
}

// Option changes a Client built by New.
type Option func(*Client)

// WithTimeout sets how long a query waits for its reply when its context has
// no deadline (default DefaultTimeout). A context deadline, shorter or longer,
// always wins.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithQuitInterval sets the pause between Quit's two QUITs.
func WithQuitInterval(d time.Duration) Option { return func(c *Client) { c.quitInterval = d } }

// New returns a client for the RetroArch at addr ("host:port"; "" means
// DefaultAddr). Nothing is dialled until a call.
func New(addr string, opts ...Option) *Client {
	if addr == "" {
		addr = DefaultAddr
	}
	c := &Client{addr: addr, timeout: DefaultTimeout, quitInterval: DefaultQuitInterval, refusalWait: DefaultRefusalWait}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Addr returns the address the client sends to.
func (c *Client) Addr() string { return c.addr }

// request sends wire in one datagram and returns the first reply accepted by
// accept. Datagrams accept refuses (stale replies) are skipped until the
// deadline: the context's, or now+timeout without one.
func (c *Client) request(ctx context.Context, wire string, accept func([]byte) bool) ([]byte, error) {
	name := commandName(wire)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("retroarch %s: %w", name, err)
	}
	conn, err := c.dial(ctx, name)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.timeout)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, fmt.Errorf("retroarch %s: %w", name, err)
	}
	// Cancellation wakes the blocked read; the deadline then reports it.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write([]byte(wire)); err != nil {
		return nil, c.ioError(ctx, name, err)
	}
	buf := make([]byte, maxReply)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return nil, c.ioError(ctx, name, err)
		}
		if accept(buf[:n]) {
			return append([]byte(nil), buf[:n]...), nil
		}
	}
}

// send sends wire in one datagram and, since nothing replies, waits up to the
// refusal wait (bounded by ctx) for the port to be refused.
func (c *Client) send(ctx context.Context, wire string) error {
	name := commandName(wire)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("retroarch %s: %w", name, err)
	}
	conn, err := c.dial(ctx, name)
	if err != nil {
		return err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetWriteDeadline(d)
	}
	if _, err := conn.Write([]byte(wire)); err != nil {
		return c.ioError(ctx, name, err)
	}
	if c.refusalWait <= 0 {
		return nil
	}
	deadline := time.Now().Add(c.refusalWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetReadDeadline(deadline)
	var buf [64]byte
	for {
		_, err := conn.Read(buf[:])
		switch {
		case err == nil:
			continue // a stray datagram; hotkeys have no reply to wait for
		case errors.Is(err, syscall.ECONNREFUSED):
			return &NotAnsweringError{Addr: c.addr, Command: name, Refused: true}
		default:
			return nil // deadline: sent and not refused
		}
	}
}

func (c *Client) dial(ctx context.Context, name string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", c.addr)
	if err != nil {
		return nil, fmt.Errorf("retroarch %s: %w", name, err)
	}
	return conn, nil
}

// ioError maps socket errors: refusal and silence become *NotAnsweringError,
// cancellation stays a context error.
func (c *Client) ioError(ctx context.Context, name string, err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &NotAnsweringError{Addr: c.addr, Command: name, Refused: true}
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("retroarch %s: %w", name, ctx.Err())
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &NotAnsweringError{Addr: c.addr, Command: name}
	}
	return fmt.Errorf("retroarch %s: %w", name, err)
}

// commandName is the command word of a wire string, for errors.
func commandName(wire string) string {
	name, _, _ := strings.Cut(wire, " ")
	return name
}
