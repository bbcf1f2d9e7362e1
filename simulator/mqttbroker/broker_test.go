package mqttbroker_test

import (
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

var clientSeq atomic.Int64

func start(t *testing.T) *mqttbroker.Broker {
	t.Helper()
	b, err := mqttbroker.Start(mqttbroker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func dial(t *testing.T, b *mqttbroker.Broker, will func(*mqtt.ClientOptions)) mqtt.Client {
	t.Helper()
	o := mqtt.NewClientOptions().AddBroker(b.URL()).SetClientID(fmt.Sprintf("broker-test-%d", clientSeq.Add(1))).
		SetCleanSession(true).SetAutoReconnect(false).SetProtocolVersion(4)
	if will != nil {
		will(o)
	}
	c := mqtt.NewClient(o)
	wait(t, "connect", c.Connect())
	t.Cleanup(func() { c.Disconnect(0) })
	return c
}

// wait waits for a client's operation: paho ends every token, with an error
// when the connection goes.
func wait(t *testing.T, what string, tok mqtt.Token) {
	t.Helper()
	if err := done(tok); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// done is wait for the test's other goroutines, which may not stop the test.
func done(tok mqtt.Token) error {
	tok.Wait()
	return tok.Error()
}

// received collects what a subscription delivers: topic → payload.
type received struct {
	mu      sync.Mutex
	got     map[string]string
	changed chan struct{}
}

func newReceived() *received {
	return &received{got: map[string]string{}, changed: make(chan struct{})}
}

func (r *received) handle(_ mqtt.Client, m mqtt.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[m.Topic()] = string(m.Payload())
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *received) wake() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

func (r *received) has(want map[string]string) (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for topic, p := range want {
		if r.got[topic] != p {
			return false, fmt.Sprintf("%s = %q, want %q (%d topics received)", topic, r.got[topic], p, len(r.got))
		}
	}
	return true, ""
}

// TestRetainedWhileSubscribing: clients publish retained messages while
// others subscribe to wildcard filters and the test reads the store: under
// -race, mochi's unlocked scan of its store (retainGate) would be reported.
// Afterwards every last retained message is in the store and reaches a new
// subscriber.
func TestRetainedWhileSubscribing(t *testing.T) {
	b := start(t)
	const publishers, topics, rounds = 4, 5, 30
	want := map[string]string{}
	for p := range publishers {
		for i := range topics {
			want[fmt.Sprintf("cab/%d/%d/state", p, i)] = fmt.Sprintf("last-%d-%d", p, i)
		}
	}

	stop := make(chan struct{})
	var readers sync.WaitGroup
	for s := range 3 {
		c := dial(t, b, nil)
		readers.Go(func() {
			filter := []string{"#", "cab/+/+/state", "cab/#"}[s]
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := done(c.Subscribe(filter, 1, func(mqtt.Client, mqtt.Message) {})); err != nil {
					t.Errorf("subscribe %s: %v", filter, err)
					return
				}
				if err := done(c.Unsubscribe(filter)); err != nil {
					t.Errorf("unsubscribe %s: %v", filter, err)
					return
				}
			}
		})
	}
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			b.RetainedAll()
			b.Retained("cab/0/0/state")
		}
	})

	var writers sync.WaitGroup
	for p := range publishers {
		c := dial(t, b, nil)
		writers.Go(func() {
			for r := range rounds {
				for i := range topics {
					topic := fmt.Sprintf("cab/%d/%d/state", p, i)
					payload := fmt.Sprintf("%d", r)
					if r == rounds-1 {
						payload = want[topic]
					} else if r%7 == 3 {
						payload = "" // clears it
					}
					if err := done(c.Publish(topic, 1, true, payload)); err != nil {
						t.Errorf("publish %s: %v", topic, err)
						return
					}
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()

	all := b.RetainedAll()
	for topic, p := range want {
		if string(all[topic]) != p {
			t.Errorf("RetainedAll()[%s] = %q, want %q", topic, all[topic], p)
		}
	}
	recorded := map[string]string{}
	for _, m := range b.Messages() {
		if m.Retain {
			recorded[m.Topic] = string(m.Payload)
		}
	}
	for topic, p := range want {
		if recorded[topic] != p {
			t.Errorf("last recorded %s = %q, want %q", topic, recorded[topic], p)
		}
	}
	r := newReceived()
	wait(t, "subscribe", dial(t, b, nil).Subscribe("cab/#", 1, r.handle))
	cabinettest.Await(t, "the retained messages on a new subscription", r.wake, func() (bool, string) { return r.has(want) })
}

// TestRetainedWill: a client's retained will is published and kept when the
// client goes, through the same gate as a publish.
func TestRetainedWill(t *testing.T) {
	b := start(t)
	var conn net.Conn
	c := dial(t, b, func(o *mqtt.ClientOptions) {
		o.SetBinaryWill("cab/availability", []byte("offline"), 1, true)
		o.SetCustomOpenConnectionFn(func(u *url.URL, _ mqtt.ClientOptions) (net.Conn, error) {
			var err error
			conn, err = net.Dial("tcp", u.Host)
			return conn, err
		})
	})
	wait(t, "online", c.Publish("cab/availability", 1, true, "online"))
	r := newReceived()
	wait(t, "subscribe", dial(t, b, nil).Subscribe("cab/+", 1, r.handle))
	cabinettest.Await(t, "online", r.wake, func() (bool, string) { return r.has(map[string]string{"cab/availability": "online"}) })

	conn.Close() // gone without a DISCONNECT: the will fires
	cabinettest.Await(t, "the will", r.wake, func() (bool, string) { return r.has(map[string]string{"cab/availability": "offline"}) })
	if p, ok := b.Retained("cab/availability"); !ok || string(p) != "offline" {
		t.Errorf("Retained = %q, %v; want offline", p, ok)
	}
}

// TestSysRefused: $SYS is not for reading (retainGate); everything else is.
func TestSysRefused(t *testing.T) {
	b := start(t)
	c := dial(t, b, nil)
	tok := c.Subscribe("$SYS/#", 1, func(mqtt.Client, mqtt.Message) {})
	tok.Wait()
	st, _ := tok.(*mqtt.SubscribeToken)
	if res := st.Result()["$SYS/#"]; res != 0x80 {
		t.Errorf("SUBACK for $SYS/# = %#x, want 0x80 (refused)", res)
	}
	tok = c.Subscribe("#", 1, func(mqtt.Client, mqtt.Message) {})
	tok.Wait()
	if res := tok.(*mqtt.SubscribeToken).Result()["#"]; res != 1 {
		t.Errorf("SUBACK for # = %#x, want 1", res)
	}
}
