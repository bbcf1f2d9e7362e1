package cabinettest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realmosquitto"
)

// Kind names a broker the tests run against.
type Kind string

const (
	Embedded  Kind = "embedded"  // simulator/mqttbroker, in the test process
	Mosquitto Kind = "mosquitto" // a real Mosquitto without persistence: a restart loses every retained message
	// MosquittoPersist keeps retained messages across a restart, as a home
	// broker usually does.
	MosquittoPersist Kind = "mosquitto-persist"
)

// Test clients (observers, snapshots, captures) log in as this user when
// the broker requires users; the cabinet has its own.
const (
	TestUser = "e2e"
	TestPass = "e2e-observer-pw"
)

// EachBroker runs fn as a parallel subtest per kind (the embedded broker
// and a real Mosquitto when no kinds are given), t itself in parallel with
// the other tests: most of their time is spent waiting. A missing Mosquitto
// skips its subtest, or fails it with CABINET_REQUIRE_PEERS=1. Under -short
// only the embedded broker runs: the real Mosquitto is covered there by
// haentities/mqttlink's tests.
func EachBroker(t *testing.T, fn func(t *testing.T, kind Kind), kinds ...Kind) {
	t.Parallel()
	if len(kinds) == 0 {
		kinds = []Kind{Embedded, Mosquitto}
	}
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			if kind != Embedded {
				Long(t, "the same against a real Mosquitto")
				peertest.RequirePeer(t, realmosquitto.Available())
			}
			fn(t, kind)
		})
	}
}

// BrokerOptions shape a test broker.
type BrokerOptions struct {
	// Users, when set, turns authentication on; the test user is added.
	Users map[string]string
	// Stopped leaves the broker down after it picked its port (Start brings
	// it up on the same port).
	Stopped bool
}

// Broker is the embedded broker or a real Mosquitto on a loopback port that
// stays the same across Stop, Start and Restart. It is stopped when the
// test ends.
type Broker struct {
	Kind  Kind
	users map[string]string
	emb   *mqttbroker.Broker
	mos   *realmosquitto.Broker
	up    bool
}

// StartBroker starts a broker of kind for t.
func StartBroker(t testing.TB, kind Kind, opts BrokerOptions) *Broker {
	t.Helper()
	b := &Broker{Kind: kind}
	if len(opts.Users) > 0 {
		b.users = map[string]string{TestUser: TestPass}
		for u, p := range opts.Users {
			b.users[u] = p
		}
	}
	var err error
	switch kind {
	case Embedded:
		b.emb, err = mqttbroker.Start(mqttbroker.Options{Users: b.users})
	default:
		ctx, cancel := context.WithTimeout(context.Background(), Deadline)
		defer cancel()
		b.mos, err = realmosquitto.Start(ctx, TempDir(t, "mosquitto"), realmosquitto.Options{Users: b.users, Persist: kind == MosquittoPersist})
	}
	if err != nil {
		t.Fatalf("start %s broker: %v", kind, err)
	}
	b.up = true
	t.Cleanup(func() {
		if err := b.stop(); err != nil {
			t.Errorf("stop %s broker: %v", kind, err)
		}
	})
	if opts.Stopped {
		b.Stop(t)
	}
	return b
}

// URL is tcp://127.0.0.1:PORT.
func (b *Broker) URL() string {
	if b.emb != nil {
		return b.emb.URL()
	}
	return b.mos.URL()
}

// Embedded is the in-process broker (its record, its retained store), nil
// for Mosquitto.
func (b *Broker) Embedded() *mqttbroker.Broker { return b.emb }

// Credentials are the test clients' user and password, when the broker
// requires users.
func (b *Broker) Credentials() (user, pass string, ok bool) {
	return TestUser, TestPass, b.users != nil
}

// Up says whether the broker runs (Stop and Start change it).
func (b *Broker) Up() bool { return b.up }

// Stop takes the broker down: its port refuses connections until Start.
func (b *Broker) Stop(t testing.TB) {
	t.Helper()
	if err := b.stop(); err != nil {
		t.Fatalf("stop %s broker: %v", b.Kind, err)
	}
}

func (b *Broker) stop() error {
	if !b.up {
		return nil
	}
	b.up = false
	if b.emb != nil {
		return b.emb.Close()
	}
	return b.mos.Close()
}

// Start brings a stopped broker back on the same port.
func (b *Broker) Start(t testing.TB) {
	t.Helper()
	if !b.up {
		b.Restart(t)
	}
}

// Restart stops the broker and starts it again on the same port: clients
// are dropped (the daemon's will fires on the embedded broker), and what is
// retained survives only with MosquittoPersist.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	var err error
	if b.emb != nil {
		err = b.emb.Restart()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), Deadline)
		defer cancel()
		err = b.mos.Restart(ctx)
	}
	if err != nil {
		t.Fatalf("restart %s broker: %v", b.Kind, err)
	}
	b.up = true
}

// Changed returns a channel closed at the next message the embedded broker
// records; nil (nothing signals) for Mosquitto. It is the wake of WaitFor.
func (b *Broker) Changed() <-chan struct{} {
	if b.emb != nil {
		return b.emb.Changed()
	}
	return nil
}

// Birth plays Home Assistant starting: `online` on homeassistant/status
// (not retained, as HA sends it).
func (b *Broker) Birth(t testing.TB) {
	t.Helper()
	if b.emb != nil {
		if err := b.emb.Publish("homeassistant/status", []byte("online"), false); err != nil {
			t.Fatalf("birth: %v", err)
		}
		return
	}
	c := b.Dial(t)
	defer c.Disconnect(0)
	if tok := c.Publish("homeassistant/status", 1, false, "online"); !tok.WaitTimeout(Deadline) || tok.Error() != nil {
		t.Fatalf("birth: %v", tok.Error())
	}
}

// Clear removes the retained messages on topics (an empty retained
// payload), as if the broker had lost them.
func (b *Broker) Clear(t testing.TB, topics []string) {
	t.Helper()
	c := b.Dial(t)
	defer c.Disconnect(0)
	for _, topic := range topics {
		if tok := c.Publish(topic, 1, true, []byte{}); !tok.WaitTimeout(Deadline) || tok.Error() != nil {
			t.Fatalf("clear %s: %v", topic, tok.Error())
		}
	}
}

var clientSeq atomic.Int64

// Dial connects a test client (MQTT 3.1.1, clean session, no reconnects),
// with the test user's credentials when the broker requires users.
func (b *Broker) Dial(t testing.TB) mqtt.Client {
	t.Helper()
	o := mqtt.NewClientOptions().AddBroker(b.URL()).
		SetClientID(fmt.Sprintf("e2e-test-%d-%d", time.Now().UnixNano()%1e6, clientSeq.Add(1))).
		SetCleanSession(true).SetAutoReconnect(false).SetConnectTimeout(Deadline).
		SetProtocolVersion(4)
	if b.users != nil {
		o.SetUsername(TestUser).SetPassword(TestPass)
	}
	c := mqtt.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(Deadline) || tok.Error() != nil {
		t.Fatalf("test client connect %s: %v", b.URL(), tok.Error())
	}
	return c
}
