package mqttlink

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

const (
	statusTopic = "batocera/t1/status"
	daemonID    = "cabinet_t1"
)

var (
	online  = record{Topic: statusTopic, Payload: PayloadOnline, Retain: true}
	offline = record{Topic: statusTopic, Payload: PayloadOffline, Retain: true}
)

// linkProbe sees what the link hands to the daemon.
type linkProbe struct {
	connects chan struct{}
	births   chan struct{}
	commands chan command
	delays   atomic.Int32
}

func testLinkConfig(t testing.TB, broker string, p *linkProbe) LinkConfig {
	return LinkConfig{
		Options:           Options{Broker: broker, ClientID: daemonID, ConnectTimeout: 2 * time.Second},
		AvailabilityTopic: statusTopic,
		CommandTopics:     []string{"batocera/t1/+/set"},
		OnConnect:         func(context.Context) { p.connects <- struct{}{} },
		OnBirth:           func(context.Context) { p.births <- struct{}{} },
		OnCommand:         func(topic string, payload []byte, dup bool) { p.commands <- command{topic, payload, dup} },
		BirthDelay:        func() time.Duration { p.delays.Add(1); return 0 },
		Backoff:           func(n int) time.Duration { return min(time.Duration(n)*20*time.Millisecond, 200*time.Millisecond) },
		Log:               cabinettest.Logger(t),
	}
}

// startLink starts a link on broker; mod may change the config first.
func startLink(t testing.TB, broker string, mod func(*LinkConfig)) (*Link, *linkProbe) {
	t.Helper()
	p := &linkProbe{connects: make(chan struct{}, 16), births: make(chan struct{}, 16), commands: make(chan command, 16)}
	cfg := testLinkConfig(t, broker, p)
	if mod != nil {
		mod(&cfg)
	}
	l, err := NewLink(cfg)
	if err != nil {
		t.Fatalf("NewLink: %v", err)
	}
	if err := l.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l.Stop(ctx)
	})
	return l, p
}

// recv waits for one value from ch.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("timed out after %s waiting for %s", cabinettest.Deadline, what)
		panic("unreachable")
	}
}

// waitAfter waits for want at or after index from and returns its index.
func waitAfter(t testing.TB, b testBroker, from int, want record) int {
	t.Helper()
	recs := waitRecords(t, b, want.String(), func(r []record) bool { return indexOf(r, from, want) >= 0 })
	return indexOf(recs, from, want)
}

func TestLinkAnnouncesPublishesAndStops(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		l, p := startLink(t, b.URL(), nil)
		recv(t, p.connects, "OnConnect")
		i := waitAfter(t, b, 0, online)
		if e, ok := b.(*embedded); ok {
			if id := e.Records()[i].ClientID; id != daemonID {
				t.Errorf("online published by %q, want %q", id, daemonID)
			}
		}
		if !l.Connected() {
			t.Errorf("Connected() = false after OnConnect")
		}
		msgs := hookMessages()[:4]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if n, err := l.Publish(ctx, msgs); err != nil || n != len(msgs) {
			t.Fatalf("Publish = %d, %v; want %d, nil", n, err, len(msgs))
		}
		at := i
		for _, m := range msgs {
			at = waitAfter(t, b, at+1, record{Topic: m.Topic, Payload: string(m.Payload), Retain: m.Retain})
		}
		if err := l.Stop(ctx); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		waitAfter(t, b, at+1, offline)
		if got, ok := b.Retained(t, statusTopic); !ok || got != PayloadOffline {
			t.Errorf("retained status after Stop = %q, %v; want offline", got, ok)
		}
		if l.Connected() {
			t.Errorf("Connected() = true after Stop")
		}
		if n, err := l.Publish(ctx, msgs); n != 0 || !errors.Is(err, ErrNotConnected) {
			t.Errorf("Publish after Stop = %d, %v; want 0, ErrNotConnected", n, err)
		}
	})
}

