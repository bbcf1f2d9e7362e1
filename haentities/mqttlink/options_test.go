package mqttlink

import (
	"fmt"
	"strings"
	"testing"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestParseBroker(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "tcp://ha.lan:1883", want: "tcp://ha.lan:1883"},
		{in: "tcp://ha.lan", want: "tcp://ha.lan:1883"},
		{in: "  mqtt://ha.lan  ", want: "tcp://ha.lan:1883"},
		{in: "MQTT://10.0.0.2:1884/", want: "tcp://10.0.0.2:1884"},
		{in: "ha.lan", want: "tcp://ha.lan:1883"},
		{in: "ha.lan:1999", want: "tcp://ha.lan:1999"},
		{in: "ssl://ha.lan", want: "ssl://ha.lan:8883"},
		{in: "tls://ha.lan:8884", want: "ssl://ha.lan:8884"},
		{in: "mqtts://ha.lan", want: "ssl://ha.lan:8883"},
		{in: "tcp://[::1]", want: "tcp://[::1]:1883"},
		{in: "ws://ha.lan:9001/mqtt", want: "ws://ha.lan:9001/mqtt"},
		{in: "wss://ha.lan/mqtt", want: "wss://ha.lan/mqtt"},
		{in: "", wantErr: "cabinet.mqtt.broker is empty"},
		{in: "http://ha.lan", wantErr: `unsupported scheme "http"`},
		{in: "tcp://", wantErr: "has no host"},
		{in: "tcp://ha.lan:0", wantErr: "is not 1-65535"},
		{in: "tcp://ha.lan:99999", wantErr: "is not 1-65535"},
		{in: "tcp://ha.lan:", wantErr: "empty port"},
		{in: "tcp://ha.lan:1883/path", wantErr: "has no path or query"},
		{in: "tcp://user:hunter2@ha.lan", wantErr: "must not carry credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			u, err := parseBroker(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseBroker(%q) = %v, %v; want error containing %q", tc.in, u, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error %q shows the password", err)
				}
				return
			}
			if err != nil || u.String() != tc.want {
				t.Fatalf("parseBroker(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
			}
		})
	}
}

func TestClientIDs(t *testing.T) {
	if got, want := DaemonClientID("0f3c9a"), "cabinet_0f3c9a"; got != want {
		t.Errorf("DaemonClientID = %q, want %q", got, want)
	}
	if got, want := HookClientID("0f3c9a", 4242), "cabinet_0f3c9a_h4242"; got != want {
		t.Errorf("HookClientID = %q, want %q", got, want)
	}
}

func TestPrepareChecksCAFile(t *testing.T) {
	caFile, _ := testCA(t)
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"tls with ca", Options{Broker: "ssl://ha.lan", CAFile: caFile}, ""},
		{"tls without ca", Options{Broker: "ssl://ha.lan"}, ""},
		{"ca on plain tcp", Options{Broker: "tcp://ha.lan", CAFile: caFile}, "is not a TLS URL"},
		{"missing ca", Options{Broker: "ssl://ha.lan", CAFile: caFile + ".missing"}, "read cabinet.mqtt.ca_file"},
		{"not pem", Options{Broker: "ssl://ha.lan", CAFile: "options_test.go"}, "holds no PEM certificate"},
		{"bad will", Options{Broker: "tcp://ha.lan", Will: &Will{Topic: "a/#"}}, "last will topic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.opts.prepare()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("prepare = %v, want nil", err)
				}
				if p.tls == nil || (tc.opts.CAFile != "") != (p.tls.RootCAs != nil) {
					t.Errorf("tls config = %+v, want RootCAs set only with a CA file", p.tls)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("prepare = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestOptionsFormattingHidesPassword(t *testing.T) {
	o := Options{Broker: "tcp://ha.lan", Username: "cabinet", Password: "hunter2", ClientID: "cabinet_t1"}
	for _, s := range []string{fmt.Sprint(o), fmt.Sprintf("%v %+v %#v %s", o, o, o, &o), o.String()} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("formatted options show the password: %s", s)
		}
		if !strings.Contains(s, "cabinet_t1") {
			t.Errorf("formatted options lost the client id: %s", s)
		}
	}
}

func TestDefaultBackoffIsCappedWithJitter(t *testing.T) {
	for n := 1; n <= 40; n++ {
		full := min(60_000_000_000, 500_000_000<<min(n-1, 20))
		for range 20 {
			d := DefaultBackoff(n)
			if int64(d) < int64(full)/2 || int64(d) > int64(full) {
				t.Fatalf("DefaultBackoff(%d) = %s, want within [%s, %s]", n, d, fmt.Sprint(full/2), fmt.Sprint(full))
			}
		}
	}
}

