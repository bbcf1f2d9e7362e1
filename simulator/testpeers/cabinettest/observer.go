package cabinettest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// markerPrefix starts the topics of the tests' own marker messages, which
// every view leaves out.
const markerPrefix = "e2e/"

// Msg is one message the observer received, and when.
type Msg struct {
	Topic, Payload string
	At             time.Time
}

// Observer sees what the broker carries, like Home Assistant: every
// message in arrival order, and what a new subscriber gets as retained.
//
// On Mosquitto it is a live subscriber on '#'. On the embedded broker it
// reads the broker's own record instead (and its retained store topic by
// topic): mochi v2.7.9 races when a wildcard subscription scans the
// retained messages while a client retains one (TopicsIndex.scanMessages
// reads particle.retainPath unlocked), which the race detector reports in
// the test process. subscribe forces a real subscriber anyway (a
// benchmark's latency is a subscriber's, and it subscribes before anything
// is retained).
type Observer struct {
	t   testing.TB
	b   *Broker
	emb *mqttbroker.Broker // set: read the broker's record

	mu      sync.Mutex
	client  mqtt.Client
	msgs    []Msg
	seen    int           // messages of emb's record already in msgs
	changed chan struct{} // closed and replaced at every message
}

// Observe starts observing b for the rest of t.
func Observe(t testing.TB, b *Broker, subscribe bool) *Observer {
	t.Helper()
	o := &Observer{t: t, b: b, changed: make(chan struct{})}
	if b.emb != nil && !subscribe {
		o.emb = b.emb
		o.seen = len(b.emb.Messages())
		return o
	}
	o.connect()
	t.Cleanup(func() {
		o.mu.Lock()
		c := o.client
		o.mu.Unlock()
		c.Disconnect(0)
	})
	return o
}

// sync takes what the embedded broker recorded since the last look,
// stamped now (the waiters look as soon as the broker records).
func (o *Observer) sync() {
	if o.emb == nil {
		return
	}
	rec := o.emb.Messages()
	now := time.Now()
	for _, m := range rec[min(o.seen, len(rec)):] {
		if !strings.HasPrefix(m.Topic, markerPrefix) {
			o.msgs = append(o.msgs, Msg{Topic: m.Topic, Payload: string(m.Payload), At: now})
		}
	}
	o.seen = len(rec)
}

// connect subscribes a fresh client and returns once the subscription is in
// place (a marker published afterwards came back through it).
func (o *Observer) connect() {
	o.t.Helper()
	c := o.b.Dial(o.t)
	marker := fmt.Sprintf("%smarker/%d", markerPrefix, clientSeq.Add(1))
	seen := make(chan struct{})
	var once sync.Once
	tok := c.Subscribe("#", 1, func(_ mqtt.Client, m mqtt.Message) {
		if m.Topic() == marker {
			once.Do(func() { close(seen) })
		}
		if strings.HasPrefix(m.Topic(), markerPrefix) {
			return
		}
		o.mu.Lock()
		o.msgs = append(o.msgs, Msg{Topic: m.Topic(), Payload: string(m.Payload()), At: time.Now()})
		close(o.changed)
		o.changed = make(chan struct{})
		o.mu.Unlock()
	})
	if !tok.WaitTimeout(Deadline) || tok.Error() != nil {
		o.t.Fatalf("observer subscribe: %v", tok.Error())
	}
	if tok := c.Publish(marker, 1, false, "x"); !tok.WaitTimeout(Deadline) || tok.Error() != nil {
		o.t.Fatalf("observer marker: %v", tok.Error())
	}
	select {
	case <-seen:
	case <-time.After(Deadline):
		o.t.Fatalf("observer: marker %s never came back", marker)
	}
	o.mu.Lock()
	o.client = c
	o.mu.Unlock()
}

// Reconnect drops the subscription and makes a new one (after a broker
// restart); the new one receives the broker's retained messages again.
func (o *Observer) Reconnect() {
	o.t.Helper()
	if o.emb != nil {
		return // the record survives the broker's restarts
	}
	o.mu.Lock()
	c := o.client
	o.mu.Unlock()
	c.Disconnect(0)
	o.connect()
}