func TestLinkWillMarksOfflineWhenConnectionDies(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		cut := newCutter(t, strings.TrimPrefix(b.URL(), "tcp://"))
		l, p := startLink(t, cut.URL(), nil)
		recv(t, p.connects, "first OnConnect")
		i := waitAfter(t, b, 0, online)

		cut.Cut() // no DISCONNECT reaches the broker: it publishes the will
		j := waitAfter(t, b, i+1, offline)
		if e, ok := b.(*embedded); ok {
			if id := e.Records()[j].ClientID; id != daemonID {
				t.Errorf("offline published for %q, want the link's will (%q)", id, daemonID)
			}
		}
		cabinettest.Await(t, "Connected() = false", nil, func() bool { return !l.Connected() })
		if err := l.LastError(); err == nil {
			t.Errorf("LastError() = nil while the broker is unreachable")
		}

		cut.Resume()
		recv(t, p.connects, "OnConnect after the reconnect")
		waitAfter(t, b, j+1, online)
		if got := l.Reconnects(); got != 1 {
			t.Errorf("Reconnects() = %d, want 1", got)
		}
		if err := l.LastError(); err != nil {
			t.Errorf("LastError() = %v while connected", err)
		}
	})
}

// restartBackoff keeps the link's first reconnect well after the broker's
// shutdown: mochi v2.7.9 disconnects its clients before it closes its
// listener, and its Close never returns if one reconnects in between.
func restartBackoff(n int) time.Duration {
	return min(time.Duration(n)*150*time.Millisecond, time.Second)
}

func TestLinkAnnouncesOnlineAfterBrokerRestart(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		l, p := startLink(t, b.URL(), func(c *LinkConfig) { c.Backoff = restartBackoff })
		recv(t, p.connects, "first OnConnect")
		waitAfter(t, b, 0, online)
		mark := len(b.Records())

		b.Restart(t) // same port, retained messages gone
		recv(t, p.connects, "OnConnect after the restart")
		waitAfter(t, b, mark, online)
		if got, ok := b.Retained(t, statusTopic); !ok || got != PayloadOnline {
			t.Errorf("retained status after restart = %q, %v; want online", got, ok)
		}
		if got := l.Reconnects(); got != 1 {
			t.Errorf("Reconnects() = %d, want 1", got)
		}
	})
}

func TestLinkBirthTriggersReannounce(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		_, p := startLink(t, b.URL(), nil)
		recv(t, p.connects, "OnConnect")
		b.Inject(t, DefaultBirthTopic, "online", false)
		recv(t, p.births, "OnBirth")
		if got := p.delays.Load(); got != 1 {
			t.Errorf("BirthDelay consulted %d times, want 1", got)
		}
	})
}

func TestLinkSubscriptionsSurviveReconnect(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		const cmdTopic = "batocera/t1/screenshot/set"
		// A retained command must never replay on (re)connect.
		b.Inject(t, cmdTopic, "stale", true)
		cut := newCutter(t, strings.TrimPrefix(b.URL(), "tcp://"))
		_, p := startLink(t, cut.URL(), nil)
		for round := 1; round <= 2; round++ {
			recv(t, p.connects, "OnConnect")
			want := command{topic: cmdTopic, payload: []byte("PRESS" + string(rune('0'+round)))}
			b.Inject(t, want.topic, string(want.payload), false)
			if got := recv(t, p.commands, "command"); got.topic != want.topic || string(got.payload) != string(want.payload) || got.dup {
				t.Errorf("round %d: command %s %q dup=%v, want %s %q, not a duplicate", round, got.topic, got.payload, got.dup, want.topic, want.payload)
			}
			b.Inject(t, DefaultBirthTopic, "online", false)
			recv(t, p.births, "OnBirth")
			if round == 1 {
				cut.Cut()
				cut.Resume()
			}
		}
	})
}

