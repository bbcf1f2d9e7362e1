// Package mqttbroker is an embedded MQTT broker (mochi-mqtt) on loopback for
// tests and `cabinet demo`: optional user/password authentication, a record
// of every message published through it (retain flag kept, like
// `mosquitto_sub --retain-as-published`), and stop/start on the same port to
// play a broker restart. Unlike Mosquitto it refuses subscriptions to $SYS
// and publishes a will at once (no MQTT 5 will delay): both keep mochi's
// retained store still while a subscriber reads it (retaingate.go).
package mqttbroker

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Options configure the broker. The zero value listens on 127.0.0.1:0 and
// lets anybody in.
type Options struct {
	Addr  string            // default 127.0.0.1:0
	Users map[string]string // user → password; empty: anonymous allowed
}

// Message is one publish the broker received.
type Message struct {
	Topic    string
	Payload  []byte
	Retain   bool
	QoS      byte
	ClientID string
}

// Broker is a running embedded broker.
type Broker struct {
	opts Options
	addr string

	mu      sync.Mutex
	srv     *mqtt.Server
	gate    *retainGate
	ln      *trackingListener
	msgs    []Message
	waiters []chan struct{}
}

// Start starts a broker.
func Start(opts Options) (*Broker, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	b := &Broker{opts: opts, addr: opts.Addr}
	if err := b.start(); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Broker) start() error {
	// Bind ourselves first so port 0 is resolved and kept across restarts.
	// On a restart the port may be held for a moment by another process's
	// outgoing connection that drew it as its ephemeral source port: retry.
	ln, err := net.Listen("tcp", b.addr)
	for try := 0; err != nil && errors.Is(err, syscall.EADDRINUSE) && try < 30; try++ {
		time.Sleep(100 * time.Millisecond)
		ln, err = net.Listen("tcp", b.addr)
	}
	if err != nil {
		return fmt.Errorf("embedded broker: listen %s: %w", b.addr, err)
	}
	b.addr = ln.Addr().String()
	srv := mqtt.New(&mqtt.Options{InlineClient: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := srv.AddHook(&authHook{users: b.opts.Users}, nil); err != nil {
		ln.Close()
		return err
	}
	if err := srv.AddHook(&recordHook{b: b}, nil); err != nil {
		ln.Close()
		return err
	}
	gate := newRetainGate()
	if err := srv.AddHook(gate, nil); err != nil { // last: see retainGate
		ln.Close()
		return err
	}
	tl := &trackingListener{Listener: ln, conns: map[net.Conn]struct{}{}}
	if err := srv.AddListener(listeners.NewNet("tcp", tl)); err != nil {
		ln.Close()
		return err
	}
	if err := srv.Serve(); err != nil {
		ln.Close()
		return fmt.Errorf("embedded broker: %w", err)
	}
	b.mu.Lock()
	b.srv, b.gate, b.ln = srv, gate, tl
	b.mu.Unlock()
	return nil
}

// Addr is host:port.
func (b *Broker) Addr() string { return b.addr }

// URL is tcp://host:port, the form cabinet.mqtt.broker takes.
func (b *Broker) URL() string { return "tcp://" + b.addr }

// Close stops the broker; connected clients are dropped (their wills fire).
//
// mochi v2.7.9 disconnects its clients before it closes its listener and
// then waits, unbounded, for all of them: a client that reconnects in that
// gap hangs Close for ever. So the listener is closed first and every
// accepted connection cut, and mochi's Close is given a bounded time.
func (b *Broker) Close() error {
	b.mu.Lock()
	srv, tl := b.srv, b.ln
	b.srv, b.gate, b.ln = nil, nil, nil
	b.mu.Unlock()
	if srv == nil {
		return nil
	}
	tl.closeAll()
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		return errors.New("embedded broker: close did not finish in 5s (mochi still waiting for clients)")
	}
}

// trackingListener remembers accepted connections so Close can cut them.
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns[c] = struct{}{}
	return &trackedConn{Conn: c, l: l}, nil
}

func (l *trackingListener) closeAll() {
	l.mu.Lock()
	l.closed = true
	conns := l.conns
	l.conns = map[net.Conn]struct{}{}
	l.mu.Unlock()
	l.Listener.Close()
	for c := range conns {
		c.Close()
	}
}

type trackedConn struct {
	net.Conn
	l *trackingListener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c.Conn)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// Restart stops the broker and starts a fresh one on the same address (no
// persistence: retained messages are gone, as with a Mosquitto without a
// persistence file).
func (b *Broker) Restart() error {
	if err := b.Close(); err != nil {
		return err
	}
	return b.start()
}

// Publish sends a message from the broker itself (plays Home Assistant's
// birth message or a command).
func (b *Broker) Publish(topic string, payload []byte, retain bool) error {
	b.mu.Lock()
	srv := b.srv
	b.mu.Unlock()
	if srv == nil {
		return errors.New("embedded broker: not running")
	}
	return srv.Publish(topic, payload, retain, 1)
}