// Mark is the position of the next message.
func (o *Observer) Mark() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sync()
	return len(o.msgs)
}

// Since returns the messages received from position i on.
func (o *Observer) Since(i int) []Msg {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sync()
	if i > len(o.msgs) {
		return nil
	}
	return append([]Msg(nil), o.msgs[i:]...)
}

// Changed returns a channel closed at the next message: the wake of
// Await.
func (o *Observer) Changed() <-chan struct{} {
	if o.emb != nil {
		return o.emb.Changed()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// AwaitMsg waits until a message on topic with payload want (any payload
// when want is "") arrives at or after position from, and returns it.
func (o *Observer) AwaitMsg(from int, topic, want string) Msg {
	o.t.Helper()
	var got Msg
	Await(o.t, fmt.Sprintf("%s = %q on the broker", topic, want), o.Changed, o.msgSince(from, topic, want, &got))
	return got
}

func (o *Observer) msgSince(from int, topic, want string, got *Msg) func() (bool, string) {
	return func() (bool, string) {
		last := ""
		for _, m := range o.Since(from) {
			if m.Topic != topic {
				continue
			}
			if want == "" || m.Payload == want {
				*got = m
				return true, ""
			}
			last = m.Payload
		}
		return false, fmt.Sprintf("last payload since the mark %q", last)
	}
}

// AwaitLatest waits until the latest message received on topic has
// payload want: the state a subscriber holds now, whichever message set it.
func (o *Observer) AwaitLatest(topic, want string) {
	o.t.Helper()
	Await(o.t, fmt.Sprintf("%s to be %q on the broker", topic, want), o.Changed, o.latestIs(topic, want))
}

func (o *Observer) latestIs(topic, want string) func() (bool, string) {
	return func() (bool, string) {
		last := ""
		for _, m := range o.Since(0) {
			if m.Topic == topic {
				last = m.Payload
			}
		}
		return last == want, fmt.Sprintf("latest payload %q", last)
	}
}

// Retained is what a subscriber that connects now receives as retained:
// topic → payload.
func (o *Observer) Retained() map[string]string {
	o.t.Helper()
	if o.emb == nil {
		return o.b.Retained(o.t)
	}
	// From the broker's store, not the topics recorded so far: the
	// record of a publish lags its PUBACK, the store does not.
	out := map[string]string{}
	for topic, p := range o.emb.RetainedAll() {
		out[topic] = string(p)
	}
	return out
}

// Retained subscribes a fresh client to '#' and returns what it receives as
// retained: topic → payload. It then publishes a marker on the same
// connection; the broker handles the two in order, so once the marker is
// back every retained message has arrived.
func (b *Broker) Retained(t testing.TB) map[string]string {
	t.Helper()
	c := b.Dial(t)
	defer c.Disconnect(0)
	marker := fmt.Sprintf("%smarker/%d", markerPrefix, clientSeq.Add(1))
	var mu sync.Mutex
	got := map[string]string{}
	done := make(chan struct{})
	var once sync.Once
	tok := c.Subscribe("#", 1, func(_ mqtt.Client, m mqtt.Message) {
		if m.Topic() == marker {
			once.Do(func() { close(done) })
			return
		}
		if !m.Retained() || strings.HasPrefix(m.Topic(), markerPrefix) {
			return
		}
		mu.Lock()
		got[m.Topic()] = string(m.Payload())
		mu.Unlock()
	})
	if !tok.WaitTimeout(Deadline) || tok.Error() != nil {
		t.Fatalf("retained snapshot subscribe: %v", tok.Error())
	}
	if tok := c.Publish(marker, 1, false, "x"); !tok.WaitTimeout(Deadline) || tok.Error() != nil {
		t.Fatalf("retained snapshot marker: %v", tok.Error())
	}
	select {
	case <-done:
	case <-time.After(Deadline):
		t.Fatalf("retained snapshot: marker %s never came back", marker)
	}
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]string, len(got))
	for k, v := range got {
		out[k] = v
	}
	return out
}
