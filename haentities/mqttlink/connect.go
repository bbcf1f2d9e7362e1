package mqttlink

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// Error is a constant error of this package (no work at package init).
type Error string

func (e Error) Error() string { return string(e) }

// ErrNotConnected is returned by Link.Publish while the link is down: the
// caller keeps the messages (the outbox) and sends them after the next connect.
const ErrNotConnected Error = "mqtt: not connected to the broker"

// CredentialsError means the broker refused the user name or password
// (CONNACK return code 4 or 5). It never holds the password.
type CredentialsError struct {
	User string
	Code byte // CONNACK return code
}

func (e *CredentialsError) Error() string {
	if e.User == "" {
		return "broker refused an anonymous connection: set cabinet.mqtt.username/password"
	}
	return fmt.Sprintf("broker refused the credentials for user %q: check cabinet.mqtt.username/password", e.User)
}

// clientOptions builds paho options for one connection attempt. Measured on
// paho v1.5.1: ConnectTimeout does cover the CONNACK wait (paho sets it as a
// deadline on the conn), but with the protocol version left implicit a
// failed handshake (silent broker, refused credentials) is retried on a new
// connection as MQTT 3.1: a second full ConnectTimeout against a silent
// broker (200 ms instead of 100 ms), and Mosquitto answers a refused login
// with an empty client id by "identifier rejected". So the version is pinned
// to 3.1.1, and the dialer gets the attempt's absolute deadline. Auto-
// reconnect and connect-retry are off: their sleeps cannot be cancelled, and
// the Link runs its own loop.
func (p *prepared) clientOptions(timeout time.Duration, deadline time.Time) *mqtt.ClientOptions {
	o := mqtt.NewClientOptions()
	o.AddBroker(p.url.String())
	o.SetClientID(p.ClientID)
	o.SetUsername(p.Username)
	o.SetPassword(p.Password)
	o.SetProtocolVersion(4)
	o.SetCleanSession(true)
	o.SetAutoReconnect(false)
	o.SetConnectRetry(false)
	o.SetResumeSubs(false)
	o.SetKeepAlive(p.KeepAlive)
	o.SetPingTimeout(min(p.KeepAlive, 10*time.Second))
	o.SetConnectTimeout(timeout)
	o.SetWriteTimeout(timeout)
	// The dialer's deadline bounds name resolution, TCP and the TLS handshake.
	o.SetDialer(&net.Dialer{Timeout: timeout, Deadline: deadline})
	o.SetCustomOpenConnectionFn(openConnection)
	o.SetConnectionLostHandler(nil)
	if p.tls != nil {
		o.SetTLSConfig(p.tls.Clone())
	}
	if p.Will != nil {
		o.SetBinaryWill(p.Will.Topic, p.Will.Payload, 1, true)
	}
	return o
}

// attemptBudget is how long one connection attempt may take: the options'
// timeout, cut to the ctx deadline.
func attemptBudget(ctx context.Context, timeout time.Duration) (time.Duration, time.Time) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return time.Until(deadline), deadline
}

// connectClient connects c and returns when CONNACK arrives, the attempt
// fails, or ctx ends, whichever is first. On ctx end the attempt is
// abandoned to a goroutine; paho's own deadline ends it soon after.
func connectClient(ctx context.Context, p *prepared, c mqtt.Client, budget time.Duration) error {
	tok := c.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		go c.Disconnect(0)
		return connectError(p, ctx.Err(), 0, budget)
	}
	var rc byte
	if ct, ok := tok.(*mqtt.ConnectToken); ok {
		rc = ct.ReturnCode()
	}
	if err := tok.Error(); err != nil {
		return connectError(p, err, rc, budget)
	}
	return nil
}

// connectError turns paho's error into one that says what to do, without
// the password.
func connectError(p *prepared, err error, rc byte, budget time.Duration) error {
	prefix := "mqtt connect " + p.display
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ce *x509.CertificateInvalidError
	switch {
	case rc == 4 || rc == 5:
		return fmt.Errorf("%s: %w", prefix, &CredentialsError{User: p.Username, Code: rc})
	case rc == 2:
		return fmt.Errorf("%s: broker rejected client id %q: set cabinet.mqtt.client_id", prefix, p.ClientID)
	case rc == 3:
		return fmt.Errorf("%s: broker says it is unavailable: check the broker", prefix)
	case rc == 1:
		return fmt.Errorf("%s: broker does not speak MQTT 3.1.1", prefix)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: connection refused: check cabinet.mqtt.broker and that the broker is running: %w", prefix, syscall.ECONNREFUSED)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return fmt.Errorf("%s: no answer within %s: check cabinet.mqtt.broker and the network: %w",
			prefix, budget.Round(time.Millisecond), context.DeadlineExceeded)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", prefix, context.Canceled)
	case errors.As(err, &ue), errors.As(err, &he), errors.As(err, &ce):
		return fmt.Errorf("%s: broker certificate not trusted: set cabinet.mqtt.ca_file to the CA that signed it (PEM): %w", prefix, err)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
