package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
	"github.com/batocera-cabinet/cabinet/simulator/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/realmosquitto"
)

// brokerKind names a broker the broker-related tests run against.
type brokerKind string

const (
	embedded  brokerKind = "embedded"
	mosquitto brokerKind = "mosquitto" // no persistence: a restart loses every retained message
	// mosquittoPersist keeps retained messages across a restart, as a home
	// broker usually does.
	mosquittoPersist brokerKind = "mosquitto-persist"
)

// eachBroker runs fn as a parallel subtest per broker: the embedded one and
// a real Mosquitto (without persistence). A missing Mosquitto skips its
// subtest, or fails it with CABINET_REQUIRE_PEERS=1.
func eachBroker(t *testing.T, fn func(t *testing.T, kind brokerKind)) {
	eachBrokerOf(t, []brokerKind{embedded, mosquitto}, fn)
}

func eachBrokerOf(t *testing.T, kinds []brokerKind, fn func(t *testing.T, kind brokerKind)) {
	t.Parallel()
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			if kind != embedded {
				peertest.RequirePeer(t, realmosquitto.Available())
			}
			fn(t, kind)
		})
	}
}

// testBroker is the embedded broker or a real Mosquitto on a loopback port
// that stays the same across Restart.
type testBroker struct {
	kind brokerKind
	emb  *mqttbroker.Broker
	mos  *realmosquitto.Broker
	// subscribe makes the rig's observer a real subscriber on the
	// embedded broker too (see observer).
	subscribe bool
}

func startBroker(t testing.TB, kind brokerKind) *testBroker {
	t.Helper()
	b := &testBroker{kind: kind}
	var err error
	switch kind {
	case embedded:
		b.emb, err = mqttbroker.Start(mqttbroker.Options{})
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		b.mos, err = realmosquitto.Start(ctx, tempDir(t, "mosquitto"), realmosquitto.Options{Persist: kind == mosquittoPersist})
	}
	if err != nil {
		t.Fatalf("start %s broker: %v", kind, err)
	}
	t.Cleanup(func() { b.close() })
	return b
}

// URL is tcp://127.0.0.1:PORT.
func (b *testBroker) URL() string {
	if b.emb != nil {
		return b.emb.URL()
	}
	return b.mos.URL()
}

func (b *testBroker) close() {
	if b.emb != nil {
		b.emb.Close()
	} else {
		b.mos.Close()
	}
}

// Restart stops the broker and starts it again on the same port (clients
// are dropped; the daemon's will fires on the embedded broker).
func (b *testBroker) Restart(t testing.TB) {
	t.Helper()
	var err error
	if b.emb != nil {
		err = b.emb.Restart()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		err = b.mos.Restart(ctx)
	}
	if err != nil {
		t.Fatalf("restart %s broker: %v", b.kind, err)
	}
}

// Stop takes the broker down: its port refuses connections until Start.
func (b *testBroker) Stop(t testing.TB) {
	t.Helper()
	if b.emb != nil {
		if err := b.emb.Close(); err != nil {
			t.Fatalf("stop embedded broker: %v", err)
		}
		return
	}
	b.mos.Close()
}

// Start brings a stopped broker back on the same port.
func (b *testBroker) Start(t testing.TB) { t.Helper(); b.Restart(t) }

// Birth plays Home Assistant starting: `online` on homeassistant/status
// (not retained, as HA sends it).
func (b *testBroker) Birth(t testing.TB) {
	t.Helper()
	if b.emb != nil {
		if err := b.emb.Publish("homeassistant/status", []byte("online"), false); err != nil {
			t.Fatalf("birth: %v", err)
		}
		return
	}
	c := dial(t, b.URL())
	defer c.Disconnect(0)
	if tok := c.Publish("homeassistant/status", 1, false, "online"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("birth: %v", tok.Error())
	}
}

// Clear removes the retained messages on topics (an empty retained
// payload), as if the broker had lost them.
func (b *testBroker) Clear(t testing.TB, topics []string) {
	t.Helper()
	c := dial(t, b.URL())
	defer c.Disconnect(0)
	for _, topic := range topics {
		if tok := c.Publish(topic, 1, true, []byte{}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("clear %s: %v", topic, tok.Error())
		}
	}
}

var clientSeq atomic.Int64

// dial connects a test client (MQTT 3.1.1).
func dial(t testing.TB, url string) mqtt.Client {
	t.Helper()
	o := mqtt.NewClientOptions().AddBroker(url).
		SetClientID(fmt.Sprintf("e2e-test-%d-%d", time.Now().UnixNano()%1e6, clientSeq.Add(1))).
		SetCleanSession(true).SetAutoReconnect(false).SetConnectTimeout(5 * time.Second).
		SetProtocolVersion(4)
	c := mqtt.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("test client connect %s: %v", url, tok.Error())
	}
	return c
}
