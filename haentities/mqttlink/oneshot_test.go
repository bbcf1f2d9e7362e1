package mqttlink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// hookBudget is the hook's whole MQTT budget in these tests.
const hookBudget = 150 * time.Millisecond

// budgetSlack is what scheduling may add to a budget on a loaded CI machine;
// the failure it guards against (paho's default 30 s connect timeout, or its
// second attempt as MQTT 3.1) is at least another full budget.
const budgetSlack = 100 * time.Millisecond

func hookMessages() []haentities.Message {
	at := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	return []haentities.Message{
		{Topic: "homeassistant/sensor/batocera_t1/now_playing/config", Payload: []byte(`{"name":"Now playing"}`), QoS: 1, Retain: true, Kind: haentities.KindDiscovery, Created: at},
		{Topic: "batocera/t1/now_playing", Payload: []byte("Tom & Jerry"), QoS: 1, Retain: true, Kind: haentities.KindState, Created: at},
		{Topic: "batocera/t1/game_session", Payload: []byte(`{"event_type":"session_end","session_id":"s1"}`), QoS: 1, Kind: haentities.KindSessionEnd, Key: "s1", Created: at},
		{Topic: "batocera/t1/cpu_temperature", Payload: []byte("51.5"), QoS: 0, Kind: haentities.KindState, Created: at},
		{Topic: "batocera/t1/status", Payload: []byte("online"), QoS: 1, Retain: true, Kind: haentities.KindAvailability, Created: at},
	}
}

// ours keeps the records of the topics our tests publish.
func ours(recs []record) []record {
	var out []record
	for _, r := range recs {
		if strings.HasPrefix(r.Topic, "batocera/") || strings.HasPrefix(r.Topic, "homeassistant/") {
			out = append(out, r)
		}
	}
	return out
}

func TestPublishDeliversInOrderWithFlags(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		msgs := hookMessages()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, err := Publish(ctx, Options{Broker: b.URL(), ClientID: "cabinet_t1_h4242"}, msgs)
		if err != nil || n != len(msgs) {
			t.Fatalf("Publish = %d, %v; want %d, nil", n, err, len(msgs))
		}
		recs := waitRecords(t, b, "all messages", func(r []record) bool { return len(ours(r)) >= len(msgs) })
		got := ours(recs)
		for i, m := range msgs {
			want := record{Topic: m.Topic, Payload: string(m.Payload), Retain: m.Retain, QoS: m.QoS}
			g := got[i]
			if g.Topic != want.Topic || g.Payload != want.Payload || g.Retain != want.Retain || g.QoS != want.QoS {
				t.Errorf("message %d: got %v, want %v", i, g, want)
			}
			if _, isEmbedded := b.(*embedded); isEmbedded && g.ClientID != "cabinet_t1_h4242" {
				t.Errorf("message %d: client id %q, want cabinet_t1_h4242", i, g.ClientID)
			}
		}
		if len(got) != len(msgs) {
			t.Errorf("broker saw %d messages, want %d: %v", len(got), len(msgs), got)
		}
		if p, ok := b.Retained(t, "batocera/t1/now_playing"); !ok || p != "Tom & Jerry" {
			t.Errorf("retained now_playing = %q, %v; want %q", p, ok, "Tom & Jerry")
		}
	})
}

func TestPublishRefusedFailsAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hookBudget)
	defer cancel()
	n, err := Publish(ctx, Options{Broker: "tcp://" + closedPort(t), ClientID: "cabinet_t1_h1"}, hookMessages())
	if n != 0 || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Publish = %d, %v; want 0 and a connection refused error", n, err)
	}
	if ctx.Err() != nil {
		t.Errorf("a refused connection used the whole %s budget: %v", hookBudget, err)
	}
	for _, want := range []string{"connection refused", "cabinet.mqtt.broker"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestPublishWrongCredentials(t *testing.T) {
	const pw = "s3cret-Pa55"
	users := map[string]string{"cabinet": pw}
	eachBroker(t, users, func(t *testing.T, b testBroker) {
		const id = "cabinet_0f3c9a5e7b21_h1234567"
		tests := []struct {
			name, user, pass, clientID string
			want                       string // "" means success
		}{
			{"wrong password", "cabinet", pw + "-typo", id, `broker refused the credentials for user "cabinet": check cabinet.mqtt.username/password`},
			{"unknown user", "someone", pw, id, `broker refused the credentials for user "someone": check cabinet.mqtt.username/password`},
			{"anonymous", "", "", id, "broker refused an anonymous connection: set cabinet.mqtt.username/password"},
			// Had paho retried as MQTT 3.1 (its default when the version
			// is not pinned), Mosquitto would answer "identifier rejected".
			{"wrong password, empty client id", "cabinet", "typo", "", `broker refused the credentials for user "cabinet": check cabinet.mqtt.username/password`},
			{"right", "cabinet", pw, id, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				opts := Options{Broker: b.URL(), Username: tc.user, Password: tc.pass, ClientID: tc.clientID}
				n, err := Publish(ctx, opts, hookMessages()[:1])
				if tc.want == "" {
					if err != nil || n != 1 {
						t.Fatalf("Publish = %d, %v; want 1, nil", n, err)
					}
					return
				}
				var ce *CredentialsError
				if n != 0 || !errors.As(err, &ce) {
					t.Fatalf("Publish = %d, %v; want 0 and a *CredentialsError", n, err)
				}
				if !strings.HasSuffix(err.Error(), ": "+tc.want) {
					t.Errorf("error = %q, want it to end with %q", err, tc.want)
				}
				if tc.pass != "" && strings.Contains(err.Error(), tc.pass) {
					t.Errorf("error %q contains the password", err)
				}
				if s := fmt.Sprintf("%v %+v %#v %s", opts, opts, opts, opts); strings.Contains(s, pw) {
					t.Errorf("formatting Options shows the password: %s", s)
				}
			})
		}
	})
}