// Messages returns everything published so far.
func (b *Broker) Messages() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.msgs...)
}

// Reset forgets the recorded messages.
func (b *Broker) Reset() {
	b.mu.Lock()
	b.msgs = nil
	b.mu.Unlock()
}

// Changed returns a channel closed at the next recorded message, so tests
// wait on a condition instead of sleeping.
func (b *Broker) Changed() <-chan struct{} {
	ch := make(chan struct{})
	b.mu.Lock()
	b.waiters = append(b.waiters, ch)
	b.mu.Unlock()
	return ch
}

// Retained returns the broker's current retained payload for topic.
func (b *Broker) Retained(topic string) ([]byte, bool) {
	b.mu.Lock()
	srv, gate := b.srv, b.gate
	b.mu.Unlock()
	if srv == nil {
		return nil, false
	}
	var payload []byte
	var found bool
	gate.read(func() {
		for _, pk := range srv.Topics.Messages(topic) {
			if pk.TopicName == topic {
				payload, found = pk.Payload, true
				return
			}
		}
	})
	return payload, found
}

// RetainedAll returns every retained message the broker holds: topic →
// payload. It is read from the broker's store, which a publish reaches
// before its PUBACK leaves, so it is never behind what a client was
// acknowledged.
func (b *Broker) RetainedAll() map[string][]byte {
	b.mu.Lock()
	srv, gate := b.srv, b.gate
	b.mu.Unlock()
	out := map[string][]byte{}
	if srv == nil {
		return out
	}
	gate.read(func() {
		for _, pk := range srv.Topics.Retained.GetAll() {
			if len(pk.Payload) > 0 {
				out[pk.TopicName] = append([]byte(nil), pk.Payload...)
			}
		}
	})
	return out
}

// Capture renders the recorded messages as `mosquitto_sub -V 5
// --retain-as-published -F '%r %t %p'` lines: "RETAIN TOPIC PAYLOAD".
func (b *Broker) Capture() []byte {
	var buf bytes.Buffer
	for _, m := range b.Messages() {
		r := 0
		if m.Retain {
			r = 1
		}
		fmt.Fprintf(&buf, "%d %s %s\n", r, m.Topic, m.Payload)
	}
	return buf.Bytes()
}

// record keeps m; wake tells the waiters. A client's publish is recorded
// before its PUBACK leaves, so the record is never behind what a client was
// acknowledged: a plain one when it arrives (OnPublish), a retained one (or
// a retained will) once it is in the store (OnRetainMessage), so that what
// the record shows a fresh subscriber gets too. It is announced once it is
// sent on (OnPublished, OnWillSent).
func (b *Broker) record(m Message) {
	b.mu.Lock()
	b.msgs = append(b.msgs, m)
	b.mu.Unlock()
}

func (b *Broker) wake() {
	b.mu.Lock()
	ws := b.waiters
	b.waiters = nil
	b.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

type authHook struct {
	mqtt.HookBase
	users map[string]string
}

func (h *authHook) ID() string { return "cabinet-auth" }
func (h *authHook) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}
func (h *authHook) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool {
	if len(h.users) == 0 {
		return true
	}
	want, ok := h.users[string(pk.Connect.Username)]
	return ok && pk.Connect.PasswordFlag && want == string(pk.Connect.Password)
}

// OnACLCheck lets every client publish and subscribe anywhere but to $SYS:
// mochi rewrites its $SYS topics with no hook to hold its retained store
// still (see retainGate), so nobody may read them.
func (h *authHook) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	return write || !strings.HasPrefix(topic, mqtt.SysPrefix)
}

type recordHook struct {
	mqtt.HookBase
	b *Broker
}

func (h *recordHook) ID() string { return "cabinet-record" }
func (h *recordHook) Provides(b byte) bool {
	switch b {
	case mqtt.OnPublish, mqtt.OnRetainMessage, mqtt.OnPublished, mqtt.OnWillSent:
		return true
	}
	return false
}

func message(cl *mqtt.Client, pk packets.Packet) Message {
	return Message{Topic: pk.TopicName, Payload: append([]byte(nil), pk.Payload...),
		Retain: pk.FixedHeader.Retain, QoS: pk.FixedHeader.Qos, ClientID: cl.ID}
}

func (h *recordHook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if !pk.FixedHeader.Retain {
		h.b.record(message(cl, pk))
	}
	return pk, nil
}

// OnRetainMessage records a retained publish or will, now in the store.
func (h *recordHook) OnRetainMessage(cl *mqtt.Client, pk packets.Packet, r int64) {
	h.b.record(message(cl, pk))
}

func (h *recordHook) OnPublished(cl *mqtt.Client, pk packets.Packet) { h.b.wake() }

// OnWillSent records a last will the broker published for a lost client
// (no OnPublish precedes it; a retained one was recorded as it was stored).
func (h *recordHook) OnWillSent(cl *mqtt.Client, pk packets.Packet) {
	if !pk.FixedHeader.Retain {
		h.b.record(message(cl, pk))
	}
	h.b.wake()
}
