package mqttlink

import (
	"context"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// closeQuiesce is how long Close lets paho send DISCONNECT. Once every
// publish is acknowledged paho returns from Disconnect as soon as the packet
// is written (well under a millisecond on loopback), so this only bounds a
// stuck socket.
const closeQuiesce = 20 * time.Millisecond

// Conn is a short-lived connection: the hook's (client id
// cabinet_<id>_h<pid>, no last will, clean session). It is not for
// long-running use: it never reconnects.
type Conn struct {
	s *session
}

// Dial connects to the broker. Everything, including name resolution, TLS
// and the wait for CONNACK, ends by ctx's deadline (or opts.ConnectTimeout
// when sooner): a broker that accepts TCP and never answers cannot hold the
// caller past it, and a refused connection fails at once. Errors say which
// cabinet.mqtt key to check and never contain the password.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	p, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	budget, deadline := attemptBudget(ctx, p.ConnectTimeout)
	if ctx.Err() != nil || budget <= 0 {
		return nil, connectError(p, context.DeadlineExceeded, 0, budget)
	}
	s := newSession()
	co := p.clientOptions(budget, deadline)
	co.SetConnectionLostHandler(s.onLost)
	s.client = mqtt.NewClient(co)
	if err := connectClient(ctx, p, s.client, budget); err != nil {
		return nil, err
	}
	return &Conn{s: s}, nil
}

// Publish sends msgs in order with their QoS and retain flags, waits for the
// acknowledgements until ctx ends, and returns how many of the first
// messages were acknowledged: the caller marks exactly msgs[:n] delivered.
// A message with an invalid topic stops the batch there with an error.
func (c *Conn) Publish(ctx context.Context, msgs []haentities.Message) (int, error) {
	return c.s.publish(ctx, msgs)
}

// Close sends DISCONNECT and closes the connection, waiting at most a few
// milliseconds and never past ctx's deadline.
func (c *Conn) Close(ctx context.Context) {
	q := closeQuiesce
	if d, ok := ctx.Deadline(); ok {
		q = min(q, time.Until(d))
	}
	if q < time.Millisecond {
		// No time left: let paho finish in the background; an exiting
		// process loses nothing (everything acknowledged is on the broker).
		go c.s.client.Disconnect(0)
		return
	}
	c.s.client.Disconnect(uint(q / time.Millisecond))
}

// Publish is the hook's whole MQTT exchange: Dial, Publish, Close, all within
// ctx. It returns how many of the first messages the broker acknowledged.
func Publish(ctx context.Context, opts Options, msgs []haentities.Message) (delivered int, err error) {
	c, err := Dial(ctx, opts)
	if err != nil {
		return 0, err
	}
	n, err := c.Publish(ctx, msgs)
	c.Close(ctx)
	return n, err
}
