package mqttlink

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realmosquitto"
)

// mosquitto is a real Mosquitto observed by mosquitto_sub -V 5
// --retain-as-published, the capture the issue validates.
type mosquitto struct {
	b     *realmosquitto.Broker
	creds []string // mosquitto_* flags for a valid user

	mu      sync.Mutex
	recs    []record
	waiters []chan struct{}
	obs     *exec.Cmd
	ready   int // sentinel counter
}

// sentinelTopic marks that the observer is subscribed; not recorded.
const sentinelTopic = "cabinet-test/observer"

func startMosquitto(t testing.TB, users map[string]string) *mosquitto {
	t.Helper()
	peertest.RequirePeer(t, realmosquitto.Available())
	for _, tool := range []string{"mosquitto_sub", "mosquitto_pub"} {
		if _, err := exec.LookPath(tool); err != nil {
			peertest.RequirePeer(t, fmt.Errorf("%s is not installed (Debian: apt-get install mosquitto-clients)", tool))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cabinettest.Deadline)
	defer cancel()
	dir := t.TempDir()
	b, err := realmosquitto.Start(ctx, dir, realmosquitto.Options{Users: users})
	if err != nil {
		t.Fatalf("start mosquitto: %v", err)
	}
	m := &mosquitto{b: b}
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	slices.Sort(names)
	if len(names) > 0 {
		m.creds = []string{"-u", names[0], "-P", users[names[0]]}
	}
	t.Cleanup(func() {
		m.stopObserver()
		b.Close()
		if t.Failed() {
			t.Logf("mosquitto dir: %s", dir)
		}
	})
	m.startObserver(t)
	return m
}

func (m *mosquitto) URL() string { return m.b.URL() }

func (m *mosquitto) args(extra ...string) []string {
	host, port := "127.0.0.1", m.b.Addr()[strings.LastIndex(m.b.Addr(), ":")+1:]
	return append(append([]string{"-h", host, "-p", port}, m.creds...), extra...)
}

// startObserver subscribes mosquitto_sub to everything and waits until it
// sees a retained sentinel, so nothing published afterwards is missed.
func (m *mosquitto) startObserver(t testing.TB) {
	t.Helper()
	cmd := exec.Command("mosquitto_sub", m.args("-V", "5", "--retain-as-published", "-q", "1",
		"-F", "%r %q %t %x", "-t", "#")...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mosquitto_sub: %v", err)
	}
	m.mu.Lock()
	m.obs = cmd
	m.ready++
	want := strconv.Itoa(m.ready)
	m.mu.Unlock()
	go m.read(out)
	m.Inject(t, sentinelTopic, want, true)
	deadline := time.After(cabinettest.Deadline)
	for {
		ch := m.Changed()
		if m.sawSentinel(want) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("mosquitto_sub did not see the sentinel within %s", cabinettest.Deadline)
		}
	}
}

func (m *mosquitto) read(out interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) < 3 {
			continue
		}
		payload := ""
		if len(f) == 4 {
			p, err := hex.DecodeString(f[3])
			if err != nil {
				continue
			}
			payload = string(p)
		}
		q, _ := strconv.Atoi(f[1])
		m.add(record{Topic: f[2], Payload: payload, Retain: f[0] == "1", QoS: byte(q)})
	}
}

func (m *mosquitto) add(r record) {
	m.mu.Lock()
	m.recs = append(m.recs, r)
	ws := m.waiters
	m.waiters = nil
	m.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

func (m *mosquitto) sawSentinel(want string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.recs {
		if r.Topic == sentinelTopic && r.Payload == want {
			return true
		}
	}
	return false
}

func (m *mosquitto) stopObserver() {
	m.mu.Lock()
	cmd := m.obs
	m.obs = nil
	m.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func (m *mosquitto) Restart(t testing.TB) {
	t.Helper()
	m.stopObserver()
	ctx, cancel := context.WithTimeout(context.Background(), cabinettest.Deadline)
	defer cancel()
	if err := m.b.Restart(ctx); err != nil {
		t.Fatalf("restart mosquitto: %v", err)
	}
	m.startObserver(t)
}

func (m *mosquitto) Inject(t testing.TB, topic, payload string, retain bool) {
	t.Helper()
	args := m.args("-q", "1", "-t", topic, "-m", payload)
	if retain {
		args = append(args, "-r")
	}
	ctx, cancel := context.WithTimeout(context.Background(), cabinettest.Deadline)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "mosquitto_pub", args...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub %s: %v: %s", topic, err, out)
	}
}

// Records leaves out the observer's sentinel.
func (m *mosquitto) Records() []record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]record, 0, len(m.recs))
	for _, r := range m.recs {
		if r.Topic != sentinelTopic {
			out = append(out, r)
		}
	}
	return out
}

func (m *mosquitto) Changed() <-chan struct{} {
	ch := make(chan struct{})
	m.mu.Lock()
	m.waiters = append(m.waiters, ch)
	m.mu.Unlock()
	return ch
}

// Retained runs a fresh subscriber: a retained message arrives at once; with
// none it gives up after mosquitto_sub's smallest timeout (1 s).
func (m *mosquitto) Retained(t testing.TB, topic string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cabinettest.Deadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, "mosquitto_sub", m.args("-t", topic, "--retained-only", "-C", "1", "-W", "1", "-F", "%x")...).Output()
	if err != nil && len(out) == 0 {
		return "", false
	}
	p, err := hex.DecodeString(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("mosquitto_sub %s: bad output %q", topic, out)
	}
	return string(p), true
}