// fakeMessage is an incoming publish for onMessage.
type fakeMessage struct {
	topic, payload string
	retained, dup  bool
}

func (m fakeMessage) Duplicate() bool   { return m.dup }
func (m fakeMessage) Qos() byte         { return 1 }
func (m fakeMessage) Retained() bool    { return m.retained }
func (m fakeMessage) Topic() string     { return m.topic }
func (m fakeMessage) MessageID() uint16 { return 1 }
func (m fakeMessage) Payload() []byte   { return []byte(m.payload) }
func (m fakeMessage) Ack()              {}

var _ mqtt.Message = fakeMessage{}

func TestOnMessageRouting(t *testing.T) {
	tests := []struct {
		name                   string
		msg                    fakeMessage
		wantBirth, wantCommand bool
	}{
		{"birth online", fakeMessage{topic: DefaultBirthTopic, payload: "online"}, true, false},
		{"birth online retained", fakeMessage{topic: DefaultBirthTopic, payload: "online", retained: true}, true, false},
		{"will of HA", fakeMessage{topic: DefaultBirthTopic, payload: "offline"}, false, false},
		{"birth wrong case", fakeMessage{topic: DefaultBirthTopic, payload: "Online"}, false, false},
		{"command", fakeMessage{topic: "batocera/t1/pause/set", payload: "PRESS"}, false, true},
		{"retained command", fakeMessage{topic: "batocera/t1/pause/set", payload: "PRESS", retained: true}, false, false},
		{"redelivered command", fakeMessage{topic: "batocera/t1/extra_time/set", payload: "PRESS", dup: true}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLink(LinkConfig{Options: Options{Broker: "tcp://ha.lan"}, AvailabilityTopic: statusTopic,
				Log: cabinettest.Logger(t)})
			if err != nil {
				t.Fatal(err)
			}
			l.onMessage(nil, tc.msg)
			if got := len(l.births) == 1; got != tc.wantBirth {
				t.Errorf("birth pending = %v, want %v", got, tc.wantBirth)
			}
			if got := len(l.commands) == 1; got != tc.wantCommand {
				t.Errorf("command queued = %v, want %v", got, tc.wantCommand)
			}
			if tc.wantCommand {
				// The DUP flag reaches OnCommand: a redelivered press is told apart.
				if c := <-l.commands; c.topic != tc.msg.topic || string(c.payload) != tc.msg.payload || c.dup != tc.msg.dup {
					t.Errorf("queued %s %q dup=%v, want %s %q dup=%v", c.topic, c.payload, c.dup, tc.msg.topic, tc.msg.payload, tc.msg.dup)
				}
			}
		})
	}
}

func TestNewLinkRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  LinkConfig
		want string
	}{
		{"no broker", LinkConfig{AvailabilityTopic: statusTopic}, "cabinet.mqtt.broker is empty"},
		{"no availability topic", LinkConfig{Options: Options{Broker: "tcp://ha.lan"}}, "availability topic"},
		{"wildcard availability", LinkConfig{Options: Options{Broker: "tcp://ha.lan"}, AvailabilityTopic: "a/+"}, "availability topic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewLink(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewLink = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func FuzzParseBroker(f *testing.F) {
	for _, s := range []string{"tcp://ha.lan:1883", "ha.lan", "ssl://[::1]", "ws://h/p?q", "tcp://u:p@h", "tcp://h:", "%zz", "tcp://h:1883/"} {
		f.Add(s, "mystring")
	}
	f.Fuzz(func(t *testing.T, raw, pw string) {
		u, err := parseBroker(raw)
		if err == nil {
			again, err2 := parseBroker(u.String())
			if err2 != nil || again.String() != u.String() {
				t.Fatalf("parseBroker(%q) = %s, but that parses to %v, %v", raw, u, again, err2)
			}
			switch u.Scheme {
			case "tcp", "ssl", "ws", "wss":
			default:
				t.Fatalf("parseBroker(%q) gave scheme %q", raw, u.Scheme)
			}
		}
		// A password inside the URL never shows in the error. Passwords are
		// kept to letters that %q escapes (\x00, \u2028) cannot spell.
		if len(pw) < 6 || strings.Trim(pw, "ghijklmnopqrstvwyzGHIJKLMNOPQRSTVWYZ") != "" {
			return
		}
		withPW := "tcp://user:" + pw + "@" + raw
		if _, err := parseBroker(withPW); err != nil && strings.Contains(err.Error(), pw) && !strings.Contains(raw, pw) {
			t.Fatalf("parseBroker(%q) error shows the password: %v", withPW, err)
		}
		if s := (Options{Broker: withPW, Password: pw}).String(); strings.Contains(s, pw) && !strings.Contains(raw, pw) {
			t.Fatalf("Options.String shows the password: %s", s)
		}
	})
}
