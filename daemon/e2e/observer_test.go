package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// msg is one message the observer received, and when.
type msg struct {
	Topic, Payload string
	At             time.Time
}

// observer sees what the broker carries, like Home Assistant: every
// message in arrival order, and what a new subscriber gets as retained.
//
// On Mosquitto it is a live subscriber on '#'. On the embedded broker it
// reads the broker's own record instead (and its retained store topic by
// topic): mochi v2.7.9 races when a wildcard subscription scans the
// retained messages while a client retains one (TopicsIndex.scanMessages
// reads particle.retainPath unlocked), which the race detector reports in
// the test process. subscribe forces a real subscriber anyway (the
// benchmark's latency is a subscriber's, and it subscribes before anything
// is retained).
type observer struct {
	t   testing.TB
	url string
	emb *mqttbroker.Broker // set: read the broker's record

	mu      sync.Mutex
	client  mqtt.Client
	msgs    []msg
	seen    int           // messages of emb's record already in msgs
	changed chan struct{} // closed and replaced at every message
}

func observe(t testing.TB, b *testBroker, subscribe bool) *observer {
	t.Helper()
	o := &observer{t: t, url: b.URL(), changed: make(chan struct{})}
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
func (o *observer) sync() {
	if o.emb == nil {
		return
	}
	rec := o.emb.Messages()
	now := time.Now()
	for _, m := range rec[min(o.seen, len(rec)):] {
		if !strings.HasPrefix(m.Topic, "e2e/") {
			o.msgs = append(o.msgs, msg{Topic: m.Topic, Payload: string(m.Payload), At: now})
		}
	}
	o.seen = len(rec)
}

// connect subscribes a fresh client and returns once the subscription is in
// place (a marker published afterwards came back through it).
func (o *observer) connect() {
	o.t.Helper()
	c := dial(o.t, o.url)
	marker := fmt.Sprintf("e2e/marker/%d", clientSeq.Add(1))
	seen := make(chan struct{})
	var once sync.Once
	tok := c.Subscribe("#", 1, func(_ mqtt.Client, m mqtt.Message) {
		if m.Topic() == marker {
			once.Do(func() { close(seen) })
		}
		if strings.HasPrefix(m.Topic(), "e2e/") {
			return
		}
		o.mu.Lock()
		o.msgs = append(o.msgs, msg{Topic: m.Topic(), Payload: string(m.Payload()), At: time.Now()})
		close(o.changed)
		o.changed = make(chan struct{})
		o.mu.Unlock()
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		o.t.Fatalf("observer subscribe: %v", tok.Error())
	}
	if tok := c.Publish(marker, 1, false, "x"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		o.t.Fatalf("observer marker: %v", tok.Error())
	}
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		o.t.Fatalf("observer: marker %s never came back", marker)
	}
	o.mu.Lock()
	o.client = c
	o.mu.Unlock()
}

// reconnect drops the subscription and makes a new one (after a broker
// restart); the new one receives the broker's retained messages again.
func (o *observer) reconnect() {
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

// mark is the position of the next message.
func (o *observer) mark() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sync()
	return len(o.msgs)
}

// since returns the messages received from position i on.
func (o *observer) since(i int) []msg {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sync()
	if i > len(o.msgs) {
		return nil
	}
	return append([]msg(nil), o.msgs[i:]...)
}

func (o *observer) wake() <-chan struct{} {
	if o.emb != nil {
		return o.emb.Changed()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// waitMsg waits until a message on topic with payload want (any payload
// when want is "") arrives at or after position from, and returns it.
func (o *observer) waitMsg(from int, topic, want string, d time.Duration) msg {
	o.t.Helper()
	var got msg
	waitUntil(o.t, d, fmt.Sprintf("%s = %q on the broker", topic, want), o.wake, func() (bool, string) {
		last := ""
		for _, m := range o.since(from) {
			if m.Topic != topic {
				continue
			}
			if want == "" || m.Payload == want {
				got = m
				return true, ""
			}
			last = m.Payload
		}
		return false, fmt.Sprintf("last payload since the mark %q", last)
	})
	return got
}

// retained is what a subscriber that connects now receives as retained:
// topic → payload.
func (o *observer) retained() map[string]string {
	o.t.Helper()
	if o.emb == nil {
		return subscribeRetained(o.t, o.url)
	}
	out := map[string]string{}
	topics := map[string]bool{}
	for _, m := range o.since(0) {
		topics[m.Topic] = true
	}
	for topic := range topics {
		if p, ok := o.emb.Retained(topic); ok && len(p) > 0 {
			out[topic] = string(p)
		}
	}
	return out
}

// subscribeRetained subscribes to '#', then publishes a marker on the same
// connection; the broker handles the two in order, so once the marker is
// back every retained message has arrived.
func subscribeRetained(t testing.TB, url string) map[string]string {
	t.Helper()
	c := dial(t, url)
	defer c.Disconnect(0)
	marker := fmt.Sprintf("e2e/marker/%d", clientSeq.Add(1))
	var mu sync.Mutex
	got := map[string]string{}
	done := make(chan struct{})
	var once sync.Once
	tok := c.Subscribe("#", 1, func(_ mqtt.Client, m mqtt.Message) {
		if m.Topic() == marker {
			once.Do(func() { close(done) })
			return
		}
		if !m.Retained() || strings.HasPrefix(m.Topic(), "e2e/") {
			return
		}
		mu.Lock()
		got[m.Topic()] = string(m.Payload())
		mu.Unlock()
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("retained snapshot subscribe: %v", tok.Error())
	}
	if tok := c.Publish(marker, 1, false, "x"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("retained snapshot marker: %v", tok.Error())
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("retained snapshot: marker %s never came back", marker)
	}
	mu.Lock()
	defer mu.Unlock()
	return got
}

// waitUntil waits until cond holds, for at most d: it re-checks whenever
// wake's channel closes (a message, a log line) and every 20 ms for
// conditions without a notification (files, the socket).
func waitUntil(t testing.TB, d time.Duration, what string, wake func() <-chan struct{}, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var ch <-chan struct{}
		if wake != nil {
			ch = wake()
		}
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			if ok, why = cond(); ok {
				return
			}
			t.Fatalf("waited %v for %s: %s", d, what, why)
		}
	}
}
