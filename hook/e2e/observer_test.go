package e2e

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

var observerSeq atomic.Int64

// dialObserver connects a test client (MQTT 3.1.1) to b.
func dialObserver(t *testing.T, b *testBroker) mqtt.Client {
	t.Helper()
	o := mqtt.NewClientOptions().AddBroker(b.URL()).
		SetClientID(fmt.Sprintf("e2e-observer-%d-%d", time.Now().UnixNano()%1e6, observerSeq.Add(1))).
		SetCleanSession(true).SetAutoReconnect(false).SetConnectTimeout(5 * time.Second).
		SetProtocolVersion(4)
	if b.users != nil {
		o.SetUsername(testUser).SetPassword(testPass)
	}
	c := mqtt.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("observer connect %s: %v", b.URL(), tok.Error())
	}
	return c
}

// Retained returns what a subscriber that connects now receives as
// retained on the cabinet's topics: topic → payload. It subscribes to '#',
// then publishes a marker on the same connection; the broker handles the
// two in order, so once the marker is back every retained message has
// arrived.
func (b *testBroker) Retained(t *testing.T) map[string]string {
	t.Helper()
	c := dialObserver(t, b)
	defer c.Disconnect(0)
	marker := fmt.Sprintf("e2e/marker/%d", observerSeq.Add(1))
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
		t.Fatalf("observer subscribe: %v", tok.Error())
	}
	if tok := c.Publish(marker, 1, false, "x"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("observer marker: %v", tok.Error())
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
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
