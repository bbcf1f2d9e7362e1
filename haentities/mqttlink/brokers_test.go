package mqttlink

import (
	"fmt"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// record is one publish as the broker saw it, retain flag as published.
type record struct {
	Topic    string
	Payload  string
	Retain   bool
	QoS      byte
	ClientID string // embedded broker only
}

func (r record) String() string {
	return fmt.Sprintf("%s=%q(r%v q%d)", r.Topic, r.Payload, r.Retain, r.QoS)
}

// testBroker is what the tests need from a broker, embedded or real.
type testBroker interface {
	URL() string
	Restart(t testing.TB)
	// Inject publishes as another client (Home Assistant's birth, a command).
	Inject(t testing.TB, topic, payload string, retain bool)
	Records() []record
	Changed() <-chan struct{}
	// Retained asks the broker for topic's retained payload now.
	Retained(t testing.TB, topic string) (string, bool)
}

// eachBroker runs fn against the embedded broker and a real Mosquitto.
func eachBroker(t *testing.T, users map[string]string, fn func(t *testing.T, b testBroker)) {
	t.Run("embedded", func(t *testing.T) { fn(t, startEmbedded(t, users)) })
	t.Run("mosquitto", func(t *testing.T) { fn(t, startMosquitto(t, users)) })
}

type embedded struct{ *mqttbroker.Broker }

func startEmbedded(t testing.TB, users map[string]string) *embedded {
	t.Helper()
	b, err := mqttbroker.Start(mqttbroker.Options{Users: users})
	if err != nil {
		t.Fatalf("start embedded broker: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return &embedded{b}
}

// Restart is bounded: mochi v2.7.9's Close waits forever for a client that
// connects while it shuts down (see restartBackoff), and a clear failure
// beats a test binary killed by its 10-minute timeout.
func (e *embedded) Restart(t testing.TB) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.Broker.Restart() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("restart embedded broker: %v", err)
		}
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("embedded broker restart hung for %s (mochi Close waits for a client that connected during shutdown)", cabinettest.Deadline)
	}
}

func (e *embedded) Inject(t testing.TB, topic, payload string, retain bool) {
	t.Helper()
	if err := e.Broker.Publish(topic, []byte(payload), retain); err != nil {
		t.Fatalf("inject %s: %v", topic, err)
	}
}

func (e *embedded) Records() []record {
	var out []record
	for _, m := range e.Broker.Messages() {
		out = append(out, record{Topic: m.Topic, Payload: string(m.Payload), Retain: m.Retain, QoS: m.QoS, ClientID: m.ClientID})
	}
	return out
}

func (e *embedded) Retained(_ testing.TB, topic string) (string, bool) {
	p, ok := e.Broker.Retained(topic)
	return string(p), ok
}

// waitRecords waits until cond holds for the broker's records.
func waitRecords(t testing.TB, b testBroker, what string, cond func([]record) bool) []record {
	t.Helper()
	var recs []record
	cabinettest.Await(t, what, b.Changed, func() (bool, string) {
		recs = b.Records()
		return cond(recs), fmt.Sprintf("broker saw: %v", recs)
	})
	return recs
}

// indexOf is the index of the first record at or after from matching want
// (topic, payload, retain), or -1.
func indexOf(recs []record, from int, want record) int {
	for i := max(from, 0); i < len(recs); i++ {
		r := recs[i]
		if r.Topic == want.Topic && r.Payload == want.Payload && r.Retain == want.Retain {
			return i
		}
	}
	return -1
}