func TestLinkReconfigureToWrongBrokerAndBack(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		l, p := startLink(t, b.URL(), nil)
		recv(t, p.connects, "first OnConnect")
		i := waitAfter(t, b, 0, online)
		good := Options{Broker: b.URL(), ClientID: daemonID, ConnectTimeout: 2 * time.Second}

		bad := good
		bad.Broker = "tcp://" + closedPort(t)
		if err := l.Reconfigure(bad); err != nil {
			t.Fatalf("Reconfigure(closed port): %v", err)
		}
		j := waitAfter(t, b, i+1, offline) // a clean goodbye to the old broker
		cabinettest.Await(t, "a refused connection in LastError", nil, func() bool {
			err := l.LastError()
			return err != nil && strings.Contains(err.Error(), "connection refused")
		})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if n, err := l.Publish(ctx, hookMessages()); n != 0 || !errors.Is(err, ErrNotConnected) {
			t.Errorf("Publish while down = %d, %v; want 0, ErrNotConnected", n, err)
		}
		if err := l.Reconfigure(Options{Broker: "gopher://x"}); err == nil {
			t.Errorf("Reconfigure(gopher://x) = nil, want an error")
		}

		if err := l.Reconfigure(good); err != nil {
			t.Fatalf("Reconfigure(back): %v", err)
		}
		recv(t, p.connects, "OnConnect after reconfiguring back")
		waitAfter(t, b, j+1, online)
		if !l.Connected() {
			t.Errorf("Connected() = false after reconfiguring back")
		}
		if got := l.Reconnects(); got != 1 {
			t.Errorf("Reconnects() = %d, want 1", got)
		}
	})
}

func TestLinkHookConnectionDoesNotKnockTheDaemonOff(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		l, p := startLink(t, b.URL(), nil)
		recv(t, p.connects, "OnConnect")
		i := waitAfter(t, b, 0, online)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := Publish(ctx, Options{Broker: b.URL(), ClientID: HookClientID("t1", 77)}, hookMessages()[1:2]); err != nil {
			t.Fatalf("hook Publish: %v", err)
		}
		after := haentities.Message{Topic: "batocera/t1/activity", Payload: []byte("menu"), QoS: 1, Retain: true}
		if _, err := l.Publish(ctx, []haentities.Message{after}); err != nil {
			t.Fatalf("link Publish after the hook: %v", err)
		}
		j := waitAfter(t, b, i+1, record{Topic: after.Topic, Payload: "menu", Retain: true})
		if k := indexOf(b.Records()[:j], i+1, offline); k >= 0 {
			t.Errorf("the hook's connection made the broker publish offline")
		}
		if got := l.Reconnects(); got != 0 || !l.Connected() {
			t.Errorf("after the hook: Reconnects() = %d, Connected() = %v; want 0, true", got, l.Connected())
		}
	})
}

func TestLinkReportsWrongCredentials(t *testing.T) {
	eachBroker(t, map[string]string{"cabinet": "right-pw"}, func(t *testing.T, b testBroker) {
		l, _ := startLink(t, b.URL(), func(c *LinkConfig) {
			c.Options.Username, c.Options.Password = "cabinet", "wrong-pw"
		})
		cabinettest.Await(t, "a CredentialsError in LastError", nil, func() bool {
			var ce *CredentialsError
			return errors.As(l.LastError(), &ce)
		})
		if err := l.LastError(); strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("LastError() %q contains the password", err)
		}
	})
}

func TestLinkStopWhileBrokerDownReturnsPromptly(t *testing.T) {
	l, _ := startLink(t, "tcp://"+closedPort(t), nil)
	cabinettest.Await(t, "a connect failure", nil, func() bool { return l.LastError() != nil })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := l.Stop(ctx); err != nil {
		t.Fatalf("Stop = %v, want nil", err)
	}
}

func TestLinkReconfigureAbortsAHangingAttempt(t *testing.T) {
	b := startEmbedded(t, nil)
	silent, attempts := silentBroker(t)
	// ConnectTimeout far beyond cabinettest.Deadline: only aborting the attempt can
	// make the new options apply in time.
	l, p := startLink(t, "tcp://"+silent, func(c *LinkConfig) { c.Options.ConnectTimeout = time.Hour })
	cabinettest.Await(t, "a connection attempt on the silent broker", nil, func() bool { return attempts.Load() > 0 })
	if err := l.Reconfigure(Options{Broker: b.URL(), ClientID: daemonID}); err != nil {
		t.Fatalf("Reconfigure: %v", err)
	}
	recv(t, p.connects, "OnConnect on the new broker")
	waitAfter(t, b, 0, online)
	if got := l.Reconnects(); got != 0 {
		t.Errorf("Reconnects() = %d, want 0 (the first connection)", got)
	}
}