func TestPublishSilentBrokerRespectsBudget(t *testing.T) {
	silent, attempts := silentBroker(t)
	tests := []struct {
		name, addr string
	}{
		{"accepts TCP, never answers CONNACK", silent},
		{"answers CONNACK, never PUBACK", connackOnlyBroker(t)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hookBudget)
			defer cancel()
			start := time.Now()
			n, err := Publish(ctx, Options{Broker: tc.addr, ClientID: "cabinet_t1_h2"}, hookMessages())
			took := time.Since(start)
			if n != 0 || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Publish = %d, %v; want 0 and a deadline error", n, err)
			}
			if took > hookBudget+budgetSlack {
				t.Errorf("Publish took %s with a %s budget", took, hookBudget)
			}
			t.Logf("returned after %s: %v", took, err)
		})
	}
	// paho retries a failed handshake as MQTT 3.1 unless the version is
	// pinned; that second attempt would double the wait.
	if got := attempts.Load(); got != 1 {
		t.Errorf("silent broker saw %d connection attempts, want 1", got)
	}
}

func TestPublishStopsAtAnInvalidMessage(t *testing.T) {
	b := startEmbedded(t, nil)
	msgs := hookMessages()
	msgs[2].Topic = "batocera/t1/+/bad"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := Publish(ctx, Options{Broker: b.URL(), ClientID: "cabinet_t1_h3"}, msgs)
	if n != 2 || err == nil || !strings.Contains(err.Error(), "batocera/t1/+/bad") {
		t.Fatalf("Publish = %d, %v; want 2 and an error naming the topic", n, err)
	}
	recs := waitRecords(t, b, "the first two messages", func(r []record) bool { return len(ours(r)) >= 2 })
	if got := ours(recs); len(got) != 2 || got[1].Topic != msgs[1].Topic {
		t.Errorf("broker saw %v, want the first two messages", got)
	}
}

func TestDialConnPublishTwice(t *testing.T) {
	b := startEmbedded(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, Options{Broker: b.URL(), ClientID: "cabinet_t1_h5"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := hookMessages()
	for _, part := range [][]haentities.Message{msgs[:2], msgs[2:]} {
		if n, err := c.Publish(ctx, part); err != nil || n != len(part) {
			t.Fatalf("Publish = %d, %v; want %d, nil", n, err, len(part))
		}
	}
	c.Close(ctx)
	got := ours(waitRecords(t, b, "all messages", func(r []record) bool { return len(ours(r)) >= len(msgs) }))
	for i := range msgs {
		if got[i].Topic != msgs[i].Topic {
			t.Errorf("message %d: topic %q, want %q", i, got[i].Topic, msgs[i].Topic)
		}
	}
}

func TestPublishOverTLSAndWebsocket(t *testing.T) {
	b := startEmbedded(t, nil)
	caFile, cert := testCA(t)
	tlsAddr := tlsFront(t, b.Addr(), cert)
	wsAddr := wsFront(t, b.Addr())
	tests := []struct {
		name, broker, caFile, wantErr string
	}{
		{"ssl with ca_file", "ssl://" + tlsAddr, caFile, ""},
		{"mqtts with ca_file", "mqtts://" + tlsAddr, caFile, ""},
		{"ssl without ca_file", "ssl://" + tlsAddr, "", "set cabinet.mqtt.ca_file"},
		{"ws", "ws://" + wsAddr + "/mqtt", "", ""},
		{"mqtt scheme", "mqtt://" + b.Addr(), "", ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			msg := haentities.Message{Topic: fmt.Sprintf("batocera/t1/transport%d", i), Payload: []byte(tc.name), QoS: 1, Retain: true}
			n, err := Publish(ctx, Options{Broker: tc.broker, CAFile: tc.caFile, ClientID: "cabinet_t1_h6"}, []haentities.Message{msg})
			if tc.wantErr != "" {
				if n != 0 || err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Publish = %d, %v; want 0 and an error saying %q", n, err, tc.wantErr)
				}
				return
			}
			if n != 1 || err != nil {
				t.Fatalf("Publish = %d, %v; want 1, nil", n, err)
			}
			if p, ok := b.Retained(t, msg.Topic); !ok || p != tc.name {
				t.Errorf("retained %s = %q, %v; want %q", msg.Topic, p, ok, tc.name)
			}
		})
	}
}
